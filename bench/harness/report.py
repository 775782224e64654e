"""Reports: their rows and ratios, their markdown, and the result files they are written to."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.harness.context import REPO, load_text, machine, measured, measured_on
from twocats.perf.samples import Samples

__all__ = ["RESULTS_DIR", "Report", "heading", "markdown_head", "print_markdown", "write_document"]

#: Where reports are written unless a suite says otherwise.
RESULTS_DIR = REPO / "bench" / "results"


def heading(title: str, *paragraphs: str) -> list[str]:
    """A markdown report's first lines: ``# title``, then each paragraph after a blank line."""
    lines = [f"# {title}"]
    for paragraph in paragraphs:
        lines += ["", paragraph]
    return lines


def markdown_head(
    document: dict[str, Any],
    before: Sequence[float] | None,
    after: Sequence[float] | None,
    header: str,
    align: str,
) -> list[str]:
    """The first lines of a report: its title, where and under which load, and a table's head."""
    measured_line = measured(document["machine"], before, after)
    return [*heading(document["title"], measured_line), "", header, align]


def print_markdown(report: Report) -> int:
    """Print a smoke run's report as markdown (no result files); return exit status 0."""
    print(report.markdown(), end="")
    return 0


def write_document(
    suite: str, document: dict[str, Any], text: str, out_dir: Path | None, *, echo: bool = True
) -> list[Path]:
    """Write ``<suite>.json`` and the markdown ``text`` as ``<suite>.md`` into ``out_dir``."""
    target = RESULTS_DIR if out_dir is None else out_dir
    target.mkdir(parents=True, exist_ok=True)
    json_path = target / f"{suite}.json"
    md_path = target / f"{suite}.md"
    json_path.write_text(json.dumps(document, indent=2) + "\n")
    md_path.write_text(text)
    if echo:
        sys.stdout.write(text)
        sys.stdout.flush()
    return [json_path, md_path]


@dataclass
class Report:
    """Rows of timings and ratios of one suite run, written as JSON and markdown."""

    suite: str
    title: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    ratios: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _timings: dict[str, Samples] = field(default_factory=dict)

    def record(
        self,
        key: str,
        timing: Samples,
        *,
        items: int | None = None,
        nbytes: int | None = None,
        **fields: Any,
    ) -> None:
        """Add one timed row; ``items`` and ``nbytes`` per call give ns/item and MB/s."""
        self._timings[key] = timing
        row: dict[str, Any] = {
            "key": key,
            **fields,
            "median_s": timing.median,
            "best_s": timing.fastest,
            "spread": timing.spread,
            "repeats": len(timing.values),
        }
        if items:
            row["ns_per_item"] = timing.median / items * 1e9
        if nbytes:
            row["mb_per_s"] = nbytes / timing.median / 1e6
        self.rows.append(row)

    def record_group(
        self,
        timings: Mapping[str, Samples],
        *,
        key: str = "",
        items: int | None = None,
        nbytes: int | None = None,
        **fields: Any,
    ) -> None:
        """Record a row for each timing of a group: key ``<key>/<name>`` (the name alone without
        ``key``), the ``fields``, and the name as ``method``."""
        for name, timing in timings.items():
            row_key = f"{key}/{name}" if key else name
            self.record(row_key, timing, items=items, nbytes=nbytes, **fields, method=name)

    def ratio(self, label: str, *, faster: str, slower: str, goal: float | None = None) -> float:
        """Record how many times ``faster`` beats ``slower`` (median over median)."""
        value = self._timings[slower].median / self._timings[faster].median
        self.record_ratio(label, value, faster=faster, slower=slower, goal=goal)
        return value

    def record_ratio(
        self,
        label: str,
        value: float,
        *,
        faster: str,
        slower: str,
        goal: float | None = None,
        **fields: Any,
    ) -> None:
        """Record a ratio computed by the suite (``fields`` say how, e.g. ``statistic``)."""
        self.ratios.append(
            {
                "label": label,
                "faster": faster,
                "slower": slower,
                "ratio": value,
                "goal": goal,
                "met": None if goal is None else value >= goal,
                **fields,
            }
        )

    def ratio_group(
        self, label: str, key: str, pairs: Iterable[tuple[str, str, str, float | None]]
    ) -> None:
        """Record the ratios of one group: for each ``(what, faster, slower, goal)``, how many
        times row ``<key>/<faster>`` beats row ``<key>/<slower>``, labelled ``<label>: <what>``."""
        for what, faster, slower, goal in pairs:
            self.ratio(
                f"{label}: {what}", faster=f"{key}/{faster}", slower=f"{key}/{slower}", goal=goal
            )

    def document(self) -> dict[str, Any]:
        """The report as one JSON-ready document."""
        return {
            "suite": self.suite,
            "title": self.title,
            "machine": machine(),
            "rows": self.rows,
            "ratios": self.ratios,
            "notes": self.notes,
        }

    def markdown(self, document: dict[str, Any] | None = None) -> str:
        """The report as markdown tables."""
        doc = document or self.document()
        lines = [f"# {self.title}", ""]
        info = doc["machine"]
        lines.append(
            f"{measured_on(info)}, Python {info['python']}, numba {info.get('numba')}, "
            f"simd ISA {info.get('simd_isa', '?')}, "
            f"load average {load_text(info.get('load_average'))}."
        )
        lines.append("")
        if self.ratios:
            lines += ["| ratio | value | goal | met |", "|---|---:|---:|:---:|"]
            for r in self.ratios:
                goal = "" if r["goal"] is None else f"{r['goal']:g}x"
                met = "" if r["met"] is None else ("yes" if r["met"] else "NO")
                lines.append(f"| {r['label']} | {r['ratio']:.2f}x | {goal} | {met} |")
            lines.append("")
        if self.rows:
            extra = [k for k in self.rows[0] if k not in _STANDARD_COLUMNS]
            head = [*extra, "median", "spread", "ns/item", "MB/s"]
            lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            for row in self.rows:
                cells = [str(row.get(k, "")) for k in extra]
                cells += [
                    f"{row['median_s'] * 1e3:.3f} ms",
                    f"{row['spread'] * 100:.0f}%",
                    f"{row['ns_per_item']:.1f}" if "ns_per_item" in row else "",
                    f"{row['mb_per_s']:.0f}" if "mb_per_s" in row else "",
                ]
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
        lines += [f"* {note}" for note in self.notes]
        return "\n".join(lines).rstrip() + "\n"

    def write(self, out_dir: Path | None = None, *, echo: bool = True) -> list[Path]:
        """Write ``<suite>.json`` and ``<suite>.md`` into ``out_dir`` (default bench/results)."""
        doc = self.document()
        return write_document(self.suite, doc, self.markdown(doc), out_dir, echo=echo)


_STANDARD_COLUMNS = {"key", "median_s", "best_s", "spread", "repeats", "ns_per_item", "mb_per_s"}
