"""The documentation's figures, written from ``bench/results/*.json``: ``python -m bench docs``.

The README's summary comes from one file, ``headline.json``, which ``python -m bench headline``
writes in one short run on one machine; so its figures never mix machines or dates.  To refresh
it: ``python -m bench headline && python -m bench docs``.  The Performance page adds the figures
of every other suite, each naming its own machine.  The walk through ``twocats tune`` on
``docs/parameters.md`` shows what ``python -m bench tune --for django --walkthrough`` recorded in
``tune_runs.json``: the command's output and the independent check of its answer.

Every time, size and ratio that ``docs/performance.md`` and the README's summary show comes from a
result file written by a benchmark suite, together with the machine it was measured on; no figure
is typed by hand.  ``python -m bench docs --check`` (run by ``.ci/run``) fails when the pages differ
from what the result files give, so a new measurement cannot leave a stale page behind.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from bench.attacker.gpu import docs_section as gpu_section
from bench.harness import RESULTS_DIR
from bench.matrix.publish import performance_section
from bench.startup.processes import WHEEL_HASH

__all__ = [
    "README_END",
    "README_START",
    "TUNE_END",
    "TUNE_START",
    "headline_lines",
    "main",
    "page",
    "readme_block",
    "summary_lines",
]

ROOT = RESULTS_DIR.parent.parent
PAGE = ROOT / "docs" / "performance.md"
README = ROOT / "README.md"
README_START = "<!-- figures: written by python -m bench docs from bench/results; do not edit -->"
README_END = "<!-- /figures -->"
PARAMETERS = ROOT / "docs" / "parameters.md"
TUNE_START = "<!-- tune output: written by python -m bench docs from bench/results; do not edit -->"
TUNE_END = "<!-- /tune output -->"

#: The generated blocks of pages bench docs does not write whole: (start, end) markers.
_BLOCKS = ((README_START, README_END), (TUNE_START, TUNE_END))

# A measured time typed into prose ("takes 0.3 s", "about 9 s"): only the generated pages hold one.
_TYPED_TIME = re.compile(r"\b(?:about|takes|took|in) [0-9]+(?:\.[0-9]+)? ?(?:ms|s)\b")


def _load(name: str) -> dict[str, Any]:
    return dict(json.loads((RESULTS_DIR / f"{name}.json").read_text()))


def _date(text: str) -> str:
    try:
        return datetime.datetime.fromisoformat(text).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return text


def _machine(info: dict[str, Any], load: Sequence[float] | None = None) -> str:
    """One line naming where a suite's report was measured (`load`: the load average to show)."""
    load = load or info.get("load_average") or []
    shown_load = f", load average {load[0]:.1f}" if load else ""
    return (
        f"{info.get('cpu', '?')} ({info.get('simd_isa', '?')}), {info['cpus']} CPUs, "
        f"Python {info['python']}, numba {info.get('numba')}; {_date(info['date'])}{shown_load}"
    )


def _rows(document: dict[str, Any], **match: object) -> list[dict[str, Any]]:
    return [row for row in document["rows"] if all(row.get(k) == v for k, v in match.items())]


def _one(document: dict[str, Any], **match: object) -> dict[str, Any]:
    rows = _rows(document, **match)
    if len(rows) != 1:
        raise ValueError(f"{document.get('suite')}: {len(rows)} rows match {match}")
    return rows[0]


def _ratio(document: dict[str, Any], label: str) -> float:
    for ratio in document["ratios"]:
        if ratio["label"] == label:
            return float(ratio["ratio"])
    raise ValueError(f"{document.get('suite')}: no ratio {label!r}")


def _source(name: str, root: str) -> str:
    """A link to a report from the README; on a docs page (`root` set), its path."""
    return f"`bench/results/{name}`" if root else f"[{name}](bench/results/{name})"


def _login(root: str) -> str:
    load = _load("load")
    one = _one(load, library="twocats", mode="threads", callers=1)
    peer = load["summary"]["argon2-cffi"]["best_unloaded_verifies_per_s"]
    return (
        f"- **Per login, default profile** (`MODERATE`, 256 MiB, 2 threads): "
        f"{one['p50_ms']:.0f} ms median wall-clock and {one['cpu_ms_per_verify']:.0f} ms of CPU "
        f"per verify; {one['verifies_per_s']:.1f} verifies/s on the machine's "
        f"{load['machine']['cpus']} cores, against {peer:.1f}/s for argon2-cffi at the same memory "
        f"(t=1, p=2). Measured on {_machine(load['machine'], load['load_average_start'])} "
        f"({_source('load.md', root)})."
    )


def _under_load(root: str) -> str:
    load = _load("load")
    most = max(r["callers"] for r in _rows(load, library="twocats", mode="threads"))
    ours = _one(load, library="twocats", mode="threads", callers=most)
    peer_most = max(r["callers"] for r in _rows(load, library="argon2-cffi", mode="threads"))
    peer = _one(load, library="argon2-cffi", mode="threads", callers=peer_most)
    kept = load["summary"]["twocats"]["kept"][str(most)]
    return (
        f"- **Under load**: {most} threads verifying at once keep {kept:.0%} of the unloaded "
        f"rate in {ours['peak_rss_mib']:,.0f} MiB (argon2-cffi: {peer['peak_rss_mib']:,.0f} MiB "
        f"at {peer_most} threads), because a hasher admits only as many hashes as the cores "
        f"and memory hold ({_source('load.md', root)})."
    )


def _cref_ratios(cref: dict[str, Any]) -> tuple[float, float, float]:
    """The C reference run's least and greatest twocats / C ratio and its 8-lane share of the
    chain bound."""
    versus = [r["ratio"] for r in cref["ratios"] if r["label"].endswith("twocats simd / C opt")]
    share = _ratio(cref, "blake2s l8 M2 P1: chain bound / twocats simd")
    return min(versus), max(versus), share


def _fill(root: str) -> str:
    cref = _load("cref")
    least, most, share = _cref_ratios(cref)
    row = _one(cref, setting="blake2s l8 M2 P1", contender="twocats simd")
    argon2 = _ratio(cref, "blake2s l8 M2 P1: twocats simd / argon2id (t=1, same memory)")
    return (
        f"- **Fill rate** (blake2s, 8 lanes, multiplies 2, 1 GiB, one thread): "
        f"{row['best_gbps']:.2f} GB/s, {argon2:.2f}x argon2id's (t=1, p=1, same memory) and "
        f"{share:.0%} of the bound its multiply chain sets; {least:.2f}x to {most:.2f}x the speed "
        f"of the C reference's optimised fill over 8 settings (1 GiB, 8 and 16 lanes, multiplies "
        f"2 and 0, 1 and 2 threads). Measured on {_machine(cref['machine'])} "
        f"({_source('cref.md', root)})."
    )


def _cref_section() -> list[str]:
    cref = _load("cref")
    least, most, share = _cref_ratios(cref)
    goals = [r for r in cref["ratios"] if r["goal"] is not None]
    missed = [r["label"] for r in goals if not r["met"]]
    argon2 = cref["argon2id_s"]
    return [
        (
            "`derive` against the optimised and plain fills of the public C reference "
            "(waywardgeek/twocats, compiled with `gcc -O3 -march=native`) on the same memory and "
            "parameters, best seconds of a rotated run, every output checked against the C hash; "
            "`scalar` is this library built without vector instructions."
        ),
        "",
        *cref["table"],
        "",
        (
            f"- twocats (simd) runs {least:.2f}x to {most:.2f}x the speed of the C reference's "
            f"optimised fill; the multiply chain alone takes {cref['chain_step_ns']:.3f} ns per "
            f"step, so blake2s with 8 lanes and multiplies 2 on one thread runs at {share:.0%} "
            "of the bound the chain sets."
        ),
        (
            f"- argon2id (t=1, same memory, fresh memory on every call): {argon2['1']:.3f} s on "
            f"one thread, {argon2['2']:.3f} s on two."
        ),
        (
            f"- Goals met: {len(goals) - len(missed)} of {len(goals)}"
            + (f"; missed: {', '.join(missed)}." if missed else ".")
        ),
        "",
        f"Measured on {_machine(cref['machine'])} with `python -m bench cref`.",
    ]


def _startup(root: str) -> str:
    compile_ = _load("compile-startup")
    new = compile_["startup"]["new"]
    return (
        f"- **First run**: the first hash in a fresh process with an empty kernel cache takes "
        f"{new['first_hash_s']:.1f} s ({new['first_hash_cpu_s']:.1f} s of CPU), and "
        f"`twocats warmup --all` "
        f"compiles every kernel in {new['warmup_all_s']:.0f} s ({new['warmup_all_cpu_s']:.0f} s "
        f"of CPU). Measured on {_machine(compile_['machine'])} "
        f"({_source('compile-startup.md', root)})."
    )


def _argon2_equal_memory(startup: dict[str, Any]) -> dict[str, float]:
    """argon2-cffi's process at the profile's memory, from a ``bench startup`` report."""
    (figures,) = (
        value
        for label, value in startup["commands"].items()
        if label.startswith("argon2-cffi hash, equal memory")
    )
    return dict(figures)


def _processes(root: str) -> str:
    startup = _load("startup")
    commands = startup["commands"]
    warm = commands["new: twocats hash"]
    heavy = startup["heavy_imports"]["twocats hash"]
    return (
        f"- **Start-up** (`MODERATE`, whole processes): `twocats hash` with its kernels built "
        f"takes {warm['wall_s']:.2f} s, {startup['hash_share_of_process']:.0%} of it the hash "
        f"itself, against {_argon2_equal_memory(startup)['wall_s']:.2f} s for argon2-cffi's "
        f"process at equal memory, and imports {' and '.join(heavy) or 'neither numba nor numpy'}"
        f"; installed from the platform wheel, the first hash takes "
        f"{commands[WHEEL_HASH]['wall_s']:.2f} s with an empty kernel cache, where compiling "
        f"takes {startup['first_hash']['new']['wall_s']:.1f} s; `twocats --help` takes "
        f"{commands['new: twocats --help']['wall_s']:.2f} s. Measured on "
        f"{_machine(startup['machine'])} ({_source('startup.md', root)})."
    )


def _adapters(root: str) -> str:
    adapters = _load("adapters")
    worst = max(
        ratio["ratio"]
        for ratio in adapters["ratios"]
        if ratio["label"].startswith("INTERACTIVE, cpu time")
    )
    return (
        f"- **Framework adapters** (Django, pwdlib, libpass) at `INTERACTIVE`: at most "
        f"{worst - 1:.1%} more CPU time than a bare `PasswordHasher.verify` "
        f"({_source('adapters.md', root)})."
    )


def _bulk(root: str) -> str:
    bulk = _load("bulk")
    return (
        f"- **Bulk upgrade**: on SQLite one Dask worker spends "
        f"{1 / _ratio(bulk, 'sqlite: 1 worker / bare loop, CPU seconds (all processes)'):.2f}x "
        f"the CPU seconds of a bare loop of `upgrade`, and two workers finish "
        f"{_ratio(bulk, 'sqlite: 2 workers / 1 worker, wall-clock'):.2f}x as fast as one "
        f"({_source('bulk.md', root)})."
    )


def headline_lines(root: str) -> list[str]:
    """The headline bullets, all from one run of ``python -m bench headline``."""
    head = _load("headline")
    login, fill, processes = head["login"], head["fill"], head["processes"]
    ours, peer = login["twocats"], login["argon2_cffi"]
    load = head["load_average_start"] or []
    end = head["load_average_end"] or []
    loads = f", load average {load[0]:.1f} before and {end[0]:.1f} after" if load and end else ""
    others = (
        ""
        if root
        else "; the load, compile, adapter and bulk figures, each with its machine, are on the "
        "[Performance](docs/performance.md) page"
    )
    shown = _machine({**head["machine"], "load_average": None})
    return [
        (
            f"- **Per login, default profile** (`{login['profile'].upper()}`, "
            f"{login['memory_bytes'] >> 20} MiB, {login['parallelism']} threads): "
            f"{ours['wall_s'] * 1e3:.0f} ms wall-clock and {ours['cpu_s'] * 1e3:.0f} ms of CPU "
            f"per verify, against {peer['wall_s'] * 1e3:.0f} ms and {peer['cpu_s'] * 1e3:.0f} ms "
            f"for argon2-cffi at the same memory (t=1, p={login['parallelism']})."
        ),
        (
            f"- **Fill rate** (blake2s, 8 lanes, multiplies 2, {fill['memory_bytes'] >> 30} GiB, "
            f"one thread): {fill['twocats_bytes_per_s'] / 1e9:.2f} GB/s, "
            f"{fill['twocats_bytes_per_s'] / fill['argon2id_bytes_per_s']:.2f}x argon2id's "
            "(t=1, p=1, same memory)."
        ),
        (
            f"- **Processes** (`{login['profile'].upper()}`): the first `twocats hash` with an "
            f"empty kernel cache takes {processes['first_hash']['wall_s']:.1f} s "
            f"({processes['first_hash']['cpu_s']:.1f} s of CPU: it compiles); with its cache, "
            f"{processes['warm_hash']['wall_s']:.2f} s, against "
            f"{processes['argon2_cffi_hash']['wall_s']:.2f} s for argon2-cffi's process at equal "
            f"memory; `twocats --help` takes {processes['help']['wall_s']:.2f} s."
        ),
        (
            f"- All measured in one run of `python -m bench headline` on "
            f"{shown}{loads} ({_source('headline.md', root)}){others}."
        ),
    ]


_SUMMARY: tuple[Callable[[str], str], ...] = (
    _login,
    _under_load,
    _fill,
    _startup,
    _processes,
    _adapters,
    _bulk,
)


def summary_lines(root: str) -> list[str]:
    """The summary bullets; `root` is the path from the page to the repository's top."""
    return [line(root) for line in _SUMMARY]


def _load_table() -> list[str]:
    load = _load("load")
    lines = [
        (
            "| callers (threads) | twocats verifies/s | median ms | peak RSS | "
            "argon2-cffi verifies/s | median ms | peak RSS |"
        ),
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for ours in _rows(load, library="twocats", mode="threads"):
        peer = _rows(load, library="argon2-cffi", mode="threads", callers=ours["callers"])
        theirs = (
            f"{peer[0]['verifies_per_s']:.1f} | {peer[0]['p50_ms']:,.0f} | "
            f"{peer[0]['peak_rss_mib']:,.0f} MiB"
            if peer
            else "not run | | "
        )
        lines.append(
            f"| {ours['callers']} | {ours['verifies_per_s']:.1f} | {ours['p50_ms']:,.0f} | "
            f"{ours['peak_rss_mib']:,.0f} MiB | {theirs} |"
        )
    lines += [
        "",
        (
            f"Measured on {_machine(load['machine'], load['load_average_start'])} with "
            "`python -m bench load` (load average at the start)."
        ),
    ]
    for note in load.get("notes", []):
        lines += ["", note.rstrip(".") + "."]
    return lines


def _compare_table(root: str) -> list[str]:
    compare = _load("compare")
    lines = [
        "| comparison | algorithm | parameters | memory | seconds (median) | CPU seconds |",
        "|---|---|---|---:|---:|---:|",
    ]
    for row in compare["rows"]:
        lines.append(
            f"| {row['comparison']} | {row['algorithm']} | `{row['parameters']}` | "
            f"{row['memory_bytes'] / 2**20:,.0f} MiB | {row['seconds']:.3f} | "
            f"{row['cpu_seconds']:.3f} |"
        )
    lines += [
        "",
        (
            f"![TwoCats, argon2id and scrypt at equal memory and at equal time]"
            f"({root}bench/results/compare.png)"
        ),
        "",
        (
            f"Measured with `twocats compare --profile moderate --json --plot` "
            f"(`{compare['phc_prefix']}`; {compare['runs']} interleaved rounds, the median of "
            f"each row; `{compare['backend']}` backend, load average "
            f"{compare['load_average_start']:.1f} at the start and "
            f"{compare['load_average']:.1f} at the end).  At equal CPU time TwoCats filled "
            f"{compare['equal_time']['ratio']:.2f} times the memory of argon2id (95% interval "
            f"{compare['equal_time']['low']:.2f}-{compare['equal_time']['high']:.2f}).  "
            "`bench/results/compare.json` records neither the machine nor the date: run "
            "`twocats compare` to see the figures of yours."
        ),
    ]
    return lines


def _table(head: Sequence[str], rows: Iterable[str], measured: str) -> list[str]:
    """A table of `rows` under `head` (the first column left, the others right), then `measured`."""
    return [
        "| " + " | ".join(head) + " |",
        "|---|" + "---:|" * (len(head) - 1),
        *rows,
        "",
        measured,
    ]


def _startup_table() -> list[str]:
    compile_ = _load("compile-startup")
    new = compile_["startup"]["new"]
    rows = [
        ("first `twocats hash`, empty kernel cache", "first_hash"),
        ("`twocats warmup --all`, empty kernel cache", "warmup_all"),
    ]
    return _table(
        ("what", "wall-clock s", "CPU s"),
        (f"| {label} | {new[f'{key}_s']:.2f} | {new[f'{key}_cpu_s']:.2f} |" for label, key in rows),
        f"Measured on {_machine(compile_['machine'])} with `python -m bench compile` "
        f"(commit {compile_['commit'][:7]}); `import twocats` loads numba: "
        f"{'yes' if new['import_loads_numba'] else 'no'}.",
    )


def _processes_table() -> list[str]:
    startup = _load("startup")
    old = f"; `old` is {startup['against']}" if startup.get("against") else ""
    return _table(
        ("process", "wall-clock s", "CPU s"),
        (
            f"| {label} | {figures['wall_s']:.3f} | {figures['cpu_s']:.3f} |"
            for label, figures in startup["commands"].items()
        ),
        f"Whole processes at the `{startup['profile']}` profile, medians of "
        f"{startup['runs']} runs taking turns, measured on {_machine(startup['machine'])} "
        f"with `python -m bench startup` (commit {startup['commit'][:7]}{old}).",
    )


def _bulk_table() -> list[str]:
    bulk = _load("bulk")
    return [
        *_table(
            ("mode", "wall-clock s", "CPU s (all processes)"),
            (
                f"| {row['mode']} | {row['median_s']:.1f} | {row['cpu_s']:.1f} |"
                for row in bulk["rows"]
            ),
            f"Measured on {_machine(bulk['machine'])} with `python -m bench bulk`.",
        ),
        *bulk["notes"][:1],
    ]


def page() -> str:
    """Return ``docs/performance.md``."""
    root = "../"
    matrix = performance_section(_load("matrix"), root=root, heading="")
    lines = [
        "# Performance",
        "",
        "<!-- Written by python -m bench docs from bench/results/*.json; do not edit. -->",
        "",
        (
            "Every figure on this page is read from a result file in `bench/results/`, written by "
            "the benchmark suite named beside it, and names the machine it was measured on. "
            "`python -m bench docs` rewrites this page and the README's summary from those files; "
            "CI checks that they match."
        ),
        "",
        "## Summary",
        "",
        *headline_lines(root),
        "",
        "## Every suite's headline",
        "",
        *summary_lines(root),
        "",
        "## Verifying under load",
        "",
        *_load_table(),
        "",
        "## Against argon2id and scrypt",
        "",
        *_compare_table(root),
        "",
        "## Against the C reference",
        "",
        *_cref_section(),
        "",
        "## Fill rate by lanes and instruction set",
        "",
        matrix.rstrip("\n"),
        "",
        "## Start-up and compile time",
        "",
        *_startup_table(),
        "",
        *_processes_table(),
        "",
        "## Bulk upgrade",
        "",
        *_bulk_table(),
        "",
        "## On an attacker's GPU",
        "",
        *gpu_section(_load("gpu") if (RESULTS_DIR / "gpu.json").exists() else None),
        "",
    ]
    return "\n".join(lines)


def readme_block() -> str:
    """Return the README's summary, between its markers."""
    return "\n".join([README_START, *headline_lines(""), README_END])


def tune_block() -> str:
    """Return the walk through ``twocats tune`` of docs/parameters.md, between its markers."""
    document = _load("tune_runs")
    walk, summary = document["walkthrough"], document["summary"]
    after = walk["load_after"]
    ending = f" ({after[0]:.1f} at the end)" if after else ""
    measured = (
        f"Measured on {_machine(document['machine'], walk['load_before'])}{ending}, a shared "
        "machine whose other jobs' work is part of the times:"
    )
    checks = [run["check"] for run in document["runs"] if "check" in run]
    checked = "; ".join(
        f"median {check['median_seconds'] * 1000:.0f} ms, 95th percentile "
        f"{check['p95_seconds'] * 1000:.0f} ms over {check['verifications']} verifications"
        for check in checks
    )
    return "\n".join(
        [
            TUNE_START,
            "",
            measured,
            "",
            "```text",
            walk["output"].rstrip("\n"),
            "```",
            "",
            (
                f"Before it, `python -m bench tune --for django` ran the same command "
                f"{summary['runs']} time{'s' if summary['runs'] != 1 else ''} with `--json` and "
                "checked each answer independently, building the hasher from the printed "
                "settings and verifying with "
                f"it, {document['concurrent']} at once, for {document['check_seconds']:g} s: "
                f"{checked or 'nothing fitted'} (budget {document['time']}; the hasher had the "
                f"bounds printed in {summary['bounds_as_printed']} of {len(checks)})."
            ),
            "",
            TUNE_END,
        ]
    )


def _with_block(text: str, start_marker: str, end_marker: str, block: str) -> str:
    start, end = text.find(start_marker), text.find(end_marker)
    if start < 0 or end < start:
        raise ValueError(f"a page lacks the markers {start_marker!r} ... {end_marker!r}")
    return text[:start] + block + text[end + len(end_marker) :]


def typed_figures() -> list[str]:
    """Return 'path:line' for each measured time typed into a page that bench docs does not write.

    The pages are the docs' other pages and the README, outside the blocks bench docs writes;
    they link to the Performance page instead.
    """
    found = []
    pages = [path for path in sorted((ROOT / "docs").glob("*.md")) if path != PAGE]
    for path in [README, *pages]:
        text = path.read_text()
        for start_marker, end_marker in _BLOCKS:
            if start_marker in text:
                start, end = text.index(start_marker), text.index(end_marker)
                text = text[:start] + "\n" * text.count("\n", start, end) + text[end:]
        for number, line in enumerate(text.splitlines(), start=1):
            if _TYPED_TIME.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or with ``--check`` compare) the performance page and the README's summary."""
    parser = argparse.ArgumentParser(prog="python -m bench docs", description=__doc__)
    parser.add_argument(
        "--check", action="store_true", help="fail if the pages differ from the result files"
    )
    args = parser.parse_args(argv)
    wanted = {
        PAGE: page(),
        README: _with_block(README.read_text(), README_START, README_END, readme_block()),
        PARAMETERS: _with_block(PARAMETERS.read_text(), TUNE_START, TUNE_END, tune_block()),
    }
    stale = [path for path, text in wanted.items() if not path.exists() or path.read_text() != text]
    typed = typed_figures()
    for place in typed:
        print(f"{place}: a measured time typed by hand; link to docs/performance.md instead")
    if args.check:
        for path in stale:
            print(f"{path.relative_to(ROOT)} differs from bench/results: run python -m bench docs")
        return 1 if stale or typed else 0
    for path in stale:
        path.write_text(wanted[path])
        print(f"wrote {path.relative_to(ROOT)}")
    if not stale:
        print("the pages already match bench/results; nothing written")
    return 0
