"""The password API: :class:`~twocats.PasswordHasher` and what its calls stand on.

The hasher turns passwords into self-describing PHC strings (see :mod:`twocats.phc`), verifies them
in constant time, tells when a stored hash should be redone, and can **upgrade a stored hash to a
higher memory cost without the password**.

Upgrading without the password
------------------------------
TwoCats computes its memory levels one after another, doubling the memory each time, and the stored
output of a hash at memory cost ``m`` is exactly the value the algorithm would carry into level
``m + 1`` if it had been asked for more memory.  :meth:`PasswordHasher.upgrade` therefore continues
the computation from the stored output, running only the new, larger levels, and the result is
identical to what hashing the password directly at the new cost (with the original start level)
would have given.  A server can thus raise the cost of every stored hash in an offline job,
including the accounts of users who never log in again, instead of waiting for each user's next
login as bcrypt, scrypt and argon2 require.  No other widely used password library offers this.
The secret pepper (if any) only enters at the start of the computation, so upgrading does not need
it either.

Limits for stored hashes
------------------------
A stored hash is untrusted input.  :meth:`PasswordHasher.verify`, :meth:`~PasswordHasher.upgrade`
and :meth:`~PasswordHasher.check_hash` accept only canonical strings (:mod:`twocats.phc`) and
refuse, before waiting, allocating or computing anything, a string that asks for more memory than
:attr:`PasswordHasher.max_memory` (:class:`~twocats.exceptions.HashMemoryLimitError`) or more work
than :attr:`PasswordHasher.max_work` (:class:`~twocats.exceptions.HashLimitError`).  Both limits
follow, by default, the costliest parameters this server may have stored hashes with
(:meth:`twocats.kdf.limits.StoredLimits.relative_to`): its own parameters (twice their memory),
the built-in profiles up to :data:`~twocats.profiles.SENSITIVE`
(:data:`twocats.profiles.BUILT_IN`) and the parameters the operator declares with ``previous``,
and 2.5 times the work of the costliest of them.  Lowering the cost therefore never locks anyone
out: a hash made before verifies, and :meth:`~PasswordHasher.needs_rehash` asks for it to be
rehashed at the lower cost.  A planted hash is bounded by that estimate, not by a measurement:
measured on the project machine (two shared cores, load 5 to 8), the costliest planted hashes the
default limits accept took up to 6 times the CPU of a verification of
:data:`~twocats.profiles.SENSITIVE` (``h=sha512,m=19,x=8,l=2``: 3.0 s against 0.50 s; the
estimate, 2.5 times, runs low for eight multiplies and few lanes).  The first hash of a kernel
shape that no cache holds also costs a compile, about 7 to 9 s of CPU (18 to 26 verifications of
``SENSITIVE``), once per shape per machine while the cache can be written; it never runs inside
an admission slot (shapes other than the hasher's own, the built-in profiles' and ``previous``
compile in a fresh, isolated process, one at a time, within
:data:`twocats.simd.family.COMPILE_SECONDS`).
An operator who accepts costlier stored hashes says so with ``previous``, ``max_memory`` (the
work limit then follows a default-profile hash of that size at least) or ``max_work``.
:func:`twocats.kdf.limits.check_stored_params` makes the same check for parameters from anywhere
else (the command line, a vector file, a bulk upgrade), relative to the default profile alone.
Both errors are :class:`~twocats.exceptions.InvalidHashError`, so one ``except
InvalidHashError`` handles every stored hash this server cannot use.

Hashes a hasher makes always pass its own limits.  A hash made with parameters above another
verifier's limits is refused there: :func:`verify_limits_for` gives the ``max_memory`` and
``max_work`` a verifier needs to accept it.

Other libraries' hashes
-----------------------
:meth:`PasswordHasher.verify_foreign` runs another library's verification of an argon2 or bcrypt
hash (the framework adapters' older users) in an admission slot, its memory counted against
:attr:`~PasswordHasher.max_total_memory`, after :meth:`~PasswordHasher.check_foreign` checked
its cost against the same limits as a twocats hash (:data:`ARGON2_MAX_LANES`, :func:`foreign_cost`).

Under load
----------
A hasher admits at most :attr:`~PasswordHasher.max_concurrency` hashes (hash, verify, upgrade) at
once, and at most :attr:`~PasswordHasher.max_total_memory` of work memory for all of them together;
further callers wait in first-in, first-out order.  The defaults keep the usable CPUs busy without
oversubscribing them (the CPUs divided by the parallelism of the hasher's parameters) and the
memory within half of what the machine can give, so memory stays bounded whatever the number of
callers.  ``timeout`` (per hasher, or per call) makes a waiting caller give up with
:class:`~twocats.exceptions.HasherBusyError`.  All hashes of the process share one pool of kernel
threads with the lane kernels, as large as the most threads asked of it.  The work areas of
finished calls are kept in idle engines for reuse, since mapping fresh pages costs about as much
as the hashing itself; :meth:`~PasswordHasher.release` lets them go.  A dropped hasher frees them
at once (it is part of no reference cycle).  Any number of threads and asyncio tasks
(:meth:`~PasswordHasher.ahash`, :meth:`~PasswordHasher.averify`, :meth:`~PasswordHasher.aupgrade`)
may share one hasher; the results never depend on scheduling.

Unknown users
-------------
:meth:`PasswordHasher.verify_unknown` spends the time and memory of a real verification and always
raises :class:`~twocats.exceptions.VerifyMismatchError`: call it when a login names a user that
does not exist, so that response times do not tell which user names are registered.  After an
offline upgrade from memory cost ``m``, give the hasher parameters with ``start_mem_cost=m``: new
hashes then take the shape of the upgraded ones, and so does the decoy (the framework adapters'
decoys are fresh hashes or verifications of one).

Secrets
-------
Passwords, salts and the pepper never appear in a ``repr``, an error message or an exception
chain, and the library writes no logs (the framework adapters log a warning, naming its
parameters only, for a stored hash the limits refuse).  ``wipe=True`` zeroes the work memory
after every hash (see :class:`PasswordHasher` for its cost).

The package's modules are private (``_hasher``, ``_jobs``: each call as a job and its kernel made
ready, ``_admission``, ``_foreign``: other libraries' hashes, ``_target``: a hash set's target,
``_upgraders``); ``twocats`` re-exports :class:`PasswordHasher`, and the rest of twocats imports
what it needs from here.  Importing this package imports neither numpy nor numba.
"""

from __future__ import annotations

from twocats.password._foreign import (
    ARGON2_MAX_LANES,
    MAX_FOREIGN_LENGTH,
    ForeignCost,
    check_foreign,
    foreign_cost,
)
from twocats.password._hasher import (
    DEFAULT_SALT_LEN,
    TOTAL_MEMORY_SHARE,
    PasswordHasher,
    can_upgrade_to,
    needs_rehash_for,
    verify_limits_for,
)
from twocats.password._jobs import Kernels
from twocats.password._target import (
    CURRENT,
    MAX_DIFFERENCE_KINDS,
    NEEDS_PASSWORD,
    UPGRADE,
    Difference,
    Standing,
    Target,
    count_differences,
    describe_differences,
    differences,
)
from twocats.password._upgraders import MAX_HASHERS, Upgraders

__all__ = [
    "ARGON2_MAX_LANES",
    "CURRENT",
    "DEFAULT_SALT_LEN",
    "MAX_DIFFERENCE_KINDS",
    "MAX_FOREIGN_LENGTH",
    "MAX_HASHERS",
    "NEEDS_PASSWORD",
    "TOTAL_MEMORY_SHARE",
    "UPGRADE",
    "Difference",
    "ForeignCost",
    "Kernels",
    "PasswordHasher",
    "Standing",
    "Target",
    "Upgraders",
    "can_upgrade_to",
    "check_foreign",
    "count_differences",
    "describe_differences",
    "differences",
    "foreign_cost",
    "needs_rehash_for",
    "verify_limits_for",
]
