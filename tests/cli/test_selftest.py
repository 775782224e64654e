"""``twocats selftest``: the packaged vectors, any vector file, failures, skips and bad files."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from twocats.cli import main
from twocats.cli.selftest import selftest
from twocats.kdf import geometry
from twocats.kdf.vectors import APIS, Vector, load_vectors, selftest_vectors

VECTORS_DIR = Path(__file__).resolve().parents[1] / "vectors"
TWOCATS_FILES = ("twocats-2015.jsonl", "twocats-2014.jsonl", "twocats-2014-03.jsonl")


def _run(*args: str) -> Result:
    return CliRunner().invoke(selftest, list(args))


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _within(vectors: list[Vector], max_memory: int) -> int:
    """Count the vectors whose every derivation needs at most `max_memory` (by its level plan)."""
    return sum(
        all(
            4 * geometry.required_words(geometry.plan(params, old_mem_cost=old)) <= max_memory
            for params, old in vector.derivations()
        )
        for vector in vectors
    )


def _record(vector_id: str) -> dict[str, Any]:
    for name in TWOCATS_FILES:
        for line in (VECTORS_DIR / name).read_text(encoding="utf-8").splitlines():
            record: dict[str, Any] = json.loads(line)
            if record["id"] == vector_id:
                return record
    raise LookupError(vector_id)


def test_packaged_vectors_are_a_subset_of_the_project_vectors() -> None:
    """Every line of the packaged selftest file appears verbatim in a project vector file."""
    project = set()
    for name in TWOCATS_FILES:
        project.update((VECTORS_DIR / name).read_text(encoding="utf-8").splitlines())
    packaged = resources.files("twocats.kdf").joinpath("selftest.jsonl").read_text("utf-8")
    lines = packaged.splitlines()
    assert lines
    assert set(lines) <= project
    assert len(set(lines)) == len(lines)


def test_packaged_vectors_cover_every_variant_and_entry_point() -> None:
    """The packaged vectors include all three variants and every entry point the reader knows."""
    vectors = selftest_vectors()
    assert {v.variant for v in vectors} == {"2015", "2014", "2014-03"}
    assert {v.api for v in vectors} == set(APIS)


def test_packaged_vectors_pass() -> None:
    """The default run passes every packaged vector and says so in its last line."""
    result = _run("--backend", "scalar")
    assert result.exit_code == 0, result.output
    count = len(selftest_vectors())
    assert result.stdout.splitlines() == [f"{count} passed, 0 failed"]


def test_registered_in_the_command_group() -> None:
    """``twocats selftest`` reaches this command through the CLI group."""
    result = CliRunner().invoke(main, ["selftest", "--backend", "scalar", "--max-memory", "4KiB"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1].endswith(
        "refused (over the limits: raise --max-memory or --max-work)"
    )


def test_max_memory_refuses_and_counts_larger_vectors() -> None:
    """Vectors needing more than --max-memory get one REFUSED line each and are counted."""
    # 23 of the packaged file's 53 vectors need at most 64 KiB (the four server ones none,
    # mem_cost 0 to 5 up to 32 KiB, the 2-level update 8 KiB), counted from their level plans; the
    # work limit (2.5 times the default profile's work) refuses none of them.
    vectors = selftest_vectors()
    assert (len(vectors), _within(vectors, 64 << 10)) == (53, 23)
    result = _run("--backend", "reference", "--max-memory", "64KiB")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 31
    for line in lines[:-1]:
        assert line.startswith("REFUSED ")
        assert line.endswith("more than max_memory (64 KiB, 65536 bytes)")
    assert lines[-1] == (
        "23 passed, 0 failed, 30 refused (over the limits: raise --max-memory or --max-work)"
    )


def test_a_wrong_output_is_one_failure_line(tmp_path: Path) -> None:
    """A vector whose output differs gives one FAIL line, the count, and exit status 1."""
    good, bad = _record("tc-0019"), _record("tc-0034")
    bad["output_hex"] = "00" * 32
    path = _write(tmp_path / "mixed.jsonl", [good, bad])
    result = _run("--vectors", str(path), "--backend", "reference")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "FAIL tc-0034 (2015 extended blake2s): output differs from the expected value",
        "1 passed, 1 failed",
    ]


def test_invalid_parameters_are_a_failure_not_a_crash(tmp_path: Path) -> None:
    """A vector with parameters twocats refuses fails with the parameter's message."""
    record = _record("tc-0001")
    record["lanes"] = 3
    path = _write(tmp_path / "lanes.jsonl", [record])
    result = _run("--vectors", str(path), "--backend", "reference")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0].startswith(
        "FAIL tc-0001 (2015 extended blake2s): lanes must be a power of two"
    )


def test_any_vector_file_runs(tmp_path: Path) -> None:
    """--vectors runs a project vector file, here the March 2014 one within 64 KiB."""
    path = VECTORS_DIR / "twocats-2014-03.jsonl"
    result = _run("--vectors", str(path), "--backend", "reference", "--max-memory", "64KiB")
    assert result.exit_code == 0, result.output
    # 15 of the file's 68 vectors need at most 64 KiB (mem_cost up to 6 with small blocks), and
    # the work limit refuses none of them.
    assert _within(load_vectors(path), 64 << 10) == 15
    assert result.stdout.splitlines()[-1] == (
        "15 passed, 0 failed, 53 refused (over the limits: raise --max-memory or --max-work)"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json\n", "Error: bad.jsonl, line 1: not valid JSON (Expecting value)"),
        ("\n\n", "Error: bad.jsonl: contains no vectors"),
        ("[1, 2]\n", "Error: bad.jsonl, line 1: a vector must be a JSON object"),
        (
            '{"id": "x", "hash_type": "blake2s"}\n',
            "Error: bad.jsonl, line 1 (x): missing field 'output_hex'",
        ),
        (
            '{"id": "x", "api": "fast", "hash_type": "blake2s"}\n',
            "Error: bad.jsonl, line 1 (x): unknown api 'fast'",
        ),
        (
            '{"id": "x", "hash_type": "blake2s", "output_hex": "zz"}\n',
            "Error: bad.jsonl, line 1 (x): field 'output_hex' is not valid hex",
        ),
    ],
)
def test_bad_files_are_one_error_line(tmp_path: Path, content: str, message: str) -> None:
    """A malformed vector file is one Error: line on standard error and exit status 2."""
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    result = _run("--vectors", str(path), "--backend", "reference")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [message]
    assert result.stdout == ""


def test_missing_file_is_one_error_line(tmp_path: Path) -> None:
    """A vector file that does not exist is one Error: line and exit status 2."""
    path = tmp_path / "absent.jsonl"
    result = _run("--vectors", str(path), "--backend", "reference")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"Error: {path}: cannot be read (No such file or directory)"
    ]


def test_bad_size_is_a_usage_error() -> None:
    """--max-memory needs a size with a unit."""
    result = _run("--max-memory", "lots")
    assert result.exit_code == 2
    assert "expected a size such as 1GiB" in result.stderr


def test_json_reports_counts_and_failures(tmp_path: Path) -> None:
    """--json writes one document with the counts and each failure, and keeps exit status 1."""
    good, bad = _record("tc-0019"), _record("tc-0034")
    bad["output_hex"] = "00" * 32
    path = _write(tmp_path / "mixed.jsonl", [good, bad])
    result = _run("--vectors", str(path), "--backend", "reference", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "backend": "reference",
        "source": "mixed.jsonl",
        "passed": 1,
        "failed": 1,
        "refused": 0,
        "failures": [
            {
                "vector": "tc-0034 (2015 extended blake2s)",
                "reason": "output differs from the expected value",
            }
        ],
        "refusals": [],
    }
