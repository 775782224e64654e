"""What Django stores for a parameter set, known without importing Django.

Django keeps a password in ``AbstractBaseUser.password``, a column of :data:`MAX_STORED_LENGTH`
characters, as the hasher's algorithm name followed by the PHC string; its salt is 22 random
letters and digits (:data:`DJANGO_SALT_LENGTH`).  ``twocats tune --for django`` and the Django
hasher both judge a parameter set by :func:`longest_stored`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Final

from twocats import phc
from twocats.exceptions import InvalidParametersError
from twocats.params import Params

__all__ = ["DJANGO_ALGORITHM", "DJANGO_SALT_LENGTH", "MAX_STORED_LENGTH", "longest_stored"]

#: The length of ``AbstractBaseUser.password`` (``CharField(max_length=128)``).
MAX_STORED_LENGTH: Final = 128

#: The algorithm name the Django hasher stores in front of the PHC string.
DJANGO_ALGORITHM: Final = "twocats"

#: The length of Django's salt (``BasePasswordHasher.salt()``: 128 bits in letters and digits).
DJANGO_SALT_LENGTH: Final = 22


def longest_stored(params: Params, salt_len: int = DJANGO_SALT_LENGTH) -> int:
    """Return the length of the longest value a Django hasher for `params` can store.

    That is a fresh hash, or one upgraded from a lower memory cost, whose string then carries
    the start level as well (at most ``mem_cost - 1``, the widest such number).
    """
    forms = [params]
    if params.mem_cost > 0:
        # A March 2014 set may refuse that start level, and then every lower one too: no
        # upgraded value of it exists.
        with contextlib.suppress(InvalidParametersError):
            forms.append(dataclasses.replace(params, start_mem_cost=params.mem_cost - 1))
    salt = bytes(salt_len)
    return max(
        len(DJANGO_ALGORITHM) + len(phc.encode(form, salt, bytes(form.output_size)))
        for form in forms
    )
