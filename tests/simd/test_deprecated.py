"""The old lane-hashing paths under twocats.simd still work, name the moved objects and warn."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from types import ModuleType

import pytest

from twocats.lanes import many, modes, primitives, reference, registry


@pytest.mark.parametrize(
    "module", ["twocats.simd.multibuffer", "twocats.simd.modes", "twocats.simd.reference"]
)
def test_old_modules_warn_when_imported(module: str) -> None:
    """Importing an old module path in a fresh interpreter raises its DeprecationWarning."""
    code = f"import warnings; warnings.simplefilter('error'); import {module}"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 1
    assert f"DeprecationWarning: {module} is deprecated" in result.stderr


def _old(module: str) -> ModuleType:
    """Import an old module path, whose warning the subprocess test above checks."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return importlib.import_module(module)


def test_old_modules_name_the_moved_objects() -> None:
    """The old modules re-export the moved objects themselves, under their old names."""
    multibuffer = _old("twocats.simd.multibuffer")
    old_modes = _old("twocats.simd.modes")
    old_reference = _old("twocats.simd.reference")
    sizes = {name: registry.ALGORITHMS[name].digest_size for name in primitives.PRIMITIVES}
    assert multibuffer.hash_many is many.hash_many
    assert multibuffer.ALGORITHMS == registry.PRIMITIVES
    assert sizes == multibuffer.DIGEST_SIZES
    assert old_modes.Mode is registry.Algorithm
    assert set(old_modes.MODES) == set(registry.ALGORITHMS) - set(registry.PRIMITIVES)
    assert old_modes.hash_many is many.hash_many
    assert old_reference.ALGORITHMS is reference.FUNCTIONS
    assert old_reference.sha256 is reference.sha256


def test_old_mode_submodules_are_the_moved_modules() -> None:
    """The old submodule paths (twocats.simd.modes.keccak and the like) are the moved modules."""
    _old("twocats.simd.modes")
    assert importlib.import_module("twocats.simd.modes.keccak") is modes.keccak
    assert importlib.import_module("twocats.simd.modes.reference") is reference


@pytest.mark.parametrize(
    ("name", "new"),
    [
        ("hash_many", many.hash_many),
        ("hash_many_array", many.hash_many_array),
        ("hash_many_fixed", many.hash_many_fixed),
        ("ALGORITHMS", registry.PRIMITIVES),
    ],
)
def test_old_simd_names_warn_and_name_the_new_objects(name: str, new: object) -> None:
    """twocats.simd's old lane names warn on every use and are the objects of twocats.lanes."""
    import twocats.simd

    with pytest.warns(DeprecationWarning, match=f"twocats.simd.{name} is deprecated"):
        value = getattr(twocats.simd, name)
    assert value is new


def test_backend_names_stay_in_simd_without_warning() -> None:
    """The backend names belong to the compiled layer and do not warn."""
    import twocats.simd

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert twocats.simd.BACKENDS == ("reference", "scalar", "simd")
