"""Start-up: whole processes, wall and CPU, side by side with argon2-cffi's process.

``python -m bench startup [--runs N] [--against REV] [--profile NAME] [--out DIR] [--smoke]``
starts fresh processes and reports, for each command, the median wall and CPU seconds of ``--runs``
runs (default 11).  Wall time is read around the child; CPU time is the operating system's
accounting of the reaped child (user + system).  The commands take turns, one run of each in a
row, so that a neighbour's load falls on all of them alike.  The commands:

* ``twocats --help``;
* ``twocats hash --password-stdin --json`` at the profile (default ``moderate``, the library's
  default, 256 MiB) with a warm kernel cache, and the first one in an empty cache (one run: it
  compiles the kernel, and writes its ahead-of-time artefact).  The warm cache holds the
  artefact, so the warm hash runs without numba; the same hash with ``TWOCATS_AOT=0`` shows
  numba's own cache beside it;
* ``twocats verify`` of such a hash (warm);
* ``python -c`` importing twocats and verifying that hash with ``PasswordHasher()`` (warm);
* argon2-cffi's ``PasswordHasher().hash`` in ``python -c``, at argon2-cffi's defaults and at the
  profile's memory (time cost 1, the profile's parallelism).

The twocats command is the console script as pip writes it from the tree's ``[project.scripts]``.
Two figures are taken run by run and reported as medians: the warm ``twocats hash`` over
argon2-cffi's process at equal memory, and the share of the warm hash process spent in the hash
itself (the ``seconds`` the command reports, which exclude loading the kernels). Whether the warm
hash, verify and library processes import numba or numpy is read from ``python -X importtime``. With
``--against REV`` the twocats commands of commit REV run too, taking turns with this tree's (a
paired before and after). The children keep their compiled bytecode (``PYTHONDONTWRITEBYTECODE`` is
dropped), as an installed package does. With ``--wheel PATH`` a platform wheel with prebuilt kernels
is installed into a new virtual environment and its first hash, in an empty kernel cache, is timed
each turn (cold with the wheel). The load average is recorded before and after. ``--smoke`` runs
every command once at the cheapest profile and writes no files.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.harness import (
    REPO,
    RESULTS_DIR,
    commit,
    load_average,
    machine,
    markdown_head,
    run_process,
    tree_env,
    write_document,
)

__all__ = ["main", "smoke"]


#: Processes timed for each warm figure (the median is reported).
RUNS = 11

#: The modules whose import the report looks for: what the password path should do without.
HEAVY = ("numba", "numpy")

#: The password every process hashes or verifies, given on standard input.
PASSWORD = b"correct horse battery staple\n"

#: argon2-cffi's process: hash the password of standard input with the given parameters.
ARGON2 = (
    "import sys, argon2; "
    "argon2.PasswordHasher({params}).hash(sys.stdin.buffer.read().rstrip(b'\\n'))"
)

#: The library's own path: import twocats, verify the hash in argv[1] against standard input.
LIBRARY_VERIFY = (
    "import sys, twocats; "
    "twocats.PasswordHasher().verify(sys.argv[1], sys.stdin.buffer.read().rstrip(b'\\n'))"
)


# The console script's line of [project.scripts] in pyproject.toml.
_SCRIPT = re.compile(r'^twocats = "([\w.]+):(\w+)"$', re.MULTILINE)


@dataclass(frozen=True)
class Command:
    """One process to time: its arguments, environment and standard input."""

    label: str
    args: tuple[str, ...]
    env: dict[str, str]
    stdin: bytes = b""


@dataclass(frozen=True)
class Run:
    """One timed process."""

    wall: float
    cpu: float
    stdout: str


def timed(command: Command) -> Run:
    """Run ``command`` once in a fresh process; raise if it fails."""
    done = run_process(
        command.args, stdin=command.stdin, env=command.env, cwd=tempfile.gettempdir()
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{command.label} failed (exit {done.returncode}): {done.stderr.decode()[-400:]}"
        )
    return Run(done.wall, done.cpu, done.stdout.decode())


def console_script(tree: Path) -> tuple[str, ...]:
    """The ``twocats`` console script of ``tree`` as pip writes it: import the entry, call it."""
    found = _SCRIPT.search((tree / "pyproject.toml").read_text())
    if found is None:
        raise RuntimeError(f"no twocats console script in {tree / 'pyproject.toml'}")
    module, name = found.groups()
    return (sys.executable, "-c", f"import sys; from {module} import {name}; sys.exit({name}())")


def _export(rev: str, target: Path) -> Path:
    """Write the ``twocats`` package and pyproject.toml of commit ``rev`` into ``target``."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "twocats", "pyproject.toml"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


#: The label of the warm hash, after the tree's name.
HASH = "twocats hash"

#: The label of the warm hash with the ahead-of-time kernels switched off.
HASH_NUMBA = "twocats hash, numba's cache only (TWOCATS_AOT=0)"


def twocats_commands(
    name: str, tree: Path, cache: Path, profile: str, stored: str
) -> list[Command]:
    """The warm twocats commands of one tree; ``stored`` is a hash for the verify commands."""
    script = console_script(tree)
    env = tree_env(tree, cache)
    profile_args = ("--profile", profile) + (("--insecure",) if profile == "cheapest" else ())
    hash_args = (*script, "hash", *profile_args, "--password-stdin", "--json")
    # An older tree may not know the switch; only this tree's hash runs both ways.
    numba_only = [
        Command(f"{name}: {HASH_NUMBA}", hash_args, {**env, "TWOCATS_AOT": "0"}, PASSWORD)
    ]
    return [
        Command(f"{name}: twocats --help", (*script, "--help"), env),
        Command(f"{name}: {HASH}", hash_args, env, PASSWORD),
        *(numba_only if tree == REPO else []),
        Command(
            f"{name}: twocats verify",
            (*script, "verify", stored, "--password-stdin"),
            env,
            PASSWORD,
        ),
        Command(
            f"{name}: import twocats; PasswordHasher().verify",
            (sys.executable, "-c", LIBRARY_VERIFY, stored),
            env,
            PASSWORD,
        ),
    ]


def argon2_commands(memory_kib: int, parallelism: int) -> list[Command]:
    """argon2-cffi's hash process at its defaults and at ``memory_kib`` (time cost 1).

    The memory is raised to argon2's least (8 KiB per lane) where it is below.
    """
    import argon2

    from twocats._units import format_size

    defaults = argon2.PasswordHasher()
    memory_kib = max(memory_kib, 8 * parallelism)
    equal = f"time_cost=1, memory_cost={memory_kib}, parallelism={parallelism}"
    env = tree_env(None, None)
    return [
        Command(
            f"argon2-cffi hash, defaults (t={defaults.time_cost}, "
            f"{format_size(1024 * defaults.memory_cost)}, p={defaults.parallelism})",
            (sys.executable, "-c", ARGON2.format(params="")),
            env,
            PASSWORD,
        ),
        Command(
            f"argon2-cffi hash, equal memory (t=1, {format_size(1024 * memory_kib)}, "
            f"p={parallelism})",
            (sys.executable, "-c", ARGON2.format(params=equal)),
            env,
            PASSWORD,
        ),
    ]


def _first_hash(name: str, tree: Path, cache: Path, profile: str) -> tuple[Run, str]:
    """The first hash in the empty ``cache`` (it compiles); return the run and the hash."""
    hash_command = twocats_commands(name, tree, cache, profile, "")[1]
    first = timed(hash_command)
    return first, str(json.loads(first.stdout)["hash"])


def _medians(runs: list[Run]) -> dict[str, float]:
    return {
        "wall_s": statistics.median(run.wall for run in runs),
        "cpu_s": statistics.median(run.cpu for run in runs),
        "wall_min_s": min(run.wall for run in runs),
        "wall_max_s": max(run.wall for run in runs),
    }


#: The label of the first hash after installing a platform wheel.
WHEEL_HASH = "wheel: first twocats hash after installing, empty kernel cache"


def wheel_command(wheel: Path, venv: Path, cache: Path, profile: str) -> Command:
    """Install ``wheel`` into a new ``venv`` (seeing this Python's packages); its first hash.

    ``cache`` is a kernel cache that does not exist: every run of the command is a first hash,
    as long as the run writes nothing there (the report says whether one did).
    """
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index"]
    subprocess.run([*pip, str(wheel)], check=True)
    script = (str(venv / "bin" / "python"), "-c", console_script(REPO)[2])
    profile_args = ("--profile", profile) + (("--insecure",) if profile == "cheapest" else ())
    # The installed package, not a checkout on PYTHONPATH.
    env = {key: value for key, value in tree_env(None, cache).items() if key != "PYTHONPATH"}
    return Command(
        WHEEL_HASH, (*script, "hash", *profile_args, "--password-stdin", "--json"), env, PASSWORD
    )


def measure(
    trees: dict[str, Path], profile: str, runs: int, wheel: Path | None = None
) -> dict[str, Any]:
    """Time every command ``runs`` times, taking turns; return the report's figures."""
    from twocats.profiles import PROFILES

    params = PROFILES[profile]
    argon2 = argon2_commands(params.memory_bytes // 1024, params.parallelism)
    with tempfile.TemporaryDirectory(prefix="twocats-startup-") as scratch:
        commands: list[Command] = []
        first: dict[str, dict[str, float]] = {}
        for name, tree in trees.items():
            cache = Path(scratch) / f"cache-{name}"
            _say(f"{name}: first twocats hash, empty kernel cache (compiles)")
            cold, stored = _first_hash(name, tree, cache, profile)
            first[name] = {"wall_s": cold.wall, "cpu_s": cold.cpu}
            commands += twocats_commands(name, tree, cache, profile, stored)
        wheel_cache = Path(scratch) / "cache-wheel"
        if wheel is not None:
            _say(f"installing {wheel.name}")
            commands.append(wheel_command(wheel, Path(scratch) / "venv", wheel_cache, profile))
        commands += argon2
        for command in commands:
            timed(command)  # warm-up: the page cache, and anything a first run writes
        samples: dict[str, list[Run]] = {command.label: [] for command in commands}
        for turn in range(runs):
            order = commands if turn % 2 == 0 else commands[::-1]
            for command in order:
                samples[command.label].append(timed(command))
            _say(f"  turn {turn + 1} of {runs}")
        # Read before the probes below, which run the commands once more.
        wheel_cache_written = wheel_cache.exists()
        first_tree = next(iter(trees))
        heavy_imports = {
            command.label.removeprefix(f"{first_tree}: "): _heavy_imports(command)
            for command in commands
            if command.label.startswith((f"{first_tree}: ", "wheel: "))
            and "--help" not in command.label
        }
    hash_label = f"{first_tree}: {HASH}"
    hash_runs = samples[hash_label]
    equal_runs = samples[argon2[1].label]
    hash_seconds = [float(json.loads(run.stdout)["seconds"]) for run in hash_runs]
    return {
        "profile": profile,
        "memory_bytes": params.memory_bytes,
        "runs": runs,
        "first_hash": first,
        "commands": {label: _medians(values) for label, values in samples.items()},
        "new_over_old": _paired_ratios(samples) if "old" in trees else {},
        "hash_over_argon2_equal_memory": statistics.median(
            mine.wall / theirs.wall for mine, theirs in zip(hash_runs, equal_runs, strict=True)
        ),
        "hash_share_of_process": statistics.median(
            seconds / run.wall for seconds, run in zip(hash_seconds, hash_runs, strict=True)
        ),
        "hash_itself_s": statistics.median(hash_seconds),
        "heavy_imports": heavy_imports,
        "wheel": wheel.name if wheel is not None else None,
        "wheel_cache_written": wheel_cache_written,
    }


def _heavy_imports(command: Command) -> list[str]:
    """Which of numba and numpy ``command`` (a Python process) imports, from ``-X importtime``."""
    args = (command.args[0], "-X", "importtime", *command.args[1:])
    done = subprocess.run(
        args,
        input=command.stdin,
        env=command.env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        check=True,
    )
    imported = {
        line.rsplit(b"|", 1)[-1].strip().decode()
        for line in done.stderr.splitlines()
        if line.startswith(b"import time:")
    }
    return [name for name in HEAVY if name in imported]


def run(profile: str, runs: int, against: str | None, wheel: Path | None = None) -> dict[str, Any]:
    """Measure this tree (and commit ``against``); return the report document."""
    before = load_average()
    document: dict[str, Any] = {
        "suite": "startup",
        "title": "Start-up: whole processes beside argon2-cffi's",
        "machine": machine(),
        "commit": commit(),
        "against": against,
        "against_commit": commit(against) if against else None,
        "load_before": before,
    }
    with tempfile.TemporaryDirectory(prefix="twocats-against-") as old_dir:
        trees = {"new": REPO}
        if against:
            trees["old"] = _export(against, Path(old_dir))
        document.update(measure(trees, profile, runs, wheel))
    document["load_after"] = load_average()
    return document


def _paired_ratios(samples: dict[str, list[Run]]) -> dict[str, dict[str, float]]:
    """For each twocats process: this tree's over the old tree's, run by run (medians)."""
    ratios = {}
    for label, runs in samples.items():
        if not label.startswith("new: "):
            continue
        old = samples.get(label.replace("new: ", "old: ", 1))
        if old is None:
            continue
        ratios[label[len("new: ") :]] = {
            "wall": statistics.median(a.wall / b.wall for a, b in zip(runs, old, strict=True)),
            "cpu": statistics.median(a.cpu / b.cpu for a, b in zip(runs, old, strict=True)),
        }
    return ratios


def _row(label: str, figures: dict[str, float]) -> str:
    return (
        f"| {label} | {figures['wall_s']:.3f} | {figures['cpu_s']:.3f} | "
        f"{figures['wall_min_s']:.3f}-{figures['wall_max_s']:.3f} |"
    )


def markdown(document: dict[str, Any]) -> str:
    """The report as markdown."""
    from twocats._units import format_size

    trees = "this tree (`new`)"
    if document["against"]:
        trees += f" and `{document['against']}` ({document['against_commit'][:10]}, `old`)"
    lines = markdown_head(
        document,
        document["load_before"] or [0.0, 0.0, 0.0],
        document["load_after"] or [0.0, 0.0, 0.0],
        "| process | median wall s | median CPU s | wall min-max |",
        "|---|---:|---:|---:|",
    )
    lines[3:3] = [
        "",
        (
            f"Commit {document['commit'][:10]}; {trees}.  Profile `{document['profile']}` "
            f"({format_size(document['memory_bytes'])}); runs of each process: {document['runs']}, "
            "taking turns; CPU is user + system of the process."
        ),
    ]
    for label, figures in document["commands"].items():
        lines.append(_row(label, figures))
    for name, figures in document["first_hash"].items():
        lines.append(
            f"| {name}: first twocats hash, empty kernel cache (1 run) | "
            f"{figures['wall_s']:.3f} | {figures['cpu_s']:.3f} | |"
        )
    if document["new_over_old"]:
        lines += [
            "",
            "New over old, run by run (medians of the turns' ratios; below 1 is faster):",
            "",
            "| process | wall | CPU |",
            "|---|---:|---:|",
        ]
        for label, ratios in document["new_over_old"].items():
            lines.append(f"| {label} | {ratios['wall']:.2f}x | {ratios['cpu']:.2f}x |")
    ratio = document["hash_over_argon2_equal_memory"]
    share = document["hash_share_of_process"]
    lines += [
        "",
        (
            "* Warm `twocats hash` over argon2-cffi's process at equal memory, run by run "
            f"(median): **{ratio:.2f}x** wall."
        ),
        (
            f"* The hash itself: {document['hash_itself_s']:.3f} s, **{100 * share:.0f}%** of the "
            "warm `twocats hash` process (median of the runs' shares)."
        ),
        "* What each process imports of numba and numpy (`python -X importtime`): "
        + "; ".join(
            f"{label}: **{', '.join(names) or 'neither'}**"
            for label, names in document["heavy_imports"].items()
        )
        + ".",
        (
            f"* `{WHEEL_HASH}`: `{document['wheel']}` installed into a new virtual environment; "
            "each run starts with no kernel cache, and the runs wrote "
            f"{'to it' if document['wheel_cache_written'] else 'nothing to it'}."
            if document.get("wheel")
            else "* No platform wheel was given (--wheel), so there is no cold-with-wheel figure."
        ),
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite and write bench/results/startup.{json,md}."""
    parser = argparse.ArgumentParser(prog="python -m bench startup", description=__doc__)
    parser.add_argument("--runs", type=int, default=RUNS, help=f"runs per process ({RUNS})")
    parser.add_argument("--against", default=None, help="also run the twocats rows of commit REV")
    parser.add_argument("--profile", default="moderate", help="twocats profile (moderate)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR)
    parser.add_argument(
        "--wheel", type=Path, default=None, help="also time the first hash after installing WHEEL"
    )
    parser.add_argument("--smoke", action="store_true", help="every process once, no files")
    args = parser.parse_args(list(argv or []))
    if args.smoke:
        return smoke()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    document = run(args.profile, args.runs, args.against, args.wheel)
    write_document("startup", document, markdown(document), args.out)
    return 0


def smoke() -> int:
    """Run every process once at the cheapest profile; print the table, write no files."""
    document = run("cheapest", 1, None)
    print(markdown(document), end="")
    return 0
