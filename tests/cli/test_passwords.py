"""The password commands of the CLI through click's CliRunner: output, JSON, exit codes, errors."""

from __future__ import annotations

import base64
import dataclasses
import importlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from twocats import __version__, kdf, phc
from twocats.cli import _secrets, main
from twocats.params import Params
from twocats.password import PasswordHasher
from twocats.profiles import CHEAPEST

TINY = ["--profile", "cheapest", "--insecure"]


def run(*args: str, stdin: str | bytes | None = None) -> Result:
    """Invoke the CLI with separate stdout and stderr."""
    return CliRunner().invoke(main, list(args), input=stdin)


def one_error_line(result: Result) -> str:
    """Return the single error line on stderr, checking that nothing else was printed there."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    assert lines[0].startswith("Error: ")
    return lines[0]


def stored_hash(password: str = "pw", params: Params = CHEAPEST) -> str:
    """Return a hash made through the library (not the CLI) to test the CLI against."""
    return PasswordHasher.from_params(params).hash(password)


def test_help_imports_no_numba() -> None:
    """--help of the group and of every command imports neither numba nor numpy."""
    code = (
        "import sys\n"
        "from twocats.cli import main\n"
        "for args in ([], ['hash'], ['verify'], ['derive'], ['tune'], ['compare'], ['sum'],\n"
        "             ['upgrade'], ['needs-rehash'], ['bench'], ['selftest']):\n"
        "    try:\n"
        "        main([*args, '--help'], prog_name='twocats')\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code == 0, (args, exc.code)\n"
        "print(sorted(m for m in ('numba', 'numpy', 'llvmlite') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_no_password_option() -> None:
    """Passwords cannot be given on the command line."""
    result = run("hash", *TINY, "--password", "secret")
    assert result.exit_code == 2
    assert "No such option" in result.stderr


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the CLI take standard input for a terminal, so that the hidden prompt is used."""
    monkeypatch.setattr(_secrets, "terminal_input", lambda: True)


@pytest.mark.usefixtures("terminal")
def test_hash_from_prompt() -> None:
    """The hidden prompt asks twice on stderr; stdout holds only the hash."""
    result = run("hash", *TINY, stdin="pässword\npässword\n")
    assert result.exit_code == 0, result.output
    encoded = result.stdout.strip()
    assert "pässword" not in result.stdout + result.stderr
    assert "Password" in result.stderr
    assert PasswordHasher.from_params(CHEAPEST).verify(encoded, "pässword")


@pytest.mark.usefixtures("terminal")
def test_hash_prompt_mismatch_is_refused() -> None:
    """Two different answers at the confirmation prompt do not produce a hash."""
    result = run("hash", *TINY, stdin="one\ntwo\nthree\n")
    assert result.exit_code == 1
    assert "Error: The two entered values do not match." in result.stderr
    assert result.stderr.endswith("Aborted!\n")
    assert result.stdout == ""


def test_hash_from_stdin_keeps_bytes() -> None:
    """--password-stdin takes the first line's bytes as they are, without the line ending."""
    raw = b"\xff\xfe not utf-8 \t"
    result = run("hash", *TINY, "--password-stdin", stdin=raw + b"\r\nsecond line\n")
    assert result.exit_code == 0, result.output
    assert PasswordHasher.from_params(CHEAPEST).verify(result.stdout.strip(), raw)


def test_hash_json() -> None:
    """--json writes one document with the hash, the parameters and the time."""
    started = time.perf_counter()
    result = run("hash", *TINY, "--password-stdin", "--json", "--salt-len", "20", stdin="pw\n")
    elapsed = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert set(document) == {"hash", "params", "seconds", "startup_seconds", "verify_options"}
    assert document["verify_options"] == []
    assert document["params"]["mem_cost"] == 0
    assert document["params"]["memory_bytes"] == 1024
    assert len(phc.decode(document["hash"]).salt) == 20
    assert PasswordHasher.from_params(CHEAPEST).verify(document["hash"], "pw")
    # The times measured inside the command lie within the command (consistency, not speed).
    assert 0 < document["seconds"] < elapsed
    assert 0 <= document["startup_seconds"] < elapsed - document["seconds"]


def test_hash_with_parameter_options() -> None:
    """Parameter options adjust the profile, also across variants."""
    result = run(
        "hash",
        *TINY,
        "--variant",
        "2014-03",
        "--time-cost",
        "1",
        "--hash-size",
        "20",
        "--mem-cost",
        "2",
        "--password-stdin",
        stdin="pw\n",
    )
    assert result.exit_code == 0, result.output
    params = phc.decode(result.stdout.strip()).params
    assert (
        dataclasses.replace(
            CHEAPEST,
            mem_cost=2,
            start_mem_cost=2,
            overwrite_cost=None,
            variant="2014-03",
            time_cost=1,
            hash_size=20,
        )
        == params
    )


def test_hash_from_phc_parameter_string() -> None:
    """--params takes the prefix 'twocats tune' prints."""
    prefix = phc.encode_params(dataclasses.replace(CHEAPEST, multiplies=3))
    result = run("hash", "--params", prefix, "--password-stdin", stdin="pw\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(prefix + "$")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--lanes", "3"], "lanes must be a power of two"),
        (["--variant", "2015", "--time-cost", "2"], "time_cost must be None"),
        (["--params", "$twocats$v=2015$m=01"], "canonical decimal"),
        (["--params", "$twocats$v=2015$m=1", "--profile", "cheapest"], "cannot be used together"),
        (["--max-memory", "1KiB"], "max_memory"),
    ],
)
def test_hash_bad_parameters(args: list[str], fragment: str) -> None:
    """Bad parameters are one error line naming the problem, with exit status 2."""
    result = run("hash", *args, "--password-stdin", stdin="pw\n")
    assert result.exit_code == 2
    assert fragment in one_error_line(result)


def test_verify_ok_and_mismatch() -> None:
    """verify exits 0 for the right password and 1 with one line for a wrong one."""
    encoded = stored_hash()
    good = run("verify", encoded, "--password-stdin", stdin="pw\n")
    assert (good.exit_code, good.stdout) == (0, "OK\n")
    bad = run("verify", encoded, "--password-stdin", stdin="px\n")
    assert bad.exit_code == 1
    assert "does not match" in one_error_line(bad)
    assert bad.stdout == ""


def test_prompt_needs_a_terminal() -> None:
    """Without a terminal and without --password-stdin, hash refuses with one usage line."""
    result = run("hash", *TINY, stdin="pw\npw\n")
    assert result.exit_code == 2
    assert one_error_line(result) == (
        "Error: no terminal for the hidden password prompt; use --password-stdin"
    )
    assert result.stdout == ""


@pytest.mark.usefixtures("terminal")
def test_verify_prompt() -> None:
    """Without --password-stdin verify asks once, on stderr."""
    result = run("verify", stored_hash(), stdin="pw\n")
    assert result.exit_code == 0, result.output
    assert result.stdout == "OK\n"


def test_verify_json() -> None:
    """--json reports the outcome as a document, with the same exit statuses."""
    encoded = stored_hash()
    good = run("verify", encoded, "--password-stdin", "--json", stdin="pw\n")
    assert (good.exit_code, json.loads(good.stdout)) == (0, {"verified": True})
    bad = run("verify", encoded, "--password-stdin", "--json", stdin="px\n")
    assert (bad.exit_code, json.loads(bad.stdout)) == (1, {"verified": False})


def test_verify_with_pepper(tmp_path: Path) -> None:
    """--pepper-file supplies the pepper a hash was made with."""
    pepper = tmp_path / "pepper"
    pepper.write_bytes(b"\x00server pepper\xff")
    made = run("hash", *TINY, "--pepper-file", str(pepper), "--password-stdin", stdin="pw\n")
    encoded = made.stdout.strip()
    unpeppered = run("verify", encoded, "--password-stdin", stdin="pw\n")
    assert unpeppered.exit_code == 1
    assert "does not match" in one_error_line(unpeppered)
    peppered = run(
        "verify", encoded, "--pepper-file", str(pepper), "--password-stdin", stdin="pw\n"
    )
    assert (peppered.exit_code, peppered.stdout) == (0, "OK\n")


NOT_TWOCATS = "Error: not a twocats hash (it must start with $twocats$)"


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("", NOT_TWOCATS),
        ("$twocats$", "Error: a twocats hash has the form $twocats$v=...$params$salt$hash"),
        ("not a hash", NOT_TWOCATS),
        ("$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$aGFzaA", NOT_TWOCATS),
    ],
)
def test_verify_malformed_hash(bad: str, message: str) -> None:
    """A malformed HASH is one error line saying why, with exit status 2, before any prompt."""
    result = run("verify", bad)
    assert result.exit_code == 2
    assert one_error_line(result) == message
    assert "Password" not in result.stderr


def test_verify_refuses_too_much_memory() -> None:
    """A stored hash asking for more than --max-memory is refused before the prompt."""
    planted = phc.encode(Params(mem_cost=30), bytes(16), bytes(32))
    result = run("verify", planted)
    assert result.exit_code == 2
    assert "mem_cost=30 needs 1 TiB" in one_error_line(result)
    small = phc.encode(Params(mem_cost=12), bytes(16), bytes(32))
    limited = run("verify", small, "--max-memory", "2MiB")
    assert limited.exit_code == 2
    assert "more than max_memory (2 MiB, 2097152 bytes)" in one_error_line(limited)


def test_upgrade_equals_direct_hash() -> None:
    """upgrade raises the cost without the password, exactly as hashing at the new cost would."""
    salt = bytes(range(16))
    encoded = PasswordHasher.from_params(CHEAPEST).hash("pw", salt=salt)
    result = run("upgrade", encoded, "--mem-cost", "3")
    assert result.exit_code == 0, result.output
    upgraded = result.stdout.strip()
    new = dataclasses.replace(CHEAPEST, mem_cost=3)
    assert upgraded == PasswordHasher.from_params(new).hash("pw", salt=salt)
    assert run("verify", upgraded, "--password-stdin", stdin="pw\n").exit_code == 0
    document = json.loads(run("upgrade", encoded, "--mem-cost", "2", "--json").stdout)
    assert (document["old_mem_cost"], document["mem_cost"]) == (0, 2)


def test_upgrade_errors() -> None:
    """A hash already at the target is printed unchanged; no target or a hash over the limits is
    a usage error."""
    encoded = stored_hash(params=dataclasses.replace(CHEAPEST, mem_cost=2))
    for cost in ("2", "1"):
        same = run("upgrade", encoded, "--mem-cost", cost)
        assert same.exit_code == 0, same.output
        assert same.stdout == encoded + "\n"
        assert "already at or above the target" in same.stderr
    limited = run("upgrade", encoded, "--mem-cost", "12", "--max-memory", "2KiB")
    assert limited.exit_code == 2
    assert one_error_line(limited) == (
        "Error: the stored hash is refused: mem_cost=2 needs 4 KiB of work memory (4096 bytes), "
        "more than max_memory (2 KiB, 2048 bytes)"
    )
    missing = run("upgrade", encoded)
    assert missing.exit_code == 2
    assert "give the target: --mem-cost N alone" in one_error_line(missing)


def test_needs_rehash() -> None:
    """needs-rehash answers yes or no and tells when an upgrade would do."""
    encoded = stored_hash()
    assert run("needs-rehash", encoded, *TINY).stdout == "no\n"
    bigger = run("needs-rehash", encoded, *TINY, "--mem-cost", "3")
    assert bigger.stdout == "yes\n"
    assert "twocats upgrade HASH --mem-cost 3" in bigger.stderr
    other = run("needs-rehash", encoded, *TINY, "--multiplies", "3", "--json")
    document = json.loads(other.stdout)
    assert (document["needs_rehash"], document["can_upgrade"]) == (True, False)
    assert document["differences"] == [{"parameter": "multiplies", "stored": 1, "target": 3}]
    garbage = run("needs-rehash", "garbage")
    assert garbage.exit_code == 2
    assert one_error_line(garbage) == NOT_TWOCATS


def test_derive_formats() -> None:
    """derive writes the KDF output as hex, base64 or raw bytes, and truncates to --length."""
    key = kdf.derive(b"pw", b"NaCl", CHEAPEST, data=b"\x01\x02")
    args = ["derive", *TINY, "--salt", "NaCl", "--data-hex", "0102", "--password-stdin"]
    assert run(*args, stdin="pw\n").stdout == key.hex() + "\n"
    b64 = run(*args, "--format", "base64", stdin="pw\n").stdout
    assert base64.b64decode(b64) == key
    raw = CliRunner().invoke(main, [*args, "--format", "raw"], input="pw\n")
    assert raw.stdout_bytes == key
    short = run(*args, "--length", "10", "--json", stdin="pw\n")
    assert json.loads(short.stdout)["key"] == key[:10].hex()


def test_derive_salt_sources(tmp_path: Path) -> None:
    """The salt may come as text, hex or a file, and exactly one of them is required."""
    salt_file = tmp_path / "salt"
    salt_file.write_bytes(b"\x00\xffsalt")
    key = kdf.derive(b"pw", b"\x00\xffsalt", CHEAPEST)
    for option in (["--salt-hex", "00ff73616c74"], ["--salt-file", str(salt_file)]):
        result = run("derive", *TINY, *option, "--password-stdin", stdin="pw\n")
        assert result.stdout == key.hex() + "\n"
    none = run("derive", *TINY, "--password-stdin", stdin="pw\n")
    assert none.exit_code == 2
    assert "a salt is required" in one_error_line(none)
    both = run("derive", *TINY, "--salt", "a", "--salt-hex", "00", "--password-stdin", stdin="x\n")
    assert both.exit_code == 2
    assert one_error_line(both) == "Error: give the salt only once (text, hex or file)"


def test_derive_length_and_variant() -> None:
    """--length sets the March 2014 hash size and is bounded by the digest elsewhere."""
    march = dataclasses.replace(CHEAPEST, variant="2014-03", overwrite_cost=None)
    args = ["derive", *TINY, "--variant", "2014-03", "--salt", "NaCl", "--password-stdin"]
    result = run(*args, "--length", "24", stdin="pw\n")
    expected = kdf.derive(b"pw", b"NaCl", dataclasses.replace(march, hash_size=24))
    assert result.stdout == expected.hex() + "\n"
    too_long = run(
        "derive", *TINY, "--salt", "s", "--length", "33", "--password-stdin", stdin="x\n"
    )
    assert too_long.exit_code == 2
    assert "--length must be from 1 to 32" in one_error_line(too_long)
    raw_json = run(
        "derive", *TINY, "--salt", "s", "--format", "raw", "--json", "--password-stdin", stdin="x\n"
    )
    assert raw_json.exit_code == 2
    assert one_error_line(raw_json) == "Error: --format raw cannot be combined with --json"


def test_empty_stdin_is_an_error() -> None:
    """--password-stdin with nothing on standard input is a usage error, not an empty password."""
    result = run("hash", *TINY, "--password-stdin", stdin="")
    assert result.exit_code == 2
    assert "no password on standard input" in one_error_line(result)


def test_interrupt_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C during a long hash prints 'interrupted' and exits with status 130."""

    def interrupted(self: PasswordHasher, password: object, **_: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(PasswordHasher, "hash", interrupted)
    result = run("hash", *TINY, "--password-stdin", stdin="pw\n")
    assert result.exit_code == 130
    assert result.stderr.strip() == "interrupted"


def test_unexpected_error_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug surfaces as one line naming the exception type, never a traceback or its message."""

    def broken(self: PasswordHasher, password: object, **_: object) -> str:
        raise RuntimeError("internal detail with pw")

    monkeypatch.delenv("TWOCATS_DEBUG", raising=False)
    monkeypatch.setattr(PasswordHasher, "hash", broken)
    result = run("hash", *TINY, "--password-stdin", stdin="pw\n")
    assert result.exit_code == 1
    line = one_error_line(result)
    assert "RuntimeError" in line
    assert "internal detail" not in line


def test_lazy_command_help_matches() -> None:
    """The one-line help shown for lazily loaded commands is the commands' own."""
    from twocats.cli import _LAZY_COMMANDS

    for name, (module, attribute, text) in _LAZY_COMMANDS.items():
        command = getattr(importlib.import_module(module), attribute)
        assert command.get_short_help_str(limit=200) == text, name
        assert name in run("--help").stdout


def test_closed_pipe_is_quiet(tmp_path: Path) -> None:
    """sum into a reader that stops early exits without an error message, as coreutils do."""
    for index in range(2000):
        (tmp_path / f"f{index:04d}").write_bytes(b"x")
    names = sorted(str(path) for path in tmp_path.iterdir())
    command = [sys.executable, "-c", "from twocats.cli import main; main()", "sum", *names]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()
        errors = process.stderr.read()
        status = process.wait()
    assert first.endswith(b"f0000\n")
    assert (status, errors) == (1, b"")


# The console script in a child, with an exit handler that says whether the usual interpreter
# teardown ran.
CONSOLE_SCRIPT = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('teardown ran\\n'))\n"
    "from twocats.cli import run\n"
    "run()\n"
)


def console(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run the ``twocats`` console script entry point in a fresh process."""
    return subprocess.run(
        [sys.executable, "-c", CONSOLE_SCRIPT, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_console_script_ends_password_commands_without_teardown() -> None:
    """After a password command the process ends at once, its output and status intact."""
    made = console("hash", *TINY, "--password-stdin", stdin="pw\n")
    assert made.returncode == 0, made.stderr
    assert "teardown ran" not in made.stderr
    encoded = made.stdout.strip()
    PasswordHasher.from_params(CHEAPEST).verify(encoded, "pw")
    matched = console("verify", encoded, "--password-stdin", stdin="pw\n")
    assert (matched.returncode, matched.stderr) == (0, "")
    wrong = console("verify", encoded, "--password-stdin", stdin="other\n")
    assert wrong.returncode == 1
    assert wrong.stderr.startswith("Error: ")
    assert "teardown ran" not in wrong.stderr


def test_console_script_keeps_teardown_elsewhere(tmp_path: Path) -> None:
    """Other commands and the group's --help exit as usual, through the interpreter's teardown."""
    target = tmp_path / "f"
    target.write_bytes(b"x")
    summed = console("sum", str(target))
    assert summed.returncode == 0, summed.stderr
    assert summed.stdout.endswith(f"{target}\n")
    assert summed.stderr == "teardown ran\n"
    helped = console("--help")
    assert (helped.returncode, helped.stderr) == (0, "teardown ran\n")


def test_module_runs_the_console_script() -> None:
    """python -m twocats.cli is the console script."""
    done = subprocess.run(
        [sys.executable, "-m", "twocats.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout.split()[-1]) == (0, __version__)
