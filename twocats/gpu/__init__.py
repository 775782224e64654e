"""The attacker's hardware: TwoCats and Argon2id fills on a GPU, many guesses at once.

This optional package holds CUDA kernels written with numba's CUDA target (the ``numba-cuda``
package, the ``gpu`` extra).  The password path never imports it: ``import twocats`` and the command
line know nothing of it.  Both kernels are bit-exact with the package's own derivations:

* :mod:`twocats.gpu.twocats_fill`: the 2015 TwoCats garlic loop of many guesses (every hash type,
  lanes 1-16, multiplies 0-8), one guess per thread block with one thread per lane of each region;
  the host hashes the header into the first key and hashes the client output into the final one.
* :mod:`twocats.gpu.argon2`: Argon2id (RFC 9106, version 0x13) of many guesses, one guess per
  thread block with 32 threads per lane; the host computes H0, the first two blocks of each lane
  and the final variable-length hash.

Numba's CUDA simulator runs the same kernels as Python on any machine: set
``NUMBA_ENABLE_CUDASIM=1`` before numba's CUDA target is first imported (the tests run it so).
Importing a module of this package without ``numba-cuda`` raises an ImportError that names the
extra to install.
"""

from __future__ import annotations

__all__: list[str] = []
