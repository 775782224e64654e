"""Why a row was not upgraded: a fixed set of keys, the ``failed`` counts of a bulk report."""

from __future__ import annotations

from typing import Final

__all__ = [
    "FAILURE_REASONS",
    "KEY_NOT_UNIQUE",
    "OVER_MEMORY_LIMIT",
    "OVER_WORK_LIMIT",
    "RESULT_REFUSED",
    "UPGRADE_FAILED",
    "WORKER_FAILED",
]

OVER_MEMORY_LIMIT: Final = "over_memory_limit"
OVER_WORK_LIMIT: Final = "over_work_limit"
UPGRADE_FAILED: Final = "upgrade_failed"
WORKER_FAILED: Final = "worker_failed"
RESULT_REFUSED: Final = "result_refused"
KEY_NOT_UNIQUE: Final = "key_not_unique"

#: Every reason, with what it means.
FAILURE_REASONS: Final = {
    OVER_MEMORY_LIMIT: "the stored hash asks for more memory than --max-memory; never computed",
    OVER_WORK_LIMIT: "the stored hash asks for more work than the hasher allows; never computed",
    UPGRADE_FAILED: "a worker could not upgrade it",
    WORKER_FAILED: "a Dask worker failed or the cluster went away; its batch was not written",
    RESULT_REFUSED: "a worker's result failed the checks; its batch was not written",
    KEY_NOT_UNIQUE: "an update matched more than one row; its batch was rolled back",
}
