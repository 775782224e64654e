"""The README's headline figures, measured in one short run on one machine.

``python -m bench headline [--out DIR] [--smoke]`` measures, in one go and in this order, every
figure of the README's summary, and writes ``bench/results/headline.json`` and ``headline.md``;
``python -m bench docs`` then writes the summary from that one file, which names the machine, the
date and the load average before and after.  The figures:

* **per login**: a verification of a ``MODERATE`` hash (256 MiB) through
  :class:`twocats.PasswordHasher`, median wall-clock and CPU seconds of :data:`RUNS` calls,
  beside argon2-cffi at the same memory (``t=1``, the profile's threads) timed in turn with it;
* **fill rate**: one hash of the matrix's headline cell (blake2s, 8 lanes, multiplies 2, 1 GiB,
  one thread) against argon2id at 1 GiB on one thread (``t=1``), in memory bytes per second;
* **processes**: the first ``twocats hash --profile moderate`` with an empty kernel cache (it
  compiles), then the same command with the cache it wrote, argon2-cffi's process at equal
  memory and ``twocats --help``, medians of :data:`RUNS` processes taking turns.

The other suites (load, matrix, compile, startup, adapters, bulk) keep their own reports and the
Performance page's tables; the README links there instead of mixing their machines.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.harness import REPO, load_average, machine, tree_env, write_document
from bench.startup.processes import (
    PASSWORD,
    Command,
    Run,
    argon2_commands,
    console_script,
    timed,
)

__all__ = ["RUNS", "main", "run", "smoke"]


#: Timed calls, or processes, per figure (the median is reported).
RUNS = 5

#: The memory of the fill-rate figure: 2**20 KiB, 1 GiB.
FILL_MEM_COST = 20


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _login(profile: str, runs: int) -> dict[str, Any]:
    """Time verifications of `profile` and argon2-cffi's at its memory, taking turns."""
    import argon2

    from twocats.password import PasswordHasher
    from twocats.perf.peers import time_calls
    from twocats.profiles import PROFILES

    params = PROFILES[profile]
    hasher = PasswordHasher.from_params(params)
    stored = hasher.hash(PASSWORD)
    peer = argon2.PasswordHasher(
        time_cost=1,
        memory_cost=max(params.memory_bytes // 1024, 8 * params.parallelism),
        parallelism=params.parallelism,
    )
    peer_stored = peer.hash(PASSWORD)
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(time_calls(lambda: hasher.verify(stored, PASSWORD), 1))
        theirs.append(time_calls(lambda: peer.verify(peer_stored, PASSWORD), 1))
    hasher.release()

    def figures(timings: list[Any]) -> dict[str, float]:
        return {
            "wall_s": statistics.median(t.wall.median for t in timings),
            "cpu_s": statistics.median(t.cpu.median for t in timings),
        }

    return {
        "profile": profile,
        "memory_bytes": params.memory_bytes,
        "parallelism": params.parallelism,
        "twocats": figures(ours),
        "argon2_cffi": figures(theirs),
    }


def _fill(mem_cost: int, runs: int) -> dict[str, Any]:
    """Time the headline fill and argon2id at the same memory on one thread, taking turns."""
    from twocats.params import Params
    from twocats.password import PasswordHasher
    from twocats.perf.peers import PASSWORD as PEER_PASSWORD
    from twocats.perf.peers import argon2id_call, time_calls

    params = Params(mem_cost=mem_cost, multiplies=2, lanes=8, parallelism=1)
    hasher = PasswordHasher.from_params(params, max_memory=params.memory_bytes)
    stored = hasher.hash(PEER_PASSWORD)
    peer = argon2id_call(params.memory_bytes, 1)
    ours, theirs = [], []
    for turn in range(runs):
        ours.append(time_calls(lambda: hasher.verify(stored, PEER_PASSWORD), 1, int(turn == 0)))
        theirs.append(time_calls(peer, 1, int(turn == 0)))
    hasher.release()
    seconds = statistics.median(t.wall.median for t in ours)
    peer_seconds = statistics.median(t.wall.median for t in theirs)
    return {
        "memory_bytes": params.memory_bytes,
        "twocats_s": seconds,
        "argon2id_s": peer_seconds,
        "twocats_bytes_per_s": params.memory_bytes / seconds,
        "argon2id_bytes_per_s": params.memory_bytes / peer_seconds,
    }


def _processes(profile: str, runs: int) -> dict[str, Any]:
    """Time the first hash in an empty kernel cache, then the warm processes taking turns."""
    from twocats.profiles import PROFILES

    params = PROFILES[profile]
    script = console_script(REPO)
    profile_args = ("--profile", profile) + (("--insecure",) if profile == "cheapest" else ())
    with tempfile.TemporaryDirectory(prefix="twocats-headline-") as scratch:
        env = tree_env(REPO, Path(scratch) / "cache")
        hash_command = Command(
            "twocats hash", (*script, "hash", *profile_args, "--password-stdin"), env, PASSWORD
        )
        first = timed(hash_command)
        commands = [
            hash_command,
            Command("twocats --help", (*script, "--help"), env),
            argon2_commands(params.memory_bytes // 1024, params.parallelism)[1],
        ]
        samples: dict[str, list[Run]] = {command.label: [] for command in commands}
        for turn in range(runs):
            for command in commands if turn % 2 == 0 else commands[::-1]:
                samples[command.label].append(timed(command))
    medians = {
        label: {
            "wall_s": statistics.median(run.wall for run in values),
            "cpu_s": statistics.median(run.cpu for run in values),
        }
        for label, values in samples.items()
    }
    return {
        "first_hash": {"wall_s": first.wall, "cpu_s": first.cpu},
        "warm_hash": medians["twocats hash"],
        "help": medians["twocats --help"],
        "argon2_cffi_hash": medians[commands[2].label],
        "argon2_cffi_label": commands[2].label,
    }


def run(*, smoke: bool = False) -> dict[str, Any]:
    """Measure every headline figure in this one run; return the report document."""
    profile, runs, mem_cost = ("cheapest", 1, 10) if smoke else ("moderate", RUNS, FILL_MEM_COST)
    started = load_average()
    _say(f"headline: per login ({profile})")
    login = _login(profile, runs)
    _say("headline: fill rate")
    fill = _fill(mem_cost, runs)
    _say("headline: processes (the first one compiles)")
    processes = _processes(profile, runs)
    return {
        "suite": "headline",
        "title": "The README's headline figures, in one run",
        "machine": machine(),
        "runs": runs,
        "load_average_start": started,
        "load_average_end": load_average(),
        "login": login,
        "fill": fill,
        "processes": processes,
    }


def markdown(document: dict[str, Any]) -> str:
    """The report as markdown: the JSON's figures, one per line."""
    return "\n".join(
        [
            f"# {document['title']}",
            "",
            "```json",
            json.dumps({key: document[key] for key in ("login", "fill", "processes")}, indent=2),
            "```",
            "",
            (
                f"Measured with `python -m bench headline` on "
                f"{document['machine'].get('cpu', '?')}, {document['machine']['date']}; load "
                f"average {document['load_average_start']} before, "
                f"{document['load_average_end']} after."
            ),
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Measure the headline figures and write ``headline.json`` and ``headline.md``."""
    parser = argparse.ArgumentParser(prog="python -m bench headline", description=__doc__)
    parser.add_argument("--out", type=Path, default=None, help="folder for the result files")
    parser.add_argument("--smoke", action="store_true", help="the cheapest run, no files")
    args = parser.parse_args(list(argv or []))
    if args.smoke:
        return smoke()
    document = run()
    write_document("headline", document, markdown(document), args.out)
    return 0


def smoke() -> int:
    """Run every measurement once at the cheapest sizes; write nothing."""
    document = run(smoke=True)
    print(markdown(document))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
