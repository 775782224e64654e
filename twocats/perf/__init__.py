"""Measuring twocats on this machine: tuning, peer timing and instruction-set-level runs.

The command line's ``tune``, ``compare`` and ``bench`` and the repository's ``bench`` suites call
these modules; none of them imports the command line.

* :mod:`twocats.perf.tune`: times verifications and searches for parameters that fill a budget.
* :mod:`twocats.perf.peers`: times calls, and argon2id and scrypt the way a server calls them.
* :mod:`twocats.perf.samples`: the one record of timings (median, extremes, spread).
* :mod:`twocats.perf.interval`: a ratio measured in paired rounds and its confidence interval.
* :mod:`twocats.perf.compare`: TwoCats against its peers at equal memory and at equal time, and
  :mod:`twocats.perf.compare_plot`, its drawing.
* :mod:`twocats.perf.levels`: fill-rate runs at instruction-set levels in child processes.
* :mod:`twocats.perf.text_table`: the aligned plain-text tables they print.

Importing this package imports nothing else.
"""
