"""The lane modes' kernel drivers, one module per family: scheduling, padding and output.

Only the unrolled rounds are generated (``twocats/lanes/modes/_generated/``); the drivers that feed
them are ordinary kernel source.  A driver shared by two word sizes, widths or variants reads them
from module globals, and :meth:`~twocats.simd._jit.Variants.specialise` binds them once per case
at the bottom of its module (numba freezes globals into the machine code, so a bound size is as
constant as a literal); the values the globals are given first only let the unbound source read
as Python.  Importing a module of this package imports numba; the mode modules
(:mod:`twocats.lanes.modes`) import their driver on first use.
"""
