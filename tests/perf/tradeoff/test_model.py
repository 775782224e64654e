"""The specification's gain formulas and the pricing of a compression core."""

from __future__ import annotations

import pytest

from twocats.perf.tradeoff import model


def test_gain_is_the_specifications_formula() -> None:
    """E = 1 / ((alpha + C beta) D); with D = 1 it is the data-independent formula."""
    assert model.gain(0.25, 10.0, 2.0, 0.01) == pytest.approx(1 / ((0.25 + 0.1) * 2))
    assert model.gain(0.2, 4.0, 1.0, 0.0) == pytest.approx(5.0)


def test_beta_prices_a_blake2b_core_against_a_gibibyte() -> None:
    """0.1 mm² over 550 mm² of DRAM a GiB: beta is 0.1 / 550 at 1 GiB, 16 times that at 64 MiB."""
    core = model.argon2_core()
    assert model.beta(core, 1 << 30) == pytest.approx(0.1 / 550)
    assert model.beta(core, 64 << 20) == pytest.approx(16 * 0.1 / 550)
    assert model.twocats_core("blake2s").mm2 == pytest.approx(0.11)


def test_result_gains_come_from_the_rows() -> None:
    """E is the best priced row's gain, E_free_cores the best with beta = 0, possibly elsewhere."""
    rows = (
        model.Row(0.5, 1.0, 1.0, {"q": 1}),
        model.Row(0.1, 1000.0, 1.0, {"q": 9}),
    )
    result = model.Result(
        "ranking", "g", 8, 8, 1, "peak", 1 << 20, model.argon2_core(), 0.001, rows
    )
    assert result.gain == pytest.approx(1 / 0.501)
    assert result.gain_free_cores == pytest.approx(10.0)
    document = result.document()
    assert document["best"]["q"] == 1
    assert [row["E_free_cores"] for row in document["rows"]] == pytest.approx([2.0, 10.0])


def test_mean_rows_keeps_shared_parameters() -> None:
    """Seeds' rows average column by column; a parameter they share stays as it is."""
    first = [model.Row(0.5, 2.0, 1.0, {"q": 3, "stored": 0.4})]
    second = [model.Row(0.3, 4.0, 2.0, {"q": 3, "stored": 0.2}), model.Row(0.1, 9, 9, {"q": 5})]
    (row,) = model.mean_rows([first, second])
    assert (row.alpha, row.C, row.D) == pytest.approx((0.4, 3.0, 1.5))
    assert row.extra == pytest.approx({"q": 3, "stored": 0.3})
