"""The C reference suite: its table, ratios and output check, on stand-ins for the C programs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench.matrix import cref

# A stand-in for the C bench: the arguments of bench.c, the hash computed by this library (or a
# wrong one), and the line bench.c prints.
FAKE_BENCH = """\
#!{python}
import sys
from twocats import Params
from twocats.kdf import Engine
m, M, l, P, reps, fresh, ht = sys.argv[1:]
params = Params(hash_type=ht, mem_cost=int(m), lanes=int(l), multiplies=int(M),
                parallelism=int(P), block_size=16384, sub_block_size=64)
out = Engine("simd").derive(b"password", b"saltsalt", params)[:4].hex()
print(f"best {seconds} s  1.00 GB/s  out {{'{wrong}' or out}}")
"""

FAKE_CHAIN = """\
#!/bin/sh
echo "chain step 2.500 ns (a=1)"
echo "chain-bound 1GiB l8 M2: 0.168 s = 6.39 GB/s; l16 M2: 0.084 s"
"""


def _program(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def _fake_cref(folder: Path, *, seconds: str = "0.5", wrong: str = "") -> tuple[Path, Path]:
    """Write the two C fills and the chain probe as stand-ins; return the folder and the probe."""
    folder.mkdir()
    bench = FAKE_BENCH.format(python=sys.executable, seconds=seconds, wrong=wrong)
    for name in ("bench-opt", "bench-ref"):
        _program(folder / name, bench)
    return folder, _program(folder / "chain", FAKE_CHAIN)


def test_table_ratios_and_chain_bound_from_one_run(tmp_path: Path) -> None:
    """Every setting gets its row, the C outputs agree, and the ratios use the best seconds."""
    folder, chain = _fake_cref(tmp_path / "cref")
    out = tmp_path / "results"
    argv = ["--cref", str(folder), "--chain", str(chain), "--mem-cost", "10", "--out", str(out)]
    assert cref.main([*argv, "--rounds", "1", "--repeats", "1"]) == 0
    document = json.loads((out / "cref.json").read_text())
    assert document["output_mismatches"] == []
    assert document["chain_step_ns"] == pytest.approx(2.5)
    steps = (1024 << 10) // 32 * 2
    assert document["chain_bound_s"]["blake2s l8 M2"] == pytest.approx(steps * 2.5e-9)
    labels = {ratio["label"]: ratio for ratio in document["ratios"]}
    versus = labels["blake2s l8 M2 P1: twocats simd / C opt"]
    simd = next(r for r in document["rows"] if r["key"] == "blake2s l8 M2 P1/twocats simd")
    assert versus["ratio"] == pytest.approx(0.5 / simd["best_s"])
    assert versus["goal"] == cref.GOAL_VS_C
    assert labels["blake2s l8 M2 P1: chain bound / twocats simd"]["goal"] == cref.GOAL_CHAIN
    assert labels["blake2s l8 M2: P2 / P1, twocats simd"]["goal"] == cref.GOAL_P2
    contenders = {(r["setting"], r["contender"]) for r in document["rows"]}
    for setting in cref.SETTINGS:
        assert (setting.label, "twocats scalar") in contenders
        assert ((setting.label, "C ref") in contenders) == (setting.parallelism == 1)
    markdown = (out / "cref.md").read_text()
    assert "| blake2s l8 M2 P1 |" in markdown
    assert "2.500 ns per step" in markdown


def test_a_wrong_c_output_fails_the_run(tmp_path: Path) -> None:
    """A C hash that differs from this library's is reported and the run's status is 1."""
    folder, chain = _fake_cref(tmp_path / "cref", wrong="00000000")
    out = tmp_path / "results"
    argv = ["--cref", str(folder), "--chain", str(chain), "--mem-cost", "10", "--out", str(out)]
    assert cref.main([*argv, "--rounds", "1", "--repeats", "1"]) == 1
    document = json.loads((out / "cref.json").read_text())
    assert len(document["output_mismatches"]) == len(cref.SETTINGS)


def test_without_the_c_reference_the_suite_says_how_to_build_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing C reference is one clear message and status 2, and no result file."""
    out = tmp_path / "results"
    missing = tmp_path / "nothing"
    argv = ["--cref", str(missing), "--chain", str(missing / "chain"), "--out", str(out)]
    assert cref.main(argv) == 2
    message = capsys.readouterr().err
    assert "build.sh" in message
    assert str(missing) in message
    assert not out.exists()


def test_smoke_runs_without_the_c_reference(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The smoke run measures this library alone where no C reference is built, goals off."""
    monkeypatch.setattr(cref, "CREF", tmp_path / "none")
    monkeypatch.setattr(cref, "CHAIN", tmp_path / "none" / "chain")
    assert cref.smoke() == 0
    text = capsys.readouterr().out
    assert "The C reference was not run" in text
    assert "| NO |" not in text
    assert "| blake2s l8 M2 P1 |" in text
