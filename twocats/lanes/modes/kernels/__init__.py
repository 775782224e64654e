"""The lane modes' kernel drivers, one module per family: scheduling, padding and output.

Only the unrolled rounds are generated (``twocats/lanes/modes/_generated/``); the drivers that feed
them are ordinary kernel source.  Importing a module of this package imports numba; the mode
modules (:mod:`twocats.lanes.modes`) import their driver on first use.
"""
