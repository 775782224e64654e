"""Malformed argon2 and bcrypt rows, as a planted or damaged database holds them.

:data:`MALFORMED` are refused by :func:`twocats.password.check_foreign` before any library sees
them; :data:`LIBRARY_REFUSES` pass that check and are refused by the library that verifies them
(base64 whose unused bits are set, a bcrypt salt bcrypt will not read).  The framework adapters
must answer all of them as a malformed hash.
"""

from __future__ import annotations

import base64

from twocats.password import MAX_FOREIGN_LENGTH

__all__ = ["LIBRARY_REFUSES", "MALFORMED", "OUTPUT", "SALT"]


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode().rstrip("=")


#: The salt and output of the argon2 rows, in unpadded base64.
SALT, OUTPUT = _b64(b"saltsaltsaltsalt"), _b64(bytes(range(32)))
HEAD = "$argon2id$v=19$m=65536,t=3,p=4"

MALFORMED = {
    "zero costs": f"$argon2id$v=19$m=0,t=0,p=0${SALT}${OUTPUT}",
    "no passes": f"$argon2id$v=19$m=65536,t=0,p=4${SALT}${OUTPUT}",
    "no lanes": f"$argon2id$v=19$m=65536,t=3,p=0${SALT}${OUTPUT}",
    "memory below 8 KiB a lane": f"$argon2id$v=19$m=31,t=3,p=4${SALT}${OUTPUT}",
    "non-ASCII salt": f"{HEAD}$s\u00e4lzsalzsalz${OUTPUT}",
    "non-ASCII output": f"{HEAD}${SALT}${OUTPUT[:-1]}\u00e9",
    "no salt and output": HEAD,
    "no output": f"{HEAD}${SALT}",
    "empty salt": f"{HEAD}$${OUTPUT}",
    "empty output": f"{HEAD}${SALT}$",
    "padded base64": f"{HEAD}${SALT}==${OUTPUT}",
    "impossible base64 length": f"{HEAD}${SALT}AAA${OUTPUT}",
    "short salt": f"{HEAD}${_b64(bytes(7))}${OUTPUT}",
    "short output": f"{HEAD}${SALT}${_b64(bytes(3))}",
    "a NUL": f"{HEAD}${SALT}${OUTPUT}\0",
    "a newline": f"{HEAD}${SALT}${OUTPUT}\n",
    "a blank": f"{HEAD}${SALT} ${OUTPUT}",
    "a field more": f"{HEAD}${SALT}${OUTPUT}${OUTPUT}",
    "too long": f"{HEAD}${SALT}${'A' * MAX_FOREIGN_LENGTH}",
    "bcrypt cost 3": "$2b$03$" + "a" * 53,
    "bcrypt short": "$2b$12$" + "a" * 52,
    "bcrypt long": "$2b$12$" + "a" * 54,
    "bcrypt foreign character": "$2b$12$" + "a" * 52 + "!",
    "bcrypt non-ASCII": "$2b$12$" + "\u00e9" * 53,
}


LIBRARY_REFUSES = {
    "argon2 salt with unused bits set": "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHR$aGFzaGhhc2g",
    "bcrypt salt with unused bits set": "$2b$04$" + "a" * 53,
}
