"""The attacker's side of memory hardness: block dependency graphs and the attacks on them.

:mod:`.graphs` builds the graphs of Argon2, TwoCats and a generic power-law design, :mod:`.model`
holds the Argon2 specification's gain formula and its prices, :mod:`.liveness` the memory an
attacker holds; :mod:`.ranking`, :mod:`.lowstorage`, :mod:`.iterative` and :mod:`.depth` are the
attacks (each with a compiled kernel, checked against a plain oracle in the tests), :mod:`.attacks`
names them and finds the best, :mod:`.spec` reads a graph name of the command line, and
:mod:`.attacker` sets the best attack beside ``compare``'s equal-time memories.
"""
