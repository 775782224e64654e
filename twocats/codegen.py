"""The project's one generator entry point: ``python -m twocats.codegen [--check]``.

It rewrites every generated file: the unrolled lane kernels of the hash primitives
(:mod:`twocats.lanes.codegen`), the fill kernels (:mod:`twocats.simd.fillgen`) and the lane modes'
rounds (:mod:`twocats.lanes.modes.codegen`); with ``--check`` it only reports the files that
differ, and a test runs that check.
"""

from __future__ import annotations

import sys
from pathlib import Path

from twocats.lanes import codegen as hash_codegen
from twocats.lanes.modes import codegen as modes_codegen
from twocats.simd import fillgen

__all__ = ["generated_files", "main"]


def generated_files() -> dict[Path, str]:
    """Return every generated file of the project (lane hashes, fills, lane modes) with its text."""
    files = {hash_codegen.GENERATED / name: t for name, t in hash_codegen.generate_all().items()}
    files.update({fillgen.generated_dir() / name: t for name, t in fillgen.render_all().items()})
    files.update(
        {modes_codegen.GENERATED / name: t for name, t in modes_codegen.generate_all().items()}
    )
    return files


def main(argv: list[str] | None = None) -> int:
    """Write every generated file, or with ``--check`` report those that are not up to date."""
    args = sys.argv[1:] if argv is None else argv
    check = "--check" in args
    stale = []
    for path, text in generated_files().items():
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print("stale generated files: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
