"""The committed fill kernels are exactly what the generator writes."""

from __future__ import annotations

import pytest

from codegen import fill as fillgen
from twocats.kdf.fill.args import LANES, module_name


@pytest.mark.parametrize("lanes", LANES)
def test_committed_module_equals_generator_output(lanes: int) -> None:
    """Each committed fill_l<L>.py equals render_module(L) (regenerate with fillgen if not)."""
    path = fillgen.generated_dir() / f"{module_name(lanes)}.py"
    assert path.read_text(encoding="utf-8") == fillgen.render_module(lanes)


def test_no_stale_generated_fill_modules() -> None:
    """No module exists in the fill's _generated/ that the generator does not write."""
    present = {path.name for path in fillgen.generated_dir().glob("*.py")} - {"__init__.py"}
    assert present == set(fillgen.render_all())


def test_committed_compressions_equal_generator_output() -> None:
    """The committed compress.py equals render_compress() (regenerate with fillgen if not)."""
    path = fillgen.generated_dir() / "compress.py"
    assert path.read_text(encoding="utf-8") == fillgen.render_compress()


def test_generator_rejects_unknown_lane_count() -> None:
    """Only the lane counts the parameters allow get a kernel."""
    with pytest.raises(ValueError, match="lanes"):
        fillgen.render_module(3)
