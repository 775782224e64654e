"""The attacks by name: which apply to which graph, and the best of them."""

from __future__ import annotations

import dataclasses

import pytest

from twocats.perf.tradeoff import attacks, graphs
from twocats.profiles import CHEAPEST


def test_which_attacks_apply() -> None:
    """Planning attacks need known addresses; the iterative one needs TwoCats' block hash."""
    argon2d = graphs.argon2("argon2d", 64, 1, 1, 0)
    argon2i = graphs.argon2("argon2i", 64, 1, 1, 0)
    twocats = graphs.twocats(CHEAPEST, 0)
    assert attacks.applies("ranking", argon2d) is None
    assert "data-dependent" in (attacks.applies("low-storage", argon2d) or "")
    assert "data-dependent" in (attacks.applies("depth-reducing", argon2d) or "")
    assert "not iterative" in (attacks.applies("iterative", argon2i) or "")
    for name in attacks.ATTACKS:
        assert attacks.applies(name, twocats) is None


def test_best_runs_what_applies_and_picks_the_largest_gain() -> None:
    """On Argon2d only ranking runs; on TwoCats all four do and the best has the largest E."""
    settings = attacks.Settings((0,), budget=4)
    only = attacks.best(lambda seed: graphs.argon2("argon2d", 256, 1, 1, seed), settings)
    assert [result.attack for result in only.results] == ["ranking"]
    assert [name for name, _ in only.skipped] == ["low-storage", "iterative", "depth-reducing"]
    params = dataclasses.replace(CHEAPEST, mem_cost=4, side_channel_resistant=True)
    verdict = attacks.best(lambda seed: graphs.twocats(params, seed), settings)
    assert [result.attack for result in verdict.results] == list(attacks.ATTACKS)
    assert verdict.best.gain == max(result.gain for result in verdict.results)
    document = verdict.document()
    assert document["chosen_by"] == "best"
    assert document["E"] == verdict.best.gain
    assert {entry["attack"] for entry in document["attacks"]} == set(attacks.ATTACKS)


def test_unknown_attack_is_refused() -> None:
    """run() names the attacks it knows."""
    from twocats.exceptions import InvalidParametersError

    with pytest.raises(InvalidParametersError, match="--attack must be one of"):
        attacks.run("nosuch", lambda seed: graphs.power(1.0, 64, seed), attacks.Settings((0,)))
