"""The compiled fill of the password hash: the ``scalar`` and ``simd`` backends of the seam.

:mod:`twocats.kdf.fill.threads` is the seam (``get_fill_slice``), :mod:`~twocats.kdf.fill.kernels`
numba's kernels, :mod:`~twocats.kdf.fill.args` their interface, :mod:`~twocats.kdf.fill.aot` their
registration with the ahead-of-time artefacts of :mod:`twocats.simd.aot`.  Importing the package
imports neither numpy nor numba.
"""
