"""The low-storage attack: every block kept until its last read."""

from __future__ import annotations

import pytest

from twocats.perf.tradeoff import graphs, lowstorage
from twocats.simd import _jit

compiled_only = pytest.mark.skipif(
    bool(_jit.config.DISABLE_JIT), reason="compiled kernels only (NUMBA_DISABLE_JIT is set)"
)


def test_version_1_3_keeps_every_earlier_pass_block_until_overwritten() -> None:
    """With the XOR, 3-pass Argon2i's peak is the whole memory; replaced blocks free some."""
    xor, _ = lowstorage.measure(graphs.argon2("argon2i", 1024, 3, 1, 0))
    replace, figures = lowstorage.measure(graphs.argon2("argon2i", 1024, 3, 1, 0, version="1.2.1"))
    assert xor.alpha == 1.0
    assert replace.alpha < 1.0
    assert (replace.C, replace.D) == (1.0, 1.0)
    assert len(figures["L_by_pass"]) == 3


def test_data_dependent_graphs_gain_nothing() -> None:
    """Argon2d's attacker cannot know the last reads: it holds what the defender holds."""
    row, figures = lowstorage.measure(graphs.argon2("argon2d", 1024, 1, 1, 0))
    # Only after the last step may the attacker drop a block the defender still holds.
    assert row.alpha == pytest.approx(1.0, abs=1 / 1024)
    assert figures["advantage_mean"] == pytest.approx(1.0, abs=4 / 1024)


@compiled_only
def test_one_pass_argon2i_against_the_specification() -> None:
    """1-pass Argon2i at 2^16 blocks: mean memory near 0.15 and peak gain near 5 (within 1.5x)."""
    result = lowstorage.attack(lambda seed: graphs.argon2("argon2i", 1 << 16, 1, 1, seed), [0])
    figures = result.figures
    assert 0.15 / 1.5 <= figures["alpha_mean"] <= 0.15 * 1.5
    assert 5 / 1.5 <= figures["advantage_peak"] <= 5 * 1.5
    assert 3.5 / 1.5 <= figures["advantage_mean"] <= 3.5 * 1.5
    assert result.gain == pytest.approx(1 / (result.rows[0].alpha + result.beta))
