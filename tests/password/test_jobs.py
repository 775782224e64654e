"""The jobs of a PasswordHasher: one record of what its calls need, with no secret in its repr."""

from __future__ import annotations

from twocats import PasswordHasher
from twocats.kdf.geometry import work_memory
from twocats.kdf.limits import StoredLimits
from twocats.password._jobs import Jobs
from twocats.profiles import CHEAPEST


def test_jobs_never_show_the_pepper() -> None:
    """The repr of a hasher's jobs names its parameters but not its pepper."""
    jobs = Jobs(CHEAPEST, 16, b"pepper-in-repr", StoredLimits.relative_to(CHEAPEST))
    assert "pepper-in-repr" not in repr(jobs)
    assert "pepper" not in repr(jobs)
    assert repr(CHEAPEST) in repr(jobs)


def test_a_job_never_shows_the_password_or_the_pepper() -> None:
    """A job's repr (a traceback's locals may show it) holds neither secret, whatever the call."""
    jobs = Jobs(CHEAPEST, 16, b"pepper-in-repr", StoredLimits.relative_to(CHEAPEST))
    stored = PasswordHasher.from_params(CHEAPEST).hash("other")
    made = [
        jobs.hash("password-in-repr", None),
        jobs.verify(stored, "password-in-repr"),
        jobs.hash_as(stored, "password-in-repr"),
        jobs.unknown("password-in-repr", None),
        jobs.unknown("password-in-repr", stored),
    ]
    for job in made:
        assert "in-repr" not in repr(job)
        assert repr(job.params) in repr(job)


def test_a_job_asks_for_the_memory_its_derivation_needs() -> None:
    """A hash job and an upgrade job ask admission for the work memory they will use."""
    hasher = PasswordHasher.from_params(CHEAPEST)
    jobs = Jobs(CHEAPEST, 16, b"", hasher.limits)
    assert jobs.hash(b"password", None).need == work_memory(CHEAPEST) > 0
    stored = hasher.hash(b"password")
    assert jobs.verify(stored, b"password").need == work_memory(CHEAPEST)
    assert jobs.upgrade(stored) == stored
