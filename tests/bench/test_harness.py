"""The bench harness's tables and the suites' command lines, without timing anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import SUITES, harness
from bench.__main__ import main as bench_main
from bench.harness import Report, context
from twocats.perf.samples import Samples


def test_timing_statistics() -> None:
    """Median, fastest, slowest and spread of a set of samples."""
    timing = Samples((0.4, 0.1, 0.2, 0.3, 0.5))
    assert timing.median == 0.3
    assert (timing.fastest, timing.slowest) == (0.1, 0.5)
    assert timing.spread == pytest.approx((0.5 - 0.1) / 0.3)


def _report() -> Report:
    report = Report("sample", "A sample suite")
    report.record("fast", Samples((0.001, 0.002, 0.003)), items=1000, nbytes=4_000_000, size="4 MB")
    report.record("slow", Samples((0.004, 0.004, 0.004)), size="4 MB")
    report.notes.append("made by hand")
    return report


def test_record_derives_per_item_and_bandwidth() -> None:
    """A row carries the median, best, spread, ns per item and MB/s of its timing."""
    fast, slow = _report().rows
    assert fast == {
        "key": "fast",
        "size": "4 MB",
        "median_s": 0.002,
        "best_s": 0.001,
        "spread": pytest.approx(1.0),
        "repeats": 3,
        "ns_per_item": pytest.approx(2000.0),
        "mb_per_s": pytest.approx(2000.0),
    }
    assert "ns_per_item" not in slow
    assert "mb_per_s" not in slow


def test_ratio_is_median_over_median_against_a_goal() -> None:
    """A ratio is the slower median over the faster one, met when it reaches the goal."""
    report = _report()
    assert report.ratio("fast vs slow", faster="fast", slower="slow", goal=1.5) == 2.0
    assert report.ratio("no goal", faster="fast", slower="slow") == 2.0
    assert report.ratio("missed", faster="fast", slower="slow", goal=3) == 2.0
    assert [(r["label"], r["met"]) for r in report.ratios] == [
        ("fast vs slow", True),
        ("no goal", None),
        ("missed", False),
    ]


def test_markdown_tables() -> None:
    """The markdown has the ratio table, the row table with units, and the notes."""
    report = _report()
    report.ratio("fast vs slow", faster="fast", slower="slow", goal=1.5)
    lines = report.markdown().splitlines()
    assert lines[0] == "# A sample suite"
    assert lines[2].startswith("Measured ")
    assert lines[4:] == [
        "| ratio | value | goal | met |",
        "|---|---:|---:|:---:|",
        "| fast vs slow | 2.00x | 1.5x | yes |",
        "",
        "| size | median | spread | ns/item | MB/s |",
        "|---|---|---|---|---|",
        "| 4 MB | 2.000 ms | 100% | 2000.0 | 2000 |",
        "| 4 MB | 4.000 ms | 0% |  |  |",
        "",
        "* made by hand",
    ]


def test_write_puts_json_and_markdown_side_by_side(tmp_path: Path) -> None:
    """write() makes <suite>.json and <suite>.md with the same content as the report."""
    report = _report()
    paths = report.write(tmp_path, echo=False)
    assert [path.name for path in paths] == ["sample.json", "sample.md"]
    document = json.loads((tmp_path / "sample.json").read_text())
    assert document["rows"] == json.loads(json.dumps(report.rows))
    assert document["machine"]["cpus"] is not None
    written = (tmp_path / "sample.md").read_text().splitlines()
    again = report.markdown(document).splitlines()
    # Only the machine line differs: JSON gives the load average back as a list, not a tuple.
    assert written[:2] + written[3:] == again[:2] + again[3:]
    assert written[2].startswith("Measured ")
    assert harness.RESULTS_DIR.name == "results"


def test_entry_point_help_and_unknown_suite(capsys: pytest.CaptureFixture[str]) -> None:
    """python -m bench --help lists the suites; an unknown suite is exit status 2."""
    assert bench_main(["--help"]) == 0
    out = capsys.readouterr().out
    assert f"suites: {', '.join(SUITES)}" in out
    assert bench_main(["nosuch"]) == 2
    assert "unknown suite 'nosuch'" in capsys.readouterr().err


@pytest.mark.parametrize("suite", ["kdf", "modes", "primitives", "threads", "lsh-neon"])
def test_suite_parsers_refuse_bad_options(suite: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Each suite's command line refuses unknown options and non-numbers with exit status 2."""
    with pytest.raises(SystemExit) as caught:
        bench_main([suite, "--no-such-option"])
    assert caught.value.code == 2
    assert "unrecognized arguments: --no-such-option" in capsys.readouterr().err
    with pytest.raises(SystemExit) as caught:
        bench_main([suite, "--repeats", "many"])
    assert caught.value.code == 2
    assert "argument --repeats: invalid int value: 'many'" in capsys.readouterr().err


def test_lsh_neon_refuses_a_missing_kisa_library(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bench lsh-neon names a --kisa-lib that is not a file and a --count below 1 (status 2)."""
    missing = tmp_path / "liblsh.so"
    for options, message in (
        (["--kisa-lib", str(missing)], f"argument --kisa-lib: no such file: {missing}"),
        (["--count", "0"], "argument --count: must be at least 1, got 0"),
    ):
        with pytest.raises(SystemExit) as caught:
            bench_main(["lsh-neon", *options, "--out", str(tmp_path)])
        assert caught.value.code == 2
        assert message in capsys.readouterr().err


def test_the_machine_record_counts_usable_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """A report's machine record and its sentences give the CPUs twocats._machine can use."""
    monkeypatch.setattr(context, "usable_cpus", lambda: 3)
    info = harness.machine()
    assert info["cpus"] == 3
    assert harness.measured_on(info).endswith("(3 usable CPUs)")
    assert harness.load_note([1.0, 2.0, 3.0], None) == (
        "Load average (1, 5, 15 min) before: 1.00, 2.00, 3.00; after: unknown on 3 usable CPUs."
    )
