"""One meaning of an upgrade target in ``twocats upgrade`` and ``needs-rehash``, prefixes accepted.

``--mem-cost N`` alone is each hash's own parameters at memory cost N; any other parameter option
names an exact set (see :class:`twocats.password.Target`).
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from click.testing import CliRunner, Result

from twocats.cli import main
from twocats.params import Params
from twocats.password import Difference, PasswordHasher, Target, describe_differences
from twocats.phc import decode

#: The issue's stored hashes: x=1, p=1 at 256 KiB.
X1 = Params(mem_cost=8, multiplies=1, lanes=8, parallelism=1)
STORED = PasswordHasher.from_params(X1).hash("pw")


def run(*args: str, stdin: str | None = None) -> Result:
    """Invoke the CLI with separate stdout and stderr."""
    return CliRunner().invoke(main, list(args), input=stdin)


def test_the_rule_keeps_a_hash_s_parameters_for_a_memory_cost_alone() -> None:
    """Target.memory keeps each hash's parameters; Target.exactly names what differs."""
    memory = Target.memory(11).standing(X1)
    upgrader = dataclasses.replace(X1, mem_cost=11, start_mem_cost=11)
    assert (memory.kind, memory.params) == ("upgrade", upgrader)
    assert Target.memory(8).standing(X1).kind == "current"
    assert Target.memory(7).standing(X1).kind == "current"
    moderate = Params(mem_cost=11, multiplies=3)
    exact = Target.exactly(moderate).standing(X1)
    assert exact.kind == "needs_password"
    assert exact.differences == (Difference("multiplies", 1, 3), Difference("parallelism", 1, 2))
    assert describe_differences(exact.differences) == (
        "multiplies (1, target 3) and parallelism (1, target 2)"
    )


def test_needs_rehash_at_the_hash_s_own_memory_cost_says_no() -> None:
    """needs-rehash HASH --mem-cost <its own m> says no; a higher one says yes, upgradable."""
    for cost in ("8", "7"):
        own = run("needs-rehash", STORED, "--mem-cost", cost)
        assert (own.exit_code, own.stdout) == (0, "no\n")
    higher = run("needs-rehash", STORED, "--mem-cost", "11")
    assert (higher.exit_code, higher.stdout) == (0, "yes\n")
    assert "twocats upgrade HASH --mem-cost 11" in higher.stderr


def test_needs_rehash_with_a_profile_names_the_differing_parameters() -> None:
    """With --profile moderate it says yes, names the parameters, and that upgrade cannot."""
    result = run("needs-rehash", STORED, "--profile", "moderate")
    assert (result.exit_code, result.stdout) == (0, "yes\n")
    assert "multiplies (1, target 3) and parallelism (1, target 2)" in result.stderr
    assert "'twocats upgrade' cannot do it" in result.stderr
    assert "--mem-cost alone" in result.stderr
    document = json.loads(run("needs-rehash", STORED, "--profile", "moderate", "--json").stdout)
    assert (document["needs_rehash"], document["can_upgrade"]) == (True, False)
    assert [item["parameter"] for item in document["differences"]] == ["multiplies", "parallelism"]


def test_upgrade_with_a_memory_cost_alone_keeps_the_other_parameters() -> None:
    """upgrade --mem-cost 11 raises the memory only; the result verifies the same password."""
    result = run("upgrade", STORED, "--mem-cost", "11")
    assert result.exit_code == 0, result.output
    upgraded = result.stdout.strip()
    assert decode(upgraded).params == dataclasses.replace(X1, mem_cost=11, start_mem_cost=8)
    assert PasswordHasher.from_params(dataclasses.replace(X1, mem_cost=11)).verify(upgraded, "pw")


def test_upgrade_to_a_full_set_that_differs_exits_1_naming_the_parameters() -> None:
    """upgrade --profile moderate on an x=1 hash changes nothing, names why, exits 1."""
    result = run("upgrade", STORED, "--profile", "moderate", "--mem-cost", "11")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "multiplies (1, target 3) and parallelism (1, target 2)" in result.stderr
    assert "run with --mem-cost alone" in result.stderr


@pytest.mark.parametrize("prefix", ["twocats", "my_app$"])
def test_framework_prefixes_are_accepted_by_every_password_command(prefix: str) -> None:
    """A value copied from Django's column verifies, is checked, and upgrades behind its prefix."""
    value = prefix + STORED
    verified = run("verify", value, "--password-stdin", stdin="pw\n")
    assert (verified.exit_code, verified.stdout) == (0, "OK\n")
    assert run("needs-rehash", value, "--mem-cost", "8").stdout == "no\n"
    upgraded = run("upgrade", value, "--mem-cost", "9")
    assert upgraded.exit_code == 0, upgraded.output
    assert upgraded.stdout.startswith(prefix + "$twocats$v=2015$m=9,s=8,")


def test_upgrade_table_takes_exactly_one_target() -> None:
    """upgrade_table refuses both a parameter set and a memory cost, or neither, up front."""
    from twocats.bulk import upgrade_table
    from twocats.exceptions import InvalidParametersError

    for given in ({"target": X1, "mem_cost": 11}, {}):
        with pytest.raises(InvalidParametersError, match="exactly one of target and mem_cost"):
            upgrade_table(
                "sqlite:///nowhere.db", "users", key_column="id", hash_column="pw", **given
            )


def test_kinds_of_differences_are_counted_in_a_bounded_number() -> None:
    """Beyond MAX_DIFFERENCE_KINDS kinds, hashes are counted together as 'other parameters'."""
    from twocats.password import MAX_DIFFERENCE_KINDS, count_differences

    counts: dict[tuple[Difference, ...], int] = {}
    for value in range(MAX_DIFFERENCE_KINDS + 5):
        count_differences(counts, (Difference("parallelism", value, 2),))
    assert len(counts) == MAX_DIFFERENCE_KINDS + 1
    assert counts[()] == 5
    assert describe_differences(()) == "other parameters (more kinds than are listed)"
