"""The HTTP benchmark's report: the goals' figures per stack, the markdown and the plot.

It reads a result document of :func:`bench.service.flood.run` and measures nothing.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from bench.harness import RESULTS_DIR, heading, measured, write_document
from bench.service.config import HASHERS, STACKS
from twocats._units import format_size

__all__ = ["GOALS", "MIB", "MIN_SAMPLES", "markdown", "plot", "summary", "write"]

MIB = 2**20
GOALS = {
    "kept_256": 0.9,
    "health_p99_ms": 50.0,
    "rss_over_budget_mb": 300.0,
    "unknown_vs_wrong": 0.10,
}
#: The fewest answers of a kind whose median the goals compare.
MIN_SAMPLES = 20


def _rows(rows: list[dict[str, Any]], stack: str, hasher: str, count: int) -> list[dict[str, Any]]:
    key = (stack, hasher, count)
    return [r for r in rows if (r["stack"], r["hasher"], r["connections"]) == key]


def _row(rows: list[dict[str, Any]], stack: str, hasher: str, count: int) -> dict[str, Any] | None:
    mine = _rows(rows, stack, hasher, count)
    return mine[0] if mine else None


def summary(document: dict[str, Any]) -> dict[str, Any]:
    """The goals' figures per stack, measured in this run."""
    config = document["config"]
    rows = [r for r in document["rows"] if not r.get("timing")]
    timed = [r for r in document["rows"] if r.get("timing")]
    counts = sorted({r["connections"] for r in rows})
    if not counts:
        return {}
    low, high = counts[0], counts[-1]
    result: dict[str, Any] = {}
    for stack in sorted({r["stack"] for r in rows}):
        figures: dict[str, Any] = {}
        for hasher in HASHERS:
            base = [r["logins_per_s"] for r in _rows(rows, stack, hasher, low)]
            last = _row(rows, stack, hasher, high)
            if base and last and statistics.mean(base) > 0:
                figures[f"base_{hasher}"] = statistics.mean(base)
                figures[f"kept_{hasher}"] = last["logins_per_s"] / statistics.mean(base)
                # The same per CPU second the workers got: what the flood itself costs,
                # whatever share of the shared machine the service was given.
                per_cpu = [
                    r["logins_per_s"] / r["server_cpu_cores"]
                    for r in _rows(rows, stack, hasher, low)
                    if r["server_cpu_cores"] > 0
                ]
                if per_cpu and last["server_cpu_cores"] > 0:
                    figures[f"cpu_kept_{hasher}"] = (
                        last["logins_per_s"] / last["server_cpu_cores"] / statistics.mean(per_cpu)
                    )
        mine = [r for r in rows if r["stack"] == stack and r["hasher"] == "twocats"]
        last = _row(rows, stack, "twocats", high)
        if last:
            hash_s = config["hash_s"].get(stack, 0.0)
            figures["p99_ms"] = last["p99_ms"]
            figures["p99_bound_ms"] = 1e3 * (config["admission_timeout_s"] + 2 * hash_s)
            figures["health_p99_ms"] = last["health"]["p99_ms"]
        figures["rss_peak_mib"] = max((max(r["rss_peak_mib"]) for r in mine), default=0.0)
        figures["rss_bound_mib"] = (
            config["max_total_memory"][stack] / MIB + GOALS["rss_over_budget_mb"] * 1e6 / MIB
        )
        # Medians of fewer than MIN_SAMPLES answers of either kind say too little to compare.
        compared = [
            r
            for r in timed
            if (r["stack"], r["hasher"]) == (stack, "twocats")
            and r["unknown_vs_wrong"]
            and min(r["kinds"]["unknown"]["answered"], r["kinds"]["wrong"]["answered"])
            >= MIN_SAMPLES
        ]
        figures["unknown_vs_wrong_steps"] = [
            f"{r['connections']}: {r['unknown_vs_wrong']:.2f} "
            f"({r['kinds']['unknown']['answered']}/{r['kinds']['wrong']['answered']})"
            for r in mine
            if r["unknown_vs_wrong"]
        ]
        spreads = [abs(r["unknown_vs_wrong"] - 1) for r in compared]
        figures["unknown_vs_wrong_worst"] = max(spreads, default=None)
        figures["unknown_vs_wrong_timing"] = {
            r["hasher"]: {
                "ratio": r["unknown_vs_wrong"],
                "unknown_ms": r["kinds"]["unknown"]["median_ms"],
                "wrong_ms": r["kinds"]["wrong"]["median_ms"],
                "unknown": r["kinds"]["unknown"]["answered"],
                "wrong": r["kinds"]["wrong"]["answered"],
            }
            for r in timed
            if r["stack"] == stack
        }
        planted = [r["planted_vs_wrong"] for r in mine if r["planted_vs_wrong"]]
        figures["planted_vs_wrong_worst"] = max(planted, default=None)
        figures["planted_answered"] = sum(r["kinds"]["planted"]["answered"] for r in mine)
        everything = [r for r in rows if r["stack"] == stack]
        figures["server_errors"] = {
            r["hasher"]: sum(
                n for code, n in r["status_count"].items() if code.startswith("5") and code != "503"
            )
            for r in everything
        }
        figures["socket_errors"] = {
            hasher: sum(
                sum(r["socket_errors"].values()) for r in everything if r["hasher"] == hasher
            )
            for hasher in HASHERS
        }
        figures["busy_without_retry_after"] = sum(r["busy_without_retry_after"] for r in mine)
        result[stack] = figures
    return result


MS = "{:.0f} ms"


def _fmt(value: float | None, pattern: str = "{:.0f}") -> str:
    return "–" if value is None else pattern.format(value)


def markdown(document: dict[str, Any]) -> str:
    """The report: configuration, one table row per step, and the goals."""
    config = document["config"]
    hashes = ", ".join(f"{1e3 * s:.0f} ms ({k})" for k, s in config["hash_s"].items())
    software = config.get("software", {})
    versions = ", ".join(f"{k} {v}" for k, v in software.items() if v) or "not recorded"
    setup = (
        f"Each stack runs {config['workers']} worker processes on 127.0.0.1 (uvicorn for the "
        f"FastAPI example, gunicorn gthread with {config['django_threads']} threads per worker "
        "for the Django one), SQLite, "
        f"{config['users']} registered users and {config['planted']} planted ones.  twocats: "
        f"{format_size(config['twocats_memory'])} (`{config['twocats']}`), admission timeout "
        f"{config['admission_timeout_s']:g} s, then 503 with Retry-After; argon2id: "
        f"{config['argon2id']} (KiB), as pwdlib and Django run it (threads, no admission "
        f"control).  wrk steps of {config['duration_s']:g} s, twocats and argon2id alternating; "
        "mix 70% valid, 20% wrong password, 9% unknown user, 1% planted hash.  One twocats "
        f"verify alone in the bench process took {hashes} at the start of each stack's steps.  "
        f"Software: {versions}."
    )
    header = (
        "| stack | hasher | conns | answers | logins/s | p50 | p95 | p99 | 200 / 401 / 503 | "
        "other | socket errors | health p99 | RSS peak / worker | valid | wrong | unknown | "
        "planted | unknown/wrong | server CPU | load |"
    )
    start, end = document["load_average_start"], document["load_average_end"]
    lines = [
        *heading(document["title"], measured(document["machine"], start, end), setup),
        "",
        header,
        "|---|---|" + "---:|" * 6 + "---|---|" + "---:|" * 10,
    ]
    for r in document["rows"]:
        share = r["status_share"]
        main = " / ".join(f"{share.get(c, 0):.0%}" for c in ("200", "401", "503"))
        other = ", ".join(
            f"{c}: {s:.1%}" for c, s in share.items() if c not in ("200", "401", "503")
        )
        medians = " | ".join(
            f"{_fmt(k['median_ms'], MS)} ({k['answered']})" for k in r["kinds"].values()
        )
        again = " (again)" if r.get("round") == 2 else ""
        again = " (timing)" if r.get("timing") else again
        lost = r["health"]["failed"]
        failed = f" ({lost} of {r['health']['probes']} unanswered)" if lost else ""
        lines.append(
            f"| {r['stack']} | {r['hasher']} | {r['connections']}{again} | {r['answers']} | "
            f"{r['logins_per_s']:.1f} | "
            f"{_fmt(r['p50_ms'], MS)} | {_fmt(r['p95_ms'], MS)} | {_fmt(r['p99_ms'], MS)} | {main} "
            f"| {other} | {sum(r['socket_errors'].values())} | "
            f"{_fmt(r['health']['p99_ms'], '{:.1f} ms')}{failed} | "
            f"{max(r['rss_peak_mib'], default=0):.0f} MiB | {medians} | "
            f"{_fmt(r['unknown_vs_wrong'], '{:.2f}')} | {r['server_cpu_cores']:.2f} | "
            f"{r['load_before']:.1f} |"
        )
    lines += [
        "",
        (
            "Latencies are wrk's, from sending a login to its answer, over every answer (503s "
            "included); the per-kind columns are the medians of the answers that were not 503 "
            "(how many in brackets).  Health is `GET /health` timed every 50 ms during the step "
            "on its own connection (a probe unanswered after 10 s counts with its 10 s).  Server "
            "CPU is the CPU time the workers used during the step, in cores.  After each step "
            "the bench waits until the server is idle (a server still working after 30 s, "
            "through logins whose connections wrk closed, is restarted), so that no step shares "
            "the machine with the previous one's backlog."
        ),
        "",
        "## Goals (ratios measured in this run)",
        "",
    ]
    for stack, f in document["summary"].items():
        lines += _goal_lines(stack, f, document)
    restarted = [
        f"{r['stack']}/{r['hasher']} after {r['connections']} connections"
        for r in document["rows"]
        if not r.get("drained", True)
    ]
    if restarted:
        lines.append(
            "Restarted because still busy 30 s after the step: " + "; ".join(restarted) + "."
        )
    return "\n".join(lines).rstrip() + "\n"


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def _goal_lines(stack: str, f: dict[str, Any], document: dict[str, Any]) -> list[str]:
    goals = document["goals"]
    counts = sorted({r["connections"] for r in document["rows"] if not r.get("timing")})
    low, high = counts[0], counts[-1]
    lines = [f"**{stack}** (twocats; argon2id beside):", ""]
    if "kept_twocats" in f:
        peer = f.get("kept_argon2id")
        lines.append(
            f"* At {high} connections twocats answers {f['kept_twocats']:.0%} of its {low}-"
            f"connection logins/s ({f['base_twocats']:.1f}/s, mean of the {low}-connection steps "
            f"before and after; goal 90%: {_met(f['kept_twocats'] >= goals['kept_256'])}); "
            f"argon2id {_fmt(peer and 100 * peer)}%."
        )
    if "cpu_kept_twocats" in f:
        peer = f.get("cpu_kept_argon2id")
        lines.append(
            f"* Per CPU second the workers got, twocats answers {f['cpu_kept_twocats']:.0%} as "
            f"many logins at {high} connections as at {low}; argon2id "
            f"{_fmt(peer and 100 * peer)}%."
        )
    if f.get("p99_ms") is not None:
        lines.append(
            f"* p99 at {high} connections {f['p99_ms']:.0f} ms; admission timeout + 2 hashes = "
            f"{f['p99_bound_ms']:.0f} ms ({_met(f['p99_ms'] <= f['p99_bound_ms'])})."
        )
    if f.get("health_p99_ms") is not None:
        lines.append(
            f"* `GET /health` p99 at {high} connections {f['health_p99_ms']:.1f} ms (goal "
            f"50 ms: {_met(f['health_p99_ms'] < goals['health_p99_ms'])})."
        )
    lines.append(
        f"* Peak RSS per worker {f['rss_peak_mib']:.0f} MiB; max_total_memory + 300 MB = "
        f"{f['rss_bound_mib']:.0f} MiB ({_met(f['rss_peak_mib'] <= f['rss_bound_mib'])})."
    )
    worst = f.get("unknown_vs_wrong_worst")
    steps = "; ".join(f["unknown_vs_wrong_steps"])
    timing = f.get("unknown_vs_wrong_timing", {})
    if worst is not None and "twocats" in timing:
        mine, peer = timing["twocats"], timing.get("argon2id")
        verdict = (
            f"{mine['unknown_ms']:.0f} against {mine['wrong_ms']:.0f} ms ({mine['unknown']} and "
            f"{mine['wrong']} answers), {worst:.1%} apart (goal 10%: "
            f"{_met(worst <= goals['unknown_vs_wrong'])})"
        )
        if peer and peer["ratio"]:
            decoy = "Django's own decoy, hashing the password" if stack == "django" else "a decoy"
            verdict += f"; argon2id ({decoy}) {abs(peer['ratio'] - 1):.1%} apart"
    else:
        verdict = f"fewer than {MIN_SAMPLES} answers of each (goal not evaluated)"
    lines.append(
        f"* Unknown users against wrong passwords, median times in the timing step (one "
        f"connection, half of each): {verdict}.  Under load (where the latencies are bimodal: "
        f"the kernel spreads the connections unevenly over the workers, so a median of a few "
        f"dozen answers falls on either mode), connections: unknown / wrong (answers of "
        f"each): {steps}."
    )
    planted = f.get("planted_vs_wrong_worst")
    if planted is not None:
        lines.append(
            f"* Planted hashes ({f['planted_answered']} answered in all): median time at most "
            f"{planted:.2f}x a wrong password's in any step (refused by the limits, then one "
            "decoy verify)."
        )
    errors = sum(f["server_errors"].values())
    lines.append(
        f"* 5xx other than 503: {errors}; 503 without Retry-After: "
        f"{f['busy_without_retry_after']}; socket errors (dropped or timed-out connections): "
        f"twocats {f['socket_errors']['twocats']}, argon2id {f['socket_errors']['argon2id']}."
    )
    return [*lines, ""]


#: The p99 axis' labelled seconds.
_SECONDS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20)


def plot(document: dict[str, Any], path: Path) -> None:
    """Logins/s and p99 latency against connections, one line per stack and hasher."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (rate, p99) = plt.subplots(1, 2, figsize=(11, 4.6))
    colours = {"twocats": "tab:blue", "argon2id": "tab:orange"}
    styles = {"fastapi": ("-", "o"), "django": ("--", "s")}
    for stack in STACKS:
        for hasher in HASHERS:
            ours = [
                r
                for r in document["rows"]
                if (r["stack"], r["hasher"]) == (stack, hasher) and not r.get("timing")
            ]
            mine = [r for r in ours if r.get("round", 1) == 1]
            if not mine:
                continue
            x = [r["connections"] for r in mine]
            line, marker = styles[stack]
            style = {"color": colours[hasher], "linestyle": line, "marker": marker}
            rate.plot(x, [r["logins_per_s"] for r in mine], label=f"{stack} {hasher}", **style)
            # A step without any answer has no latency to plot.
            timed = [r for r in mine if r["p99_ms"] is not None]
            p99.plot([r["connections"] for r in timed], [r["p99_ms"] / 1e3 for r in timed], **style)
            # The step repeated at the end, as a hollow marker.
            for again in (r for r in ours if r.get("round", 1) == 2):
                hollow = {"color": colours[hasher], "marker": marker, "fillstyle": "none"}
                rate.plot([again["connections"]], [again["logins_per_s"]], **hollow)
                if again["p99_ms"] is not None:
                    p99.plot([again["connections"]], [again["p99_ms"] / 1e3], **hollow)
    config = document["config"]
    p99.axhline(config["admission_timeout_s"], color="grey", linewidth=0.8, linestyle=":")
    p99.annotate(
        "admission timeout",
        (8, config["admission_timeout_s"]),
        fontsize=8,
        color="grey",
        xytext=(2, 3),
        textcoords="offset points",
    )
    for axes, label in ((rate, "logins/s (200 and 401 answers)"), (p99, "p99 latency (s)")):
        axes.set_xscale("log", base=2)
        axes.set_xticks(sorted({r["connections"] for r in document["rows"] if not r.get("timing")}))
        axes.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        axes.set_xlabel("concurrent connections (wrk)")
        axes.set_ylabel(label)
        axes.grid(True, alpha=0.3)
    p99.set_yscale("log")
    p99.yaxis.set_major_locator(matplotlib.ticker.FixedLocator(_SECONDS))
    p99.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    p99.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    rate.set_ylim(bottom=0)
    rate.legend(fontsize=8)
    info = document["machine"]
    figure.suptitle(
        f"Login service under a flood: {format_size(config['twocats_memory'])} twocats vs "
        f"argon2id, {config['workers']} workers per stack",
        fontsize=11,
    )
    start, end = document["load_average_start"], document["load_average_end"]
    figure.text(
        0.5,
        0.01,
        f"{info.get('cpu', '?')} ({info['cpus']} usable CPUs), {info['date']}; load average "
        f"{start[0]:.1f} at the start, {end[0]:.1f} at the end (shared machine)\nHollow: the "
        "first step repeated at the end.  No p99 point: no answer within the step.",
        ha="center",
        fontsize=8,
        color="dimgrey",
    )
    figure.tight_layout(rect=(0, 0.07, 1, 0.95))
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write(document: dict[str, Any], out_dir: Path | None) -> None:
    """Write http.json, http.md and http.png, and print the markdown."""
    target = RESULTS_DIR if out_dir is None else out_dir
    write_document("http", document, markdown(document), target)
    plot(document, target / "http.png")
