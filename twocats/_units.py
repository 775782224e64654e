"""Sizes as people read them: ``format_size(1536 << 20) == "1.5 GiB"``.

This module imports nothing of the project, so the lowest modules can word their messages with it.
"""

from __future__ import annotations

__all__ = ["format_size"]


def format_size(nbytes: int) -> str:
    """Format a byte count with a binary unit, e.g. ``512 MiB`` or ``1.5 GiB``."""
    value = float(nbytes)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            if unit == "bytes":
                return f"{nbytes} bytes"
            return f"{value:.4g} {unit}"
        value /= 1024
    raise AssertionError("unreachable")
