"""The generators live in codegen/, outside the package: nothing installed imports or ships them."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[2]


def _imported(path: Path) -> set[str]:
    """The top-level names of the modules a source file imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_no_package_module_imports_a_generator() -> None:
    """No module under twocats/ imports codegen, and none is a generator."""
    sources = sorted((ROOT / "twocats").rglob("*.py"))
    assert sources
    importers = [str(path.relative_to(ROOT)) for path in sources if "codegen" in _imported(path)]
    assert importers == []
    assert not [path for path in sources if path.stem in ("codegen", "fillgen", "emit")]


def test_the_wheel_packages_leave_codegen_out() -> None:
    """The package discovery of pyproject.toml finds the twocats packages and no other."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    found = find_packages(str(ROOT), **config["tool"]["setuptools"]["packages"]["find"])
    assert "twocats.kdf.fill" in found
    assert not [name for name in found if not name.startswith("twocats")]


def test_hash_many_imports_no_generator() -> None:
    """A ``hash_many`` call loads its kernels without importing any generator module."""
    code = (
        "import sys\n"
        "from twocats.lanes import hash_many\n"
        "hash_many([b'abc'], 'blake2s')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'codegen'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT / "tests"
    )
    assert done.stdout.strip() == "[]"
