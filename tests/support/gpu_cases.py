"""Run the GPU kernels on the cases of standard input; write their outputs to standard output.

The GPU tests start this script in a process of its own, so that numba's CUDA target (real, or the
simulator under ``NUMBA_ENABLE_CUDASIM=1``) never loads into the test process.  Input: one JSON
document ``{"twocats": [case, ...], "argon2id": [case, ...]}``; a TwoCats case holds ``params`` (the
fields of a :class:`twocats.Params`), ``passwords``, ``salts`` and ``data`` in hex, an Argon2id case
``t``, ``m``, ``p``, ``passwords`` and ``salts``.  Output: the same lists of cases, each replaced by
the list of its outputs in hex.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from twocats import Params


def _twocats(case: dict[str, Any]) -> list[str]:
    from twocats.gpu.twocats_fill import derive_many

    passwords = [bytes.fromhex(text) for text in case["passwords"]]
    salts = [bytes.fromhex(text) for text in case["salts"]]
    outputs = derive_many(Params(**case["params"]), passwords, salts, bytes.fromhex(case["data"]))
    return [output.hex() for output in outputs]


def _argon2id(case: dict[str, Any]) -> list[str]:
    from twocats.gpu.argon2 import Argon2Params, hash_many

    passwords = [bytes.fromhex(text) for text in case["passwords"]]
    salts = [bytes.fromhex(text) for text in case["salts"]]
    tags = hash_many(Argon2Params(case["t"], case["m"], case["p"]), passwords, salts)
    return [tag.hex() for tag in tags]


def main() -> int:
    """Read the cases, run them, print the outputs."""
    cases = json.load(sys.stdin)
    result = {
        "twocats": [_twocats(case) for case in cases.get("twocats", [])],
        "argon2id": [_argon2id(case) for case in cases.get("argon2id", [])],
    }
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
