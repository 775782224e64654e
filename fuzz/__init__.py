"""Fuzz the readers of untrusted text: PHC strings, ``verify``, ``sum --check`` lines, vector files.

``python -m fuzz [--count N] [--seed S] [--targets a,b] [--out DIR]`` feeds each target
``N`` inputs (default 100,000) and checks its contract on every one:

* ``phc`` and ``phc_params``: :func:`twocats.phc.decode` and :func:`~twocats.phc.decode_params`
  (given ``str`` or ``bytes``) raise nothing but ``InvalidHashError``, and whatever they accept
  encodes back to exactly the input.
* ``verify``: :meth:`twocats.PasswordHasher.verify` with a small memory limit raises nothing but
  ``InvalidHashError`` (with its limit subclasses) and ``VerifyMismatchError``, plus
  ``InvalidParametersError`` for a ``str`` password that is not valid Unicode; it returns True
  only for an unmodified seed and the right password.
* ``checksum``: :func:`twocats.cli.checksum.parse_check_line` never raises, and a parsed line
  written out again parses to the same digest and name; one input in
  :data:`CLI_EVERY` also runs through ``twocats sum --check`` end to end, which must exit with
  status 0 or 1 and no unexpected error.
* ``vectors``: :func:`twocats.kdf.vectors.read_vectors` (and, for one input in
  :data:`FILE_EVERY`, :func:`~twocats.kdf.vectors.load_vectors` on the raw bytes) raise nothing
  but ``VectorFormatError``; building a vector's parameters raises nothing but
  ``InvalidParametersError``; a vector prints as one line, and a record re-serialised reads back
  to the same vector.

* ``stored_cli``: ``twocats upgrade`` and ``twocats needs-rehash`` (alternately) on a stored hash
  with a 1 MiB ``--max-memory`` and a 20 ms ``--max-work``, seeded with ordinary hashes and with
  planted costly shapes (``time_cost=30``, 4 GiB): each exits with status 0 or 2 and one ``Error:``
  line at most, never an unexpected error, and within :data:`TIME_LIMIT` (the memory and work
  limits hold); an upgraded hash is at the memory cost asked for, one above the stored hash's.
* ``selftest_cli``: ``twocats selftest --vectors FILE --max-memory 1MiB --max-work 20ms`` on a
  file of one
  vector record, seeded with the packaged vectors and planted costly ones: it exits with status 0,
  1 or 2, never an unexpected error, and within :data:`TIME_LIMIT` (over-limit vectors are
  refused, not run).

No exception message of the PHC, ``verify``, checksum or ``stored_cli`` targets may contain
:data:`MARKER`, a stand-in secret that the generator plants in inputs and passwords: those messages
never quote their input.  (The vector reader, and so ``selftest_cli``, names a bad record by its id
and quotes unknown names, at most 40 ASCII characters of them: vector files hold no secrets.)

An input is random bytes, random text over the target's alphabet, a structural mutation (vector
records), or most often a valid seed put through one to five mutations: bit flips, byte changes,
truncations, deletions, duplicated, dropped or reordered fields, huge or odd numbers (leading
zeros, signs, 5000 digits, non-ASCII digits), non-ASCII text, NUL bytes, invalid UTF-8, very long
repetitions (up to :data:`MAX_INPUT` bytes) and splices of two seeds.  Each input runs under a
:data:`TIME_LIMIT` second alarm, so a hang is reported as such.

The report (``fuzz.json`` and ``fuzz.md`` in ``--out``, default fuzz/results) counts inputs,
acceptances and refusals by exception class per target; any undocumented exception, broken
contract or hang is listed with its input saved under ``fuzz-failures/`` and makes the exit
status 1.  ``--replay TARGET FILE`` reruns one saved input and shows its traceback.

The modules, one job each: :mod:`fuzz.contract` (limits and outcomes), :mod:`fuzz.mutations`
(input generation), :mod:`fuzz.readers` and :mod:`fuzz.cli_targets` (the targets' checks and
seeds), :mod:`fuzz.targets` (the table), :mod:`fuzz.workspace` (the run's working folder),
:mod:`fuzz.runner` (running and classifying) and :mod:`fuzz.__main__` (options and report).
"""

from __future__ import annotations

from fuzz.cli_targets import planted_hashes, planted_vectors
from fuzz.contract import CLI_EVERY, MARKER, TIME_LIMIT, ContractError, Outcome, Target
from fuzz.mutations import generate
from fuzz.runner import classify, run, smoke
from fuzz.targets import TARGETS, load_seeds

__all__ = [
    "CLI_EVERY",
    "MARKER",
    "TARGETS",
    "TIME_LIMIT",
    "ContractError",
    "Outcome",
    "Target",
    "classify",
    "generate",
    "load_seeds",
    "planted_hashes",
    "planted_vectors",
    "run",
    "smoke",
]
