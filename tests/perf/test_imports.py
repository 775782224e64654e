"""twocats.perf and the machine probe: light imports, and the deprecated twocats.simd.levels."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from twocats.perf import levels


def test_the_probe_and_the_perf_modules_import_nothing_heavy() -> None:
    """twocats._machine (on the start-up path) and twocats.perf import no numpy, numba or peer."""
    code = (
        "import sys, twocats._machine, twocats.perf.levels, twocats.perf.compare\n"
        "heavy = ('numpy', 'numba', 'argon2', 'matplotlib')\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
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
