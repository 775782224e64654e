"""read_lines against bytes.split on any stream, cut however the reads fall: one item per line, in
order, so that line numbers hold after lines of any length."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twocats.lanes import check_file
from twocats.lanes.check_file import Cut, LineTooLongError, read_lines

#: Small limits, so that short examples cross them.
MAX_LINE = 8
MAX_LONG_LINE = 40


def _reader(data: bytes, sizes: list[int]):  # type: ignore[no-untyped-def]
    """A read function giving `data` in pieces of the sizes drawn (at most what is asked)."""
    position = 0
    turn = 0

    def read(limit: int) -> bytes:
        nonlocal position, turn
        size = min(limit, sizes[turn % len(sizes)]) if sizes else limit
        turn += 1
        piece = data[position : position + size]
        position += len(piece)
        return piece

    return read


def _expected(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    return lines[:-1] if lines[-1] == b"" else lines


# The limits patched are the same for every example.
@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.lists(st.sampled_from([b"a", b"#", b"\n", b"xyz", b"\n\n", b"0" * 9]), max_size=40).map(
        b"".join
    ),
    sizes=st.lists(st.integers(1, 2 * MAX_LINE), max_size=5),
    cut_comments=st.booleans(),
)
def test_lines_are_those_of_split(
    monkeypatch: pytest.MonkeyPatch, data: bytes, sizes: list[int], cut_comments: bool
) -> None:
    """Every line comes once, in order: held whole, or cut to its first MAX_LINE bytes."""
    monkeypatch.setattr(check_file, "MAX_LINE", MAX_LINE)
    monkeypatch.setattr(check_file, "MAX_LONG_LINE", MAX_LONG_LINE)

    def keep(head: bytes) -> bool:
        return not (cut_comments and head.startswith(b"#"))

    expected = []
    for line in _expected(data):
        if len(line) > MAX_LINE and not keep(line[:MAX_LINE]):
            expected.append(Cut(line[:MAX_LINE]))
        else:
            expected.append(line)
    if any(isinstance(line, bytes) and len(line) > MAX_LONG_LINE for line in expected):
        with pytest.raises(LineTooLongError):
            list(read_lines(_reader(data, sizes), keep))
        return
    assert list(read_lines(_reader(data, sizes), keep)) == expected
