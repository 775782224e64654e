"""twocats.perf and the machine probe: light imports, and the deprecated twocats.simd.levels."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from twocats.perf import levels


def test_the_probe_and_the_level_runner_import_neither_numpy_nor_numba() -> None:
    """twocats._machine (on the start-up path) and twocats.perf.levels leave numpy unimported."""
    code = (
        "import sys, twocats._machine, twocats.perf.levels\n"
        "print(sorted(name for name in ('numpy', 'numba') if name in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_simd_levels_warns_and_names_the_new_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """The old twocats.simd.levels warns (DeprecationWarning) and re-exports twocats.perf.levels."""
    monkeypatch.delitem(sys.modules, "twocats.simd.levels", raising=False)
    with pytest.warns(DeprecationWarning, match=r"twocats\.perf\.levels"):
        old = importlib.import_module("twocats.simd.levels")
    assert old.__all__ == levels.__all__
    assert all(getattr(old, name) is getattr(levels, name) for name in levels.__all__)
