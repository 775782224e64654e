"""TWOCATS_THREADS: the number of fill threads, its default, its error, and that fills obey it."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from click.testing import CliRunner

from twocats import kdf
from twocats.cli import main
from twocats.exceptions import InvalidParametersError
from twocats.kdf.fill.threads import default_threads
from twocats.params import Params

#: Large enough (4 MiB in 2 regions) that the slices of the top levels are shared between threads
#: when that is allowed.
SHARED = Params(mem_cost=12, parallelism=2, block_size=1024)


def test_default_is_the_usable_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset or empty, the number is the CPUs this process may run on."""
    monkeypatch.delenv("TWOCATS_THREADS", raising=False)
    assert default_threads() == len(os.sched_getaffinity(0))
    monkeypatch.setenv("TWOCATS_THREADS", "")
    assert default_threads() == len(os.sched_getaffinity(0))


@pytest.mark.parametrize("value", ["1", "3", "64"])
def test_a_whole_number_is_taken(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """A whole number of at least 1 is the number of threads."""
    monkeypatch.setenv("TWOCATS_THREADS", value)
    assert default_threads() == int(value)


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5", " "])
def test_anything_else_is_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """Zero, negatives and non-numbers raise InvalidParametersError naming the variable."""
    monkeypatch.setenv("TWOCATS_THREADS", value)
    with pytest.raises(InvalidParametersError) as caught:
        default_threads()
    assert str(caught.value) == "TWOCATS_THREADS must be a whole number >= 1"


def test_the_cli_reports_a_bad_value_as_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bad TWOCATS_THREADS makes a hash exit 2 with the message, not a traceback."""
    monkeypatch.setenv("TWOCATS_THREADS", "0")
    result = CliRunner().invoke(
        main,
        ["hash", "--mem-cost", "12", "--parallelism", "2", "--block-size", "1024",
         "--password-stdin"],
        input="pw\n",
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr == "Error: TWOCATS_THREADS must be a whole number >= 1\n"
    assert result.stdout == ""


@pytest.mark.parametrize(("threads", "submitted"), [("1", False), ("2", True)])
def test_fills_obey_the_setting(
    monkeypatch: pytest.MonkeyPatch, threads: str, submitted: bool
) -> None:
    """With one thread no slice goes to the pool; with two, each shared slice sends one share."""
    expected = kdf.derive(b"pw", b"saltsalt", SHARED, backend="simd")
    calls: list[object] = []
    submit = ThreadPoolExecutor.submit

    def counted(self: ThreadPoolExecutor, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        calls.append(fn)
        return submit(self, fn, *args, **kwargs)

    monkeypatch.setattr(ThreadPoolExecutor, "submit", counted)
    monkeypatch.setenv("TWOCATS_THREADS", threads)
    assert kdf.derive(b"pw", b"saltsalt", SHARED, backend="scalar") == expected
    if submitted:
        # The slices of the top levels each send one share to the pool.
        assert len(calls) >= 4
    else:
        assert calls == []
