"""``manage.py twocats_upgrade``: raise the memory cost of stored twocats hashes offline.

Exit status 0 when every twocats value is at the target, 1 when some are left for their user's
next login or changed during the run (the summary says which), as for ``twocats upgrade-db``.
"""

from __future__ import annotations

import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import get_hashers
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from twocats._units import format_size
from twocats.exceptions import TwoCatsError
from twocats.integrations.django.hashers import TwoCatsPasswordHasher
from twocats.integrations.django.upgrade import UpgradeSummary, upgrade_users
from twocats.params import BOUNDS
from twocats.password import describe_differences

#: Width of the progress bar, in characters.
BAR_WIDTH = 30


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def _mem_cost(text: str) -> int:
    low, high = BOUNDS["mem_cost"]
    value = int(text)
    if not low <= value <= high:
        raise ValueError(text)
    return value


def _days(text: str) -> float:
    value = float(text)
    if not 0 <= value < 100_000:
        raise ValueError(text)
    return value


class Command(BaseCommand):
    """Upgrade every stored twocats hash to the configured memory cost, without the passwords."""

    help = (
        "Raise the memory cost of every stored twocats password hash to that of the twocats "
        "hasher in PASSWORD_HASHERS, without the passwords, in batches. The target is the "
        "hasher's parameters, exactly; --mem-cost N alone raises each hash to memory cost N and "
        "keeps its other parameters. Django's session hash follows the stored value: upgraded "
        "users sign in again (see --inactive-for). Exit status 0 when every twocats value is at "
        "the target, 1 when some need the password (rehashed at their next login) or changed "
        "during the run."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        """The command's options."""
        parser.add_argument(
            "--batch-size",
            type=_positive_int,
            default=200,
            help="users read and written per transaction (default 200)",
        )
        parser.add_argument(
            "--mem-cost",
            type=_mem_cost,
            metavar="N",
            help=(
                "raise each hash to memory cost N (2**N KiB) and keep its other parameters, "
                "instead of the configured hasher's parameters"
            ),
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="count what would be upgraded, compute and write nothing",
        )
        parser.add_argument(
            "--inactive-for",
            type=_days,
            metavar="DAYS",
            help=(
                "only upgrade users who have not logged in for DAYS days (or never), so that "
                "nobody with a recent session is signed out; the others are rehashed at their "
                "next login (choose at least SESSION_COOKIE_AGE, 14 days by default)"
            ),
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Run the upgrade and print a summary."""
        hasher = next((h for h in get_hashers() if isinstance(h, TwoCatsPasswordHasher)), None)
        if hasher is None:
            raise CommandError("PASSWORD_HASHERS has no twocats hasher to upgrade to")
        inactive_before = None
        if options["inactive_for"] is not None:
            model = get_user_model()
            if not any(field.name == "last_login" for field in model._meta.get_fields()):
                raise CommandError(f"--inactive-for needs a last_login field on {model.__name__}")
            inactive_before = timezone.now() - datetime.timedelta(days=options["inactive_for"])
        try:
            summary = upgrade_users(
                hasher,
                mem_cost=options["mem_cost"],
                batch_size=options["batch_size"],
                dry_run=options["dry_run"],
                inactive_before=inactive_before,
                progress=self._progress if options["verbosity"] > 0 else None,
            )
        except TwoCatsError as exc:
            raise CommandError(str(exc)) from None
        if summary.examined and options["verbosity"] > 0 and self.stderr.isatty():
            self.stderr.write("")  # End the progress bar's line.
        self.stdout.write(self._summary(summary, dry_run=options["dry_run"]))
        lowest, own_start = summary.lowest_start, hasher.hasher.params.start_mem_cost
        if lowest is not None and own_start is not None and lowest < own_start:
            self.stdout.write(
                f"Upgraded values cost more to verify than new ones: set start_mem_cost = "
                f"{lowest} on {type(hasher).__qualname__} so that a login naming no user costs "
                "what theirs does."
            )
        if summary.attention:
            raise CommandError(
                f"{summary.attention} twocats values are not at the target (see above)",
                returncode=1,
            )

    def _progress(self, summary: UpgradeSummary) -> None:
        """Draw the progress bar on standard error (one line per batch without a terminal)."""
        done = summary.examined
        filled = BAR_WIDTH * done // max(summary.total, 1)
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        ending = "\r" if self.stderr.isatty() else "\n"
        self.stderr.write(f"[{bar}] {done}/{summary.total}", ending=ending)

    @staticmethod
    def _summary(summary: UpgradeSummary, *, dry_run: bool) -> str:
        verb = "would upgrade" if dry_run else "upgraded"
        size = format_size(1024 << summary.mem_cost)
        lines = [
            (
                f"{summary.examined} twocats hashes examined: {verb} {summary.upgraded} to "
                f"mem_cost {summary.mem_cost} ({size}), {summary.current} already there, "
                f"{summary.stale} to be rehashed at their next login (other parameters or "
                f"unusable), {summary.changed} changed during the run and left alone."
            )
        ]
        for differences, count in summary.differing.items():
            lines.append(
                f"{count} values differ in {describe_differences(differences)}: they need the "
                "password; they will be rehashed at the next login. To raise only their memory, "
                "run with --mem-cost alone."
            )
        if summary.upgraded and not dry_run:
            lines.append(
                "Upgraded users sign in again: Django's session hash follows the stored value."
            )
        return "\n".join(lines)
