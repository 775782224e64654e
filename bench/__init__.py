"""twocats benchmarks: ``python -m bench [suite] [--smoke] [suite options]``.

``python -m bench smoke`` runs every registered suite at its cheapest size and checks results
but asserts no timings (CI runs it).  ``python -m bench`` alone runs every suite at full size.

A suite is a module with two functions, ``main(argv: list[str]) -> int`` (full run, options
parsed by the suite) and ``smoke() -> int`` (cheapest run), that writes its tables through
:mod:`bench.harness`.  Registering one is one line in :data:`SUITES`.  The suites stand in
folders by what they measure: ``password/``, ``matrix/`` (the fill), ``lanes/``, ``service/``
(HTTP), ``startup/`` (processes and compilation) and ``attacker/`` (trade-off attack, GPU).
"""

from __future__ import annotations

__all__ = ["SUITES"]

#: Suite name -> module implementing it.
SUITES: dict[str, str] = {
    "primitives": "bench.lanes.primitives",
    "matrix": "bench.matrix.runner",
    "cref": "bench.matrix.cref",
    "kdf": "bench.password.kdf",
    "threads": "bench.password.threads",
    "modes": "bench.lanes.modes",
    "adapters": "bench.password.adapters",
    "decoy": "bench.password.decoy",
    "tune": "bench.password.tune_runs",
    "load": "bench.password.load",
    "work": "bench.password.work",
    "sum": "bench.lanes.sum",
    "compile": "bench.startup.compile",
    "bulk": "bench.password.bulk",
    "startup": "bench.startup.processes",
    "http": "bench.service.flood",
    "lsh-neon": "bench.lanes.lsh_neon",
    "tradeoff": "bench.attacker.tradeoff",
    "gpu": "bench.attacker.gpu",
    "headline": "bench.headline",
}
