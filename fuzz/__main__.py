"""Entry point: ``python -m fuzz [--count N] [--seed S] [--targets a,b] [--out DIR]``.

It writes the report (``fuzz.json`` and ``fuzz.md``) to ``--out``, fuzz/results by default.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import fuzz
from bench.harness import load_text, machine, measured_on
from fuzz.runner import replay, run
from fuzz.targets import TARGETS

#: Where ``python -m fuzz`` writes its report unless told ``--out``.
RESULTS_DIR = Path(fuzz.__file__).resolve().parent / "results"


def _markdown(document: dict[str, Any]) -> str:
    info = document["machine"]
    lines = [
        "# Fuzzing the readers of untrusted text",
        "",
        (
            f"{measured_on(info)}, load average {load_text(info.get('load_average'))}.  "
            f"Command: `{document['command']}`."
        ),
        "",
        (
            "| target | inputs | accepted | refused (documented) | undocumented "
            "| broken contract | hangs | seconds | inputs/s |"
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, target in document["targets"].items():
        outcomes = target["outcomes"]
        refused = sum(n for label, n in outcomes.items() if label.startswith("refused"))
        lines.append(
            f"| {name} | {target['inputs']} | {outcomes.get('accepted', 0)} | {refused} | "
            f"{outcomes.get('undocumented', 0)} | {outcomes.get('violation', 0)} | "
            f"{outcomes.get('hang', 0)} | {target['seconds']:.1f} | "
            f"{target['inputs'] / max(target['seconds'], 1e-9):.0f} |"
        )
    lines += ["", "Refusals by exception class:", ""]
    for name, target in document["targets"].items():
        refusals = ", ".join(
            f"{label.removeprefix('refused: ')} {n}"
            for label, n in sorted(target["outcomes"].items())
            if label.startswith("refused: ")
        )
        lines.append(f"* {name}: {refusals}")
    failures = [(name, f) for name, t in document["targets"].items() for f in t["failures"]]
    lines += ["", f"Failures: {len(failures)}."]
    lines += [f"* {name} #{f['serial']}: {f['kind']}: {f['detail']}" for name, f in failures[:50]]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, run the targets, write the report; exit status 1 on any failure."""
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=fuzz.__doc__)
    parser.add_argument("--count", type=int, default=100_000, help="inputs per target")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--replay", nargs=2, metavar=("TARGET", "FILE"))
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.replay:
        return replay(args.replay[0], Path(args.replay[1]))
    names = [name for name in args.targets.split(",") if name]
    unknown = [name for name in names if name not in TARGETS]
    if unknown:
        parser.error(f"unknown targets {', '.join(unknown)}; known: {', '.join(TARGETS)}")
    out = RESULTS_DIR if args.out is None else args.out
    reports = run(args.count, args.seed, names, out / "fuzz-failures")
    document = {
        "command": "python -m fuzz " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine(),
        "count": args.count,
        "seed": args.seed,
        "targets": {
            name: {
                "inputs": report.inputs,
                "outcomes": dict(report.outcomes),
                "failures": report.failures,
                "seconds": report.seconds,
            }
            for name, report in reports.items()
        },
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "fuzz.json").write_text(json.dumps(document, indent=2) + "\n")
    text = _markdown(document)
    (out / "fuzz.md").write_text(text)
    print(text, end="")
    return 1 if any(report.failures for report in reports.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
