"""The committed generated kernels equal the generator's output, and the generator's invariants."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import ModuleType

import pytest

from codegen import emit, entry
from codegen import fill as fillgen
from codegen import lanes as codegen
from codegen import modes as modes_codegen


@pytest.mark.parametrize("name", sorted(codegen.generate_all()))
def test_committed_file_equals_generator_output(name: str) -> None:
    """Each file in _generated/ is exactly what ``python -m codegen`` writes."""
    committed = (codegen.GENERATED / name).read_text()
    assert committed == codegen.generate_all()[name], f"run python -m codegen ({name})"


def test_check_mode_reports_up_to_date() -> None:
    """``--check`` exits 0 when the committed files are current."""
    assert entry.main(["--check"]) == 0


@pytest.mark.parametrize("name", sorted(codegen.generate_all()))
def test_unrolled_bodies_assign_every_name_once(name: str) -> None:
    """In the big unrolled kernels no local name is bound twice (single assignment)."""
    tree = ast.parse(codegen.generate_all()[name])
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef):
            continue
        if not re.search(r"_(compress|lanes)$", function.name):
            continue
        bound: list[str] = []
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.append(node.id)
        duplicates = {n for n in bound if bound.count(n) > 1}
        assert not duplicates, f"{function.name} rebinds {sorted(duplicates)[:5]}"


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring nodes of a module and its functions and classes."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


@pytest.mark.parametrize(
    "module", [codegen, emit, fillgen, modes_codegen], ids=lambda m: m.__name__
)
def test_generators_hold_no_long_source_template(module: ModuleType) -> None:
    """No generator keeps source in a string over 15 lines: drivers are ordinary kernel source."""
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    long = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and node.value.count("\n") > 15
    ]
    assert long == [], f"{module.__name__}: string templates at lines {long}"
