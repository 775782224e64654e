"""The attacker's side: the ranking trade-off attack on the graphs, and guesses per second on a
GPU at equal defender time."""
