"""The batch size of the bulk upgrade, shared by :mod:`twocats.bulk.job` and ``twocats upgrade-db``.

This module imports nothing, so the command line can read the limits without SQLAlchemy or Dask.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_BATCH_SIZE", "MAX_BATCH_SIZE"]

#: Rows read, and written back in one transaction, at a time.
DEFAULT_BATCH_SIZE: Final = 1000

#: The largest batch accepted.
MAX_BATCH_SIZE: Final = 100_000
