"""Measuring twocats on this machine: tuning, peer timing and instruction-set-level runs.

The command line's ``tune``, ``compare`` and ``bench`` and the repository's ``bench`` suites call
these modules; none of them imports the command line.

* :mod:`twocats.perf.levels`: fill-rate runs at instruction-set levels in child processes.

Importing this package imports nothing else.
"""
