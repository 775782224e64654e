"""The settings ``twocats tune`` prints to paste: the parameters and the hasher's bounds.

One snippet per framework adapter (``--for django``, ``pwdlib``, ``passlib``) and one for the
core :class:`~twocats.PasswordHasher`, each a list of (where it goes, its text).  The texts are
ordinary Python that the tests paste into real projects.

Nothing here imports numpy or numba.
"""

from __future__ import annotations

from typing import Final

from twocats._units import format_size
from twocats.perf.tune import ServerBounds

__all__ = ["FRAMEWORKS", "settings_files"]

#: The frameworks ``tune --for`` knows.
FRAMEWORKS: Final = ("django", "pwdlib", "passlib")

#: The Django hasher class the settings define, and the module they put it in.
DJANGO_CLASS: Final = "TunedTwoCatsHasher"
DJANGO_MODULE: Final = "myproject.hashers"


def _bounds(bounds: ServerBounds, indent: str, between: str, end: str) -> list[str]:
    """The three bounds as lines ``<indent>name<between>value<end>``, each with a comment."""
    memory = format_size(bounds.max_total_memory)
    return [
        f"{indent}max_concurrency{between}{bounds.max_concurrency}{end}  # verifications at once",
        f"{indent}max_total_memory{between}{bounds.max_total_memory}{end}  # {memory} for all",
        f"{indent}timeout{between}{bounds.timeout:g}{end}  # seconds a login waits for a slot",
    ]


def settings_files(
    framework: str | None, prefix: str, bounds: ServerBounds
) -> list[tuple[str, str]]:
    """Return what to paste for `framework` (None: the core API): (where, text) pairs."""
    if framework == "django":
        hashers = "\n".join(
            [
                "from twocats.integrations.django import TwoCatsPasswordHasher",
                "from twocats.phc import decode_params",
                "",
                "",
                f"class {DJANGO_CLASS}(TwoCatsPasswordHasher):",
                f"    params = decode_params({prefix!r})",
                *_bounds(bounds, "    ", " = ", ""),
            ]
        )
        settings = "\n".join(
            [
                "PASSWORD_HASHERS = [",
                f'    "{DJANGO_MODULE}.{DJANGO_CLASS}",',
                '    "django.contrib.auth.hashers.PBKDF2PasswordHasher",',
                "]",
            ]
        )
        return [(DJANGO_MODULE.replace(".", "/") + ".py", hashers), ("settings.py", settings)]
    if framework == "pwdlib":
        text = [
            "from pwdlib import PasswordHash",
            "",
            "from twocats.integrations.pwdlib import TwoCatsHasher",
            "from twocats.phc import decode_params",
            "",
            "password_hash = PasswordHash(",
            "    (",
            "        TwoCatsHasher(",
            f"            params=decode_params({prefix!r}),",
            *_bounds(bounds, "            ", "=", ","),
            "        ),",
            "    )",
            ")",
        ]
    elif framework == "passlib":
        text = [
            "from passlib.context import CryptContext",
            "",
            "from twocats.integrations.passlib import TwoCatsHandler",
            "",
            "context = CryptContext(",
            "    schemes=[TwoCatsHandler],",
            f"    twocats__profile={prefix!r},",
            *_bounds(bounds, "    twocats__", "=", ","),
            ")",
        ]
    else:
        text = [
            "from twocats import PasswordHasher",
            "from twocats.phc import decode_params",
            "",
            "hasher = PasswordHasher.from_params(",
            f"    decode_params({prefix!r}),",
            *_bounds(bounds, "    ", "=", ","),
            ")",
        ]
    return [("Python", "\n".join(text))]
