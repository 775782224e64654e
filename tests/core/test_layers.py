"""The package's layers: imports run down the floors of docs/contributing.md, never back up."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "twocats"

#: What each part of the package may not import: the floors above it.
ABOVE = {
    "simd": ("twocats.kdf", "twocats.lanes", "twocats.params", "twocats.hashes", "twocats.phc"),
    "kdf": ("twocats.lanes", "twocats.password", "twocats.cli", "twocats.perf", "twocats.bulk"),
    "lanes": ("twocats.kdf", "twocats.password", "twocats.cli", "twocats.perf", "twocats.bulk"),
    "password": (
        "twocats.cli",
        "twocats.integrations",
        "twocats.bulk",
        "twocats.perf",
        "twocats.gpu",
    ),
    "perf": ("twocats.cli", "twocats.integrations", "twocats.bulk"),
    "gpu": ("twocats.cli", "twocats.integrations", "twocats.bulk", "twocats.perf"),
    "bulk": ("twocats.cli", "twocats.integrations"),
    "integrations": ("twocats.cli",),
}


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth of the file (lazy imports included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _modules(part: str) -> list[Path]:
    return sorted(p for p in (PACKAGE / part).rglob("*.py") if "_generated" not in p.parts)


def test_simd_imports_only_itself_the_private_helpers_and_the_exceptions() -> None:
    """The compiler floor stands on nothing of twocats but its own modules and the helpers."""
    for path in _modules("simd"):
        for name in _imports(path):
            if name == "twocats" or name.startswith("twocats."):
                top = name.split(".")[1] if "." in name else ""
                assert top in {"simd", "exceptions"} or top.startswith("_"), (path.name, name)


@pytest.mark.parametrize("part", sorted(ABOVE))
def test_no_import_runs_back_up(part: str) -> None:
    """No module of a part imports a floor above it."""
    for path in _modules(part):
        for name in _imports(path):
            assert not name.startswith(ABOVE[part]), (str(path.relative_to(PACKAGE)), name)


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    """The import reader finds a lazy import inside a function, the kind a re-cut leaves."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from twocats.kdf.fill import threads\n")
    assert "twocats.kdf.fill" in _imports(module)
