"""A system check (``manage.py check``, and at every server start) of the twocats hashers.

The check is silent while the stored-hash limits accept every hash the deployment can have made:
those of the configured parameters (the hasher refuses to start otherwise, ``twocats.E001``),
those of each parameter set in ``previous``, and those upgraded offline from one of them to the
memory cost of the configured parameters or of another ``previous`` set.  A ``previous`` set
whose hashes the limits refuse is a warning that names the fix: ``twocats.W001`` for memory
(raise ``max_memory``, or drop the set), ``twocats.W002`` for work (raise ``max_work``, or drop
the set).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from django.contrib.auth.hashers import get_hashers
from django.core import checks

from twocats._units import format_size
from twocats.exceptions import HashLimitError, HashMemoryLimitError, InvalidParametersError
from twocats.integrations.django.hashers import TwoCatsPasswordHasher
from twocats.kdf import geometry, limits
from twocats.params import Params
from twocats.password import PasswordHasher, differences


def check_hashers(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Report each twocats hasher of ``PASSWORD_HASHERS`` that is refused or refuses its hashes."""
    messages: list[checks.CheckMessage] = []
    for hasher in get_hashers():
        if not isinstance(hasher, TwoCatsPasswordHasher):
            continue
        try:
            configured = hasher.hasher
        except InvalidParametersError as exc:
            messages.append(checks.Error(str(exc), obj=type(hasher), id="twocats.E001"))
            continue
        for index in range(len(configured.previous)):
            refusal = _refusal(configured, index)
            if refusal is not None:
                error, hint, id = refusal
                messages.append(
                    checks.Warning(
                        f"{error}; users with such hashes cannot log in",
                        hint=hint,
                        obj=type(hasher),
                        id=id,
                    )
                )
    return messages


def _made_with(configured: PasswordHasher, index: int) -> Iterator[tuple[str, Params]]:
    """Yield the hashes ``previous[index]`` stands for: its own, then its offline upgrades.

    Each comes as the subject of a refusal and its parameters.  An upgrade keeps every parameter
    but the memory cost, raised to that of the configured parameters or of another ``previous``
    set that differs in nothing else.
    """
    earlier = configured.previous[index]
    name = f"previous[{index}]"
    yield f"a hash of {name}", earlier
    costs = {
        target.mem_cost
        for target in (configured.params, *configured.previous)
        if target.mem_cost > earlier.mem_cost and not differences(earlier, target)
    }
    for mem_cost in sorted(costs):
        upgraded = dataclasses.replace(earlier, mem_cost=mem_cost)
        yield f"a hash of {name} upgraded to mem_cost={mem_cost}", upgraded


def _refusal(configured: PasswordHasher, index: int) -> tuple[HashLimitError, str, str] | None:
    """Return the first refusal of a hash of ``previous[index]``, its fix and its check id."""
    stored = configured.limits
    name = f"previous[{index}]"
    drop = f"drop {name} if no stored hash was made with it"
    for subject, params in _made_with(configured, index):
        try:
            stored.check(params, subject=subject)
        except HashMemoryLimitError as exc:
            needed = geometry.work_memory(params)
            machine = limits.machine_memory()
            if machine is not None and needed > machine:
                hint = f"this machine cannot hold such a hash: {drop}"
            else:
                hint = f"raise max_memory to at least {needed} ({format_size(needed)}), or {drop}"
            return exc, hint, "twocats.W001"
        except HashLimitError as exc:
            work = stored.work_of(params)
            hint = f"raise max_work to at least {work} ({limits.format_work(work)}), or {drop}"
            return exc, hint, "twocats.W002"
    return None
