"""The compiled fill of the password hash: the ``scalar`` and ``simd`` backends of the seam.

:mod:`twocats.kdf.fill.threads` is the seam (``get_fill_slice``), :mod:`~twocats.kdf.fill.family`
the kernels as a family of :mod:`twocats.simd.family` (numba source, known-answer check, C entry)
and :mod:`~twocats.kdf.fill.args` their interface.  Importing the package imports neither numpy
nor numba.
"""
