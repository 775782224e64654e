"""The plain-text tables the measurements print: columns padded to one width, two spaces apart."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["aligned_table"]


def aligned_table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int) -> str:
    """Return the header and rows as lines of padded cells, the first `left` columns to the left.

    The other columns are aligned to the right (they hold figures); no line ends in spaces.
    """
    lines = [header, *rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join(
        "  ".join(
            cell.ljust(width) if index < left else cell.rjust(width)
            for index, (cell, width) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in lines
    )
