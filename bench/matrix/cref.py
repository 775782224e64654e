"""The fill against the public TwoCats C reference and the multiply-chain bound, in one run.

``python -m bench cref [--cref DIR] [--chain PATH] [--rounds N] [--repeats N] [--mem-cost M]``
times, on 1 GiB (mem_cost 20) by default, for blake2s with 8 lanes and blake2b with 16, multiplies
2 and 0, parallelism 1 and 2 (the C reference's defaults otherwise: 16 KiB blocks, 64-byte
sub-blocks, overwrite cost 6):

* ``derive`` of this library with the ``simd`` backend and with the ``scalar`` one (no vector
  instructions: the other side of the SIMD trade-off), each engine reusing one buffer, as the C
  bench does; per round, one untimed call and then the best of ``--repeats``;
* the C reference's optimised fill (``bench-opt``) and, for one thread, its plain fill
  (``bench-ref``): one process per round, timing the best of ``--repeats`` hashes on one buffer;
* the multiply chain alone (``chain``), whose time per step gives the chain bound: no fill with
  2 multiplies can beat ``memory / (4 * lanes) * 2`` steps of it on this core (the main level's
  steps, as ``chain`` counts them; the overwrite levels add about 1.6%);
* argon2id (argon2-cffi, t=1, the same memory, parallelism 1 and 2), which maps fresh memory on
  every call.

The contenders take turns within every setting and every round, so that a noisy neighbour
disturbs them alike; each figure is the best over the rounds.  The first four bytes of every C
hash (the C bench prints them) are checked against this library's output.

The C reference is built outside the repository by ``../shared/tools/cref/build.sh GITDIR``, into
``/tmp/cref`` and ``/tmp/chain``; ``--cref`` and ``--chain`` name other places.  Without it a full
run says so and stops with status 2, and ``--smoke`` (1 MiB, one round) runs this library alone.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bench.harness import Report, load_average, load_note, write_document
from twocats import Params
from twocats._units import format_size
from twocats.kdf import Engine
from twocats.perf.peers import argon2id_call
from twocats.perf.samples import Samples
from twocats.simd.isa import host_target

__all__ = ["CHAIN", "CREF", "SETTINGS", "Setting", "main", "run", "smoke"]

#: Where ``build.sh`` puts the C reference's two fills, and its multiply-chain probe.
CREF: Final = Path("/tmp/cref")
CHAIN: Final = Path("/tmp/chain")

#: The issue's goals: this library against the C reference's optimised fill (every setting), the
#: second thread (every setting), the share of the chain bound (8 lanes, multiplies 2, 1 thread).
GOAL_VS_C: Final = 1.1
GOAL_P2: Final = 1.8
GOAL_CHAIN: Final = 0.9

_PASSWORD: Final = b"password"
_SALT: Final = b"saltsalt"
_BACKENDS: Final = ("simd", "scalar")
_HOW_TO_BUILD: Final = (
    "run `bash ../shared/tools/cref/build.sh GITDIR` (GITDIR: a git directory of "
    "waywardgeek/twocats) or pass --cref DIR and --chain PATH"
)


@dataclass(frozen=True)
class Setting:
    """One row of the table: hash type, lanes, multiplies, parallelism."""

    hash_type: str
    lanes: int
    multiplies: int
    parallelism: int

    @property
    def label(self) -> str:
        """E.g. ``blake2s l8 M2 P1``."""
        return f"{self.hash_type} l{self.lanes} M{self.multiplies} P{self.parallelism}"

    def params(self, mem_cost: int) -> Params:
        """The parameters of the C bench's hash (start = stop = mem_cost, overwrite cost 6)."""
        return Params(
            hash_type=self.hash_type,
            mem_cost=mem_cost,
            lanes=self.lanes,
            multiplies=self.multiplies,
            parallelism=self.parallelism,
            block_size=16384,
            sub_block_size=64,
        )

    def c_args(self, mem_cost: int, repeats: int) -> list[str]:
        """The C bench's arguments: m, M, lanes, P, repetitions, fresh memory (0), hash type."""
        values = (mem_cost, self.multiplies, self.lanes, self.parallelism, repeats, 0)
        return [*map(str, values), self.hash_type]


#: The table's rows, in the issue's order.
SETTINGS: Final = tuple(
    Setting(hash_type, lanes, multiplies, parallelism)
    for multiplies in (2, 0)
    for parallelism in (1, 2)
    for hash_type, lanes in (("blake2s", 8), ("blake2b", 16))
)

_C_BEST = re.compile(r"best ([0-9.]+) s .* out ([0-9a-f]{8})")
_CHAIN_STEP = re.compile(r"chain step ([0-9.]+) ns")


def _c_hash(binary: Path, setting: Setting, mem_cost: int, repeats: int) -> tuple[float, str]:
    """Run the C bench once; return its best seconds and the hex of its output's first 4 bytes."""
    done = subprocess.run(
        [str(binary), *setting.c_args(mem_cost, repeats)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    found = _C_BEST.search(done.stdout)
    if found is None:
        raise RuntimeError(f"{binary.name} printed no timing: {done.stdout.strip()!r}")
    return float(found.group(1)), found.group(2)


def _chain_step(binary: Path) -> float:
    """Run the chain probe once; return its seconds per step."""
    done = subprocess.run([str(binary)], capture_output=True, text=True, check=True, timeout=600)
    found = _CHAIN_STEP.search(done.stdout)
    if found is None:
        raise RuntimeError(f"{binary.name} printed no step time: {done.stdout.strip()!r}")
    return float(found.group(1)) * 1e-9


def chain_steps(setting: Setting, mem_cost: int) -> int:
    """The steps of the main level's multiply chain: one per multiply per row of lanes."""
    return (1024 << mem_cost) // (4 * setting.lanes) * setting.multiplies


def _best_of(call: Callable[[], object], repeats: int) -> float:
    """The best seconds of ``repeats`` calls (the caller has made an untimed one)."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


@dataclass
class _Contenders:
    """The timed things of one run and the best seconds each has reached per setting."""

    mem_cost: int
    repeats: int
    cref: Path | None
    engines: dict[str, Engine]
    best: dict[tuple[str, str], list[float]]
    outputs: dict[tuple[str, str], str]

    def names(self, setting: Setting) -> list[str]:
        names = [f"twocats {backend}" for backend in self.engines]
        if self.cref is not None:
            names.append("C opt")
            if setting.parallelism == 1:
                names.append("C ref")
        return names

    def time(self, name: str, setting: Setting) -> None:
        if name.startswith("twocats "):
            engine = self.engines[name.removeprefix("twocats ")]
            params = setting.params(self.mem_cost)
            prefix = engine.derive(_PASSWORD, _SALT, params)[:4].hex()
            seconds = _best_of(lambda: engine.derive(_PASSWORD, _SALT, params), self.repeats)
        else:
            assert self.cref is not None
            binary = self.cref / ("bench-opt" if name == "C opt" else "bench-ref")
            seconds, prefix = _c_hash(binary, setting, self.mem_cost, self.repeats)
        self.best.setdefault((setting.label, name), []).append(seconds)
        # A contender whose output changes between rounds shows both, so the check below fails.
        seen = self.outputs.setdefault((setting.label, name), prefix)
        if prefix not in seen.split("|"):
            self.outputs[setting.label, name] = f"{seen}|{prefix}"


def measure(
    *, mem_cost: int, rounds: int, repeats: int, cref: Path | None, chain: Path | None
) -> dict[str, Any]:
    """Time every setting's contenders in rotation for ``rounds`` rounds; return the figures."""
    contenders = _Contenders(
        mem_cost, repeats, cref, {backend: Engine(backend) for backend in _BACKENDS}, {}, {}
    )
    steps: list[float] = []
    for round_ in range(rounds):
        if chain is not None:
            steps.append(_chain_step(chain))
        for setting in SETTINGS:
            names = contenders.names(setting)
            shift = round_ % len(names)
            for name in names[shift:] + names[:shift]:
                contenders.time(name, setting)
        for parallelism in (1, 2):
            call = argon2id_call(1024 << mem_cost, parallelism)
            call()
            key = (f"argon2id P{parallelism}", "argon2id")
            contenders.best.setdefault(key, []).append(_best_of(call, repeats))
    for engine in contenders.engines.values():
        engine.release()
    return {
        "seconds": contenders.best,
        "outputs": contenders.outputs,
        "chain_step_s": min(steps) if steps else None,
    }


def _mismatches(outputs: dict[tuple[str, str], str]) -> list[str]:
    """Settings whose contenders' outputs do not start with the same four bytes."""
    found = []
    for setting in SETTINGS:
        prefixes = {name: p for (label, name), p in outputs.items() if label == setting.label}
        if len(set(prefixes.values())) > 1:
            found.append(f"{setting.label}: {prefixes}")
    return found


def _table(figures: dict[str, Any], mem_cost: int) -> list[str]:
    """The issue's table: best seconds, this library over the C reference, the chain bound."""
    step = figures["chain_step_s"]
    gb = (1024 << mem_cost) / 1e9
    head = ("twocats simd", "twocats scalar", "C opt", "C ref", "simd / C opt", "scalar / C opt")
    lines = [
        f"| setting | {' | '.join(head)} | chain bound |",
        "|---|" + "---:|" * (len(head) + 1),
    ]
    best = {key: min(values) for key, values in figures["seconds"].items()}

    def cell(label: str, name: str) -> str:
        seconds = best.get((label, name))
        return "" if seconds is None else f"{seconds:.3f} s ({gb / seconds:.2f} GB/s)"

    for setting in SETTINGS:
        label = setting.label
        simd, scalar = best[label, "twocats simd"], best[label, "twocats scalar"]
        c_opt = best.get((label, "C opt"))
        versus = ["", ""] if c_opt is None else [f"{c_opt / simd:.2f}x", f"{c_opt / scalar:.2f}x"]
        bound = ""
        if step is not None and setting.multiplies and setting.parallelism == 1:
            seconds = chain_steps(setting, mem_cost) * step
            bound = f"{seconds:.3f} s: simd at {seconds / simd:.0%} of it"
        cells = [cell(label, n) for n in ("twocats simd", "twocats scalar", "C opt", "C ref")]
        lines.append(f"| {label} | {' | '.join(cells)} | {' | '.join(versus)} | {bound} |")
    return lines


def _record(report: Report, figures: dict[str, Any], mem_cost: int, goals: bool) -> None:
    """Record every contender's rounds as rows and the issue's ratios (on best seconds).

    Without ``goals`` (the smoke run's tiny sizes) the ratios carry no goal.
    """
    nbytes = 1024 << mem_cost
    best: dict[tuple[str, str], float] = {}
    for (label, name), values in figures["seconds"].items():
        report.record(
            f"{label}/{name}",
            Samples(tuple(values)),
            nbytes=nbytes,
            setting=label,
            contender=name,
            best_gbps=round(nbytes / min(values) / 1e9, 3),
            output=figures["outputs"].get((label, name), ""),
        )
        best[label, name] = min(values)
    for setting in SETTINGS:
        label = setting.label
        if (label, "C opt") in best:
            report.record_ratio(
                f"{label}: twocats simd / C opt",
                best[label, "C opt"] / best[label, "twocats simd"],
                faster=f"{label}/twocats simd",
                slower=f"{label}/C opt",
                goal=GOAL_VS_C if goals else None,
                statistic="best",
            )
    for setting in SETTINGS:
        if setting.parallelism != 2:
            continue
        one = Setting(setting.hash_type, setting.lanes, setting.multiplies, 1).label
        for name, goal in (("twocats simd", GOAL_P2 if goals else None), ("C opt", None)):
            if (one, name) in best:
                report.record_ratio(
                    f"{one.removesuffix(' P1')}: P2 / P1, {name}",
                    best[one, name] / best[setting.label, name],
                    faster=f"{setting.label}/{name}",
                    slower=f"{one}/{name}",
                    goal=goal,
                    statistic="best",
                )
    for parallelism in (1, 2):
        peer = f"argon2id P{parallelism}"
        label = f"blake2s l8 M2 P{parallelism}"
        report.record_ratio(
            f"{label}: twocats simd / argon2id (t=1, same memory)",
            best[peer, "argon2id"] / best[label, "twocats simd"],
            faster=f"{label}/twocats simd",
            slower=f"{peer}/argon2id",
            statistic="best",
        )
    step = figures["chain_step_s"]
    if step is not None:
        for setting in SETTINGS:
            if setting.multiplies and setting.parallelism == 1:
                bound = chain_steps(setting, mem_cost) * step
                report.record_ratio(
                    f"{setting.label}: chain bound / twocats simd",
                    bound / best[setting.label, "twocats simd"],
                    faster="chain bound",
                    slower=f"{setting.label}/twocats simd",
                    goal=GOAL_CHAIN if goals and setting.lanes == 8 else None,
                    statistic="best",
                )


def run(
    *,
    mem_cost: int,
    rounds: int,
    repeats: int,
    cref: Path | None,
    chain: Path | None,
    goals: bool = True,
) -> tuple[Report, dict[str, Any]]:
    """Measure; return the report and its extra figures (chain step, outputs, the table)."""
    report = Report("cref", "The fill against the C reference and the multiply-chain bound")
    before = load_average()
    figures = measure(mem_cost=mem_cost, rounds=rounds, repeats=repeats, cref=cref, chain=chain)
    after = load_average()
    _record(report, figures, mem_cost, goals)
    report.notes.append(
        f"{rounds} rounds; per round and contender, the best of {repeats} hashes (this library: "
        "after one untimed call, on a reused buffer; the C bench: one process, one buffer). The "
        "contenders take turns; every figure is the best over the rounds. "
        + load_note(before, after)
    )
    if cref is None:
        report.notes.append("The C reference was not run: " + _HOW_TO_BUILD + ".")
    mismatches = _mismatches(figures["outputs"])
    extra = {
        "mem_cost": mem_cost,
        "llvm_host_cpu": host_target()[0],
        "chain_step_ns": None if figures["chain_step_s"] is None else figures["chain_step_s"] * 1e9,
        "chain_bound_s": {
            s.label.removesuffix(" P1"): chain_steps(s, mem_cost) * figures["chain_step_s"]
            for s in SETTINGS
            if figures["chain_step_s"] is not None and s.multiplies and s.parallelism == 1
        },
        "table": _table(figures, mem_cost),
        "argon2id_s": {
            str(parallelism): min(figures["seconds"][f"argon2id P{parallelism}", "argon2id"])
            for parallelism in (1, 2)
        },
        "output_mismatches": mismatches,
    }
    return report, extra


def markdown(report: Report, document: dict[str, Any]) -> str:
    """The report's markdown: the issue's table first, then every ratio and row."""
    lines = report.markdown(document).splitlines()
    step = document["chain_step_ns"]
    chain = "" if step is None else f" The multiply chain alone: {step:.3f} ns per step."
    memory = f"Memory {format_size(1024 << document['mem_cost'])}"
    head = [
        *lines[:3],
        f"{memory}, LLVM host CPU {document['llvm_host_cpu']}.{chain}",
        "",
        *document["table"],
        "",
    ]
    argon2 = document["argon2id_s"]
    head += [
        f"argon2id (t=1, same memory): {argon2['1']:.3f} s on 1 thread, {argon2['2']:.3f} s on 2.",
        "",
    ]
    if document["output_mismatches"]:
        head += ["Outputs differ: " + "; ".join(document["output_mismatches"]), ""]
    return "\n".join([*head, *lines[3:]]) + "\n"


def _found(cref: Path, chain: Path) -> tuple[Path | None, Path | None]:
    """The C reference's folder and chain probe where both are built, else None for each."""
    built = all((cref / name).is_file() for name in ("bench-opt", "bench-ref"))
    return (cref if built else None), (chain if chain.is_file() else None)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench cref", description=__doc__)
    parser.add_argument("--cref", type=Path, default=CREF, help="the C reference's folder")
    parser.add_argument("--chain", type=Path, default=CHAIN, help="the chain probe")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mem-cost", type=int, default=20)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--smoke", action="store_true", help="1 MiB, one round, no result files")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the table and write bench/results/cref.{json,md}; status 2 without the C reference."""
    args = _parser().parse_args(list(argv or []))
    if args.smoke:
        return smoke()
    cref, chain = _found(args.cref, args.chain)
    if cref is None or chain is None:
        where = f"{args.cref} and {args.chain}"
        print(f"error: the C reference is not built in {where}: {_HOW_TO_BUILD}", file=sys.stderr)
        return 2
    report, extra = run(
        mem_cost=args.mem_cost, rounds=args.rounds, repeats=args.repeats, cref=cref, chain=chain
    )
    document = {**report.document(), **extra}
    write_document("cref", document, markdown(report, document), args.out)
    return 1 if document["output_mismatches"] else 0


def smoke() -> int:
    """One round at 1 MiB, with the C reference where it is built; checks outputs, no timings."""
    cref, chain = _found(CREF, CHAIN)
    report, extra = run(mem_cost=10, rounds=1, repeats=1, cref=cref, chain=chain, goals=False)
    document = {**report.document(), **extra}
    print(markdown(report, document), end="")
    return 1 if document["output_mismatches"] else 0
