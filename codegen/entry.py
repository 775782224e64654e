"""Every generator at once: the files they write, and ``python -m codegen [--check]``."""

from __future__ import annotations

import sys
from pathlib import Path

from codegen import fill, lanes, modes

__all__ = ["generated_files", "main"]


def generated_files() -> dict[Path, str]:
    """Return every generated file of the project (lane hashes, fills, lane modes) with its text."""
    files = {lanes.GENERATED / name: text for name, text in lanes.generate_all().items()}
    files.update({fill.generated_dir() / name: text for name, text in fill.render_all().items()})
    files.update({modes.GENERATED / name: text for name, text in modes.generate_all().items()})
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
