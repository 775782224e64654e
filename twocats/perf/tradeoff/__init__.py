"""The attacker's side of memory hardness: block dependency graphs and the ranking trade-off attack.

:mod:`.graphs` builds the graphs of Argon2, TwoCats and a generic power-law design,
:mod:`.ranking` runs the ranking attack on them (a compiled kernel and its plain-Python truth),
:mod:`.spec` reads a graph name of the command line, and :mod:`.attacker` sets TwoCats beside
argon2id at equal defender time.
"""
