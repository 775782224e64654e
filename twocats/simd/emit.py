"""The one source emitter of the code generators (lane hashes, fills and lane modes).

Generated kernels are straight-line code in which every assignment binds a fresh name (numba's SSA
reconstruction is quadratic in the re-definitions of one name inside a basic block, numba-simd.md
§5.1)::

    e = Emitter("    ")
    x = e.let("x", "a + b")          # appends "    x_0 = a + b" and returns "x_0"
    e.emit(1, "return x_0")          # a line at an extra indentation depth (4 spaces each)
"""

from __future__ import annotations

__all__ = ["Emitter"]


class Emitter:
    """Collect indented lines of generated code and hand out fresh single-assignment names."""

    def __init__(self, indent: str = "") -> None:
        self.indent = indent
        self.lines: list[str] = []
        self._counts: dict[str, int] = {}

    def fresh(self, prefix: str) -> str:
        """Return a name never handed out before by this emitter."""
        count = self._counts.get(prefix, 0)
        self._counts[prefix] = count + 1
        return f"{prefix}_{count}"

    def line(self, text: str) -> None:
        """Append one line at the emitter's indentation."""
        self.lines.append(self.indent + text)

    def emit(self, depth: int, text: str) -> None:
        """Append one line at ``depth`` further levels of 4 spaces (an empty line stays empty)."""
        self.lines.append(self.indent + "    " * depth + text if text else "")

    def let(self, prefix: str, expr: str) -> str:
        """Bind ``expr`` to a fresh name and return that name."""
        name = self.fresh(prefix)
        self.line(f"{name} = {expr}")
        return name

    def let_many(self, prefixes: list[str], expr: str) -> list[str]:
        """Unpack the tuple ``expr`` into fresh names and return them."""
        names = [self.fresh(prefix) for prefix in prefixes]
        self.line(f"{', '.join(names)} = {expr}")
        return names
