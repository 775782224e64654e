"""The password commands: hash, verify, upgrade and needs-rehash.

Passwords come from a hidden prompt or ``--password-stdin``, never from the command line, where
other users of the machine could read them.  The library is imported inside each command, so that
parsing and ``--help`` compile nothing.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from twocats.cli._common import (
    F,
    Failure,
    UsageFailure,
    backend_option,
    emit_json,
    info,
    json_option,
    params_document,
)
from twocats.cli._limits import size_argument, verify_limits, verify_options, work_argument
from twocats.cli._options import (
    build_params,
    build_target,
    lost_dollars_hint,
    max_memory_option,
    params_options,
    stored_limits_options,
    target_given,
)
from twocats.cli._secrets import (
    NoEchoCommand,
    password_stdin_option,
    read_password,
    read_secret_file,
)

if TYPE_CHECKING:
    from twocats.kdf.limits import StoredLimits
    from twocats.params import Params
    from twocats.password import Difference, PasswordHasher
    from twocats.phc import PHCHash

_PEPPER_HELP = (
    "File holding a secret pepper (TwoCats' data input). Every byte of the file is the pepper, "
    "a trailing newline included; an empty file is refused. Hashes made with a pepper verify "
    "only with the same pepper."
)


def _decode_argument(hash_string: str) -> tuple[str, PHCHash]:
    """Decode a HASH argument, naming the likely cause when the shell or a copy mangled it.

    HASH is a PHC string, bare or behind a framework's prefix, as copied from a database column
    (Django's ``twocats$twocats$v=...``).  Returns the prefix ('' if none) and the decoded hash.
    """
    from twocats.exceptions import InvalidHashError
    from twocats.phc import decode, split_prefix

    hint = None
    if hash_string != hash_string.strip():
        hint = "HASH starts or ends with a space or a line break (copied with the newline?)"
    else:
        hint = lost_dollars_hint("HASH", hash_string)
    prefix, text = split_prefix(hash_string) or ("", hash_string)
    try:
        return prefix, decode(text)
    except InvalidHashError as error:
        if hint is None:
            raise
        message = f"{error}; {hint}"
    raise UsageFailure(message)


def _note_verify_options(params: Params) -> list[str]:
    """Say which options 'twocats verify' needs for hashes of `params`; return them."""
    options = verify_options(params)
    if options:
        info(
            f"note: verify this hash with 'twocats verify {' '.join(options)}' "
            "(above its default limits)"
        )
    return options


def _upgrade_limits(target: Params, max_memory: int | None, max_work: int | None) -> StoredLimits:
    """Return the limits of an upgrade to `target`: verify's, with room for `target`'s memory.

    The target is the user's own choice, refused for its memory only where the machine cannot
    give it; its work is held to verify's work limit at that memory.
    """
    from twocats.password import verify_limits_for

    memory = verify_limits(max_memory).max_memory
    return verify_limits(max(memory, verify_limits_for(target)[0]), max_work)


def _salt_len_option(help_text: str) -> Callable[[F], F]:
    """Add ``--salt-len``: the salt length of new hashes, 8 to 64 bytes (16 by default)."""
    return click.option(
        "--salt-len", type=click.IntRange(8, 64), default=16, show_default=True, help=help_text
    )


def _print_hash(encoded: str, as_json: bool, **fields: Any) -> None:
    """Print a new hash: the PHC string alone, or with --json a document that adds `fields`."""
    if as_json:
        emit_json({"hash": encoded, **fields})
    else:
        click.echo(encoded)


@click.command("hash", cls=NoEchoCommand)
@params_options
@_salt_len_option("Random salt length in bytes.")
@click.option("--pepper-file", type=click.Path(dir_okay=False), default=None, help=_PEPPER_HELP)
@password_stdin_option
@max_memory_option("the memory this machine can give")
@backend_option
@json_option
def hash_command(
    salt_len: int,
    pepper_file: str | None,
    password_stdin: bool,
    allow_empty: bool,
    max_memory: int | None,
    backend: str | None,
    as_json: bool,
    **options: Any,
) -> None:
    """Hash a password and print the PHC string to store.

    If 'twocats verify' would refuse the hash with its default limits, a note on standard error
    (and "verify_options" with --json) names the options it needs.
    """
    from twocats.password import PasswordHasher
    from twocats.profiles import CHEAPEST

    params = build_params(options)
    hasher = PasswordHasher.from_params(
        params,
        salt_len=salt_len,
        secret=read_secret_file(pepper_file, "pepper") or None,
        max_memory=max_memory,
        backend=backend,
    )
    password = read_password(password_stdin, confirm=True, allow_empty=allow_empty)
    started = time.perf_counter()
    # Loading (or compiling) the kernels is start-up, timed apart from the hash itself: a hash
    # at the cheapest parameters loads every kernel a hash uses.
    PasswordHasher.from_params(CHEAPEST, backend=backend).hash(b"start-up")
    loaded = time.perf_counter()
    encoded = hasher.hash(password)
    seconds = time.perf_counter() - loaded
    _print_hash(
        encoded,
        as_json,
        params=params_document(params),
        seconds=seconds,
        startup_seconds=loaded - started,
        verify_options=_note_verify_options(params),
    )


@click.command("verify", cls=NoEchoCommand)
@click.argument("hash_string", metavar="HASH")
@click.option("--pepper-file", type=click.Path(dir_okay=False), default=None, help=_PEPPER_HELP)
@password_stdin_option
@stored_limits_options("a HASH")
@backend_option
@json_option
def verify_command(
    hash_string: str,
    pepper_file: str | None,
    password_stdin: bool,
    allow_empty: bool,
    max_memory: int | None,
    max_work: int | None,
    backend: str | None,
    as_json: bool,
) -> None:
    """Check a password against a stored HASH.

    It accepts exactly the hashes a server with the default profile and the same limits accepts.
    Exit status 0 if it matches, 1 if it does not, 2 if HASH is malformed or asks for more memory
    or work than the limits allow.  HASH may carry a framework's prefix, as copied from Django's
    column (twocats$twocats$...).  Put HASH in single quotes: it contains $ signs.
    """
    from twocats.exceptions import VerifyMismatchError

    hasher = _verify_hasher(read_secret_file(pepper_file, "pepper"), max_memory, max_work, backend)
    # A malformed or oversized hash is refused before the prompt.
    _, stored = _decode_argument(hash_string)
    phc_string = stored.encode()
    hasher.check_hash(phc_string)
    password = read_password(password_stdin, confirm=False, allow_empty=allow_empty)
    try:
        hasher.verify(phc_string, password)
    except VerifyMismatchError:
        if not as_json:
            raise
        emit_json({"verified": False})
        raise click.exceptions.Exit(1) from None
    if as_json:
        emit_json({"verified": True})
    else:
        click.echo("OK")


def _verify_hasher(
    pepper: bytes, max_memory: int | None, max_work: int | None, backend: str | None
) -> PasswordHasher:
    """Return the hasher of 'twocats verify': the default profile's, with the given limits."""
    from twocats.exceptions import InvalidParametersError
    from twocats.password import PasswordHasher
    from twocats.profiles import DEFAULT

    try:
        return PasswordHasher.from_params(
            DEFAULT,
            secret=pepper or None,
            max_memory=max_memory,
            max_work=max_work,
            backend=backend,
        )
    except InvalidParametersError as error:
        if max_memory is None and max_work is None:
            raise
        message = str(error)
    raise UsageFailure(
        f"{message}; the limits of 'twocats verify' cannot be below the default profile's own "
        "memory and work"
    )


_NO_TARGET = (
    "give the target: --mem-cost N alone (the hash's own parameters at memory cost N), or "
    "--profile, --params or other parameter options (an exact parameter set)"
)


@click.command("upgrade")
@click.argument("hash_string", metavar="HASH")
@params_options
@stored_limits_options("a stored HASH")
@backend_option
@json_option
def upgrade_command(
    hash_string: str,
    max_memory: int | None,
    max_work: int | None,
    backend: str | None,
    as_json: bool,
    **options: Any,
) -> None:
    """Raise the memory cost of a stored HASH to a target, without the password.

    --mem-cost N alone raises the hash to memory cost N and keeps its other parameters;
    --profile, --params or any other parameter option names the exact target set, and a hash
    that differs from it in other parameters needs the password.

    The new hash verifies the same password, exactly as if it had been hashed at the new cost;
    a hash already at or above the target is printed unchanged.  The stored hash must be within
    the limits 'twocats verify' applies with the same options, and so must the work of the
    upgrade (its memory may be the new cost's, as far as the machine can give it).  A note names
    the options verification of the new hash needs where they are above verify's defaults.
    HASH may carry a framework's prefix (Django's twocats$twocats$...), which is kept.  Put HASH
    in single quotes: it contains $ signs.

    Exit status 0 if the hash is at the target (upgraded or already there), 1 if it differs in
    other parameters (it needs the password), 2 for bad input.
    """
    from twocats.password import NEEDS_PASSWORD, UPGRADE, PasswordHasher

    if not target_given(options):
        raise UsageFailure(_NO_TARGET)
    prefix, stored = _decode_argument(hash_string)
    verify_limits(max_memory, max_work).check(stored.params)
    standing = build_target(options).standing(stored.params)
    if standing.kind == NEEDS_PASSWORD:
        raise Failure(_needs_password_message(standing.differences))
    old_mem_cost = stored.params.mem_cost
    if standing.kind != UPGRADE:
        info(f"already at or above the target: mem_cost {old_mem_cost}; left unchanged")
        encoded, seconds, new = stored.encode(), 0.0, stored.params
    else:
        new = dataclasses.replace(stored.params, mem_cost=standing.params.mem_cost)
        limits = _upgrade_limits(new, max_memory, max_work)
        limits.check(new, old_mem_cost=old_mem_cost, subject="the upgrade")
        hasher = PasswordHasher.from_params(
            standing.params,
            salt_len=len(stored.salt),
            max_memory=limits.max_memory,
            backend=backend,
        )
        started = time.perf_counter()
        encoded = hasher.upgrade(stored.encode())
        seconds = time.perf_counter() - started
    _print_hash(
        prefix + encoded,
        as_json,
        upgraded=standing.kind == UPGRADE,
        old_mem_cost=old_mem_cost,
        mem_cost=new.mem_cost,
        seconds=seconds,
        verify_options=_note_verify_options(new),
    )


def _needs_password_message(differences: tuple[Difference, ...]) -> str:
    """Say that a hash differing in `differences` needs the password, and what else can be done."""
    from twocats.password import describe_differences

    return (
        f"the hash differs in {describe_differences(differences)}: it needs the password; it "
        "will be rehashed at the next login. To raise only its memory, run with --mem-cost alone."
    )


@click.command("needs-rehash")
@click.argument("hash_string", metavar="HASH")
@params_options
@_salt_len_option("Salt length current hashes should have.")
@stored_limits_options("a HASH")
@json_option
def needs_rehash_command(
    hash_string: str,
    salt_len: int,
    max_memory: int | None,
    max_work: int | None,
    as_json: bool,
    **options: Any,
) -> None:
    """Tell whether HASH was made with other parameters than the target ones.

    --mem-cost N alone compares with the hash's own parameters at memory cost N (a hash at or
    above it is current); --profile, --params or any other parameter option names the exact
    target set (default: the default profile).

    Prints "yes" or "no" (exit status 0 either way), and says which parameters differ, and
    whether 'twocats upgrade' can bring the hash up to date without the password, with the
    options it needs.  A HASH that 'twocats verify' would refuse with the same limits is refused
    here too; it may carry a framework's prefix (Django's twocats$twocats$...).
    """
    from twocats.password import NEEDS_PASSWORD, UPGRADE, needs_rehash_for

    _, stored = _decode_argument(hash_string)
    verify_limits(max_memory, max_work).check(stored.params)
    target = build_target(options)
    standing = target.standing(stored.params)
    wanted = standing.params if target.params is None else target.params
    # Only decoding and comparing: the target may be more than this machine can run.
    needed = needs_rehash_for(stored.encode(), wanted, salt_len=salt_len)
    upgradable = standing.kind == UPGRADE
    if as_json:
        emit_json(
            {
                "needs_rehash": needed,
                "can_upgrade": upgradable,
                "target": str(target),
                "differences": [
                    {"parameter": item.name, "stored": item.stored, "target": item.target}
                    for item in standing.differences
                ],
            }
        )
        return
    click.echo("yes" if needed else "no")
    if upgradable:
        new = dataclasses.replace(stored.params, mem_cost=target.mem_cost)
        raised = _upgrade_options(new, stored.params.mem_cost, max_memory, max_work)
        info(
            "it can be upgraded without the password: twocats upgrade HASH --mem-cost "
            + " ".join([str(target.mem_cost), *raised])
        )
    elif standing.kind == NEEDS_PASSWORD:
        info(
            "'twocats upgrade' cannot do it: "
            + _needs_password_message(standing.differences).replace("the hash", "it", 1)
        )
    elif needed and len(stored.salt) < salt_len:
        info(f"its salt is shorter than {salt_len} bytes: it will be rehashed at the next login")
    elif needed:
        info(
            f"its mem_cost {stored.params.mem_cost} is above the target's {target.mem_cost}: "
            "'twocats upgrade' never lowers it; it will be rehashed at the next login"
        )


def _upgrade_options(
    target: Params, old_mem_cost: int, max_memory: int | None, max_work: int | None
) -> list[str]:
    """Return the limit options 'twocats upgrade' needs to bring a hash up to `target`.

    Those given here (the stored hash needed them), and ``--max-work`` where the upgrade's work
    is above its limit.
    """
    from twocats.exceptions import HashLimitError, HashMemoryLimitError

    options = [] if max_memory is None else ["--max-memory", size_argument(max_memory)]
    limits = _upgrade_limits(target, max_memory, max_work)
    try:
        limits.check(target, old_mem_cost=old_mem_cost)
    except HashMemoryLimitError:
        # More than this machine can give: the upgrade will say so.
        pass
    except HashLimitError:
        max_work = limits.work_of(target, old_mem_cost=old_mem_cost)
    if max_work is not None:
        options += ["--max-work", work_argument(max_work)]
    return options
