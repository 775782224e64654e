"""twocats benchmarks: ``python -m bench [suite] [--smoke] [suite options]``.

``python -m bench smoke`` runs every registered suite at its cheapest size and checks results
but asserts no timings (CI runs it).  ``python -m bench`` alone runs every suite at full size.

A suite is a module with two functions, ``main(argv: list[str]) -> int`` (full run, options
parsed by the suite) and ``smoke() -> int`` (cheapest run), that writes its tables through
:mod:`bench.harness`.  Registering one is one line in :data:`SUITES`.
"""

from __future__ import annotations

__all__ = ["SUITES"]

#: Suite name -> module implementing it.
SUITES: dict[str, str] = {
    "primitives": "bench.primitives",
    "matrix": "bench.matrix",
    "kdf": "bench.kdf",
    "threads": "bench.threads",
    "modes": "bench.modes",
    "adapters": "bench.adapters",
    "decoy": "bench.decoy",
    "tune": "bench.tune_runs",
    "load": "bench.load",
    "work": "bench.work",
    "sum": "bench.sum",
    "compile": "bench.compile",
    "bulk": "bench.bulk",
    "startup": "bench.startup",
    "http": "bench.http_load",
    "lsh-neon": "bench.lsh_neon",
    "tradeoff": "bench.tradeoff",
    "gpu": "bench.gpu",
    "headline": "bench.headline",
}
