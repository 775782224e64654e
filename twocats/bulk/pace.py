"""How many rows a batch of the bulk upgrade holds: a few seconds of the workers' work, measured.

A batch is written back in one transaction, so a crash loses the batches in flight and a stop the
unfinished tasks of those batches.  :class:`Pace` sizes each batch to about
:data:`BATCH_SECONDS` of the workers' work at the target cost, from the rate at which the
workers finished the batches before it (the job's own clock: nothing a worker says is trusted),
within ``[workers, batch_size]``; until the first batch is in, a batch is one row per worker.  A
batch is sent as :data:`TASKS_PER_WORKER` tasks per worker, so that progress and a stop see rows
as soon as a task finishes.
"""

from __future__ import annotations

from typing import Final

__all__ = ["BATCH_SECONDS", "TASKS_PER_WORKER", "Pace"]

#: The workers' work in one batch, in seconds of the job's clock, about.
BATCH_SECONDS: Final = 3.0

#: Tasks per worker in a batch.
TASKS_PER_WORKER: Final = 4


class Pace:
    """The size of the next batch, from the rate measured on the batches finished so far."""

    def __init__(self, workers: int, batch_size: int) -> None:
        self._workers = workers
        self._most = batch_size
        #: Rows upgraded per second by all the workers, from the last batch finished.
        self.rate: float | None = None
        self._last_finish: float | None = None

    def size(self) -> int:
        """The rows of the next batch."""
        if self.rate is None:
            return min(self._most, self._workers)
        return min(self._most, max(self._workers, int(self.rate * BATCH_SECONDS)))

    def chunk(self, rows: int) -> int:
        """The rows of each task of a batch of `rows` rows."""
        return max(1, -(-rows // (self._workers * TASKS_PER_WORKER)))

    def finished(self, rows: int, submitted: float, now: float) -> None:
        """Measure a batch of `rows` rows sent at `submitted` and finished at `now`.

        The workers were on it from when it was sent or the batch before it finished, whichever
        came later (batches run one after another, in the order sent).
        """
        started = submitted if self._last_finish is None else max(submitted, self._last_finish)
        self._last_finish = now
        if now > started:
            self.rate = rows / (now - started)
