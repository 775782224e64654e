"""How to install an optional extra, read from the installed package's own metadata.

twocats is installed from a checkout or a wheel, not from a package index, so ``pip install
'twocats[bulk]'`` would fail; the hint names the extra's own requirements instead, which a package
index does serve, exactly as ``pyproject.toml`` lists them.

:func:`missing_extra` is the one ImportError raised by every module that needs an extra which is
not installed: it names the module, the package that is missing, the extra and how to install it.
"""

from __future__ import annotations

import shlex
from importlib import metadata
from typing import Final

__all__ = [
    "EXTRA_OF_PACKAGE",
    "MissingExtraError",
    "extra_requirements",
    "install_hint",
    "missing_extra",
]

#: The extra that brings each importable package an optional part of twocats needs.
EXTRA_OF_PACKAGE: Final = {
    "dask": "bulk",
    "distributed": "bulk",
    "sqlalchemy": "bulk",
    "cryptography": "bulk",
    "psycopg": "postgres",
    "matplotlib": "bench",
    "django": "django",
    "pwdlib": "pwdlib",
    "passlib": "passlib",
}


class MissingExtraError(ImportError):
    """A module needs a package of an optional extra that is missing; the message names it."""


def extra_requirements(extra: str) -> list[str]:
    """Return the requirements of the optional extra `extra` (empty if twocats has no metadata)."""
    try:
        requires = metadata.requires("twocats") or []
    except metadata.PackageNotFoundError:
        return []
    wanted = f'extra == "{extra}"'
    found = []
    for requirement in requires:
        spec, _, marker = requirement.partition(";")
        if wanted in marker.replace("'", '"'):
            found.append(spec.strip())
    return found


def install_hint(extra: str) -> str:
    """Return a command that installs what the extra `extra` adds, as it would be typed."""
    requirements = extra_requirements(extra)
    if not requirements:
        return f"pip install -e '.[{extra}]' in a twocats checkout"
    return "pip install " + " ".join(shlex.quote(spec) for spec in requirements)


def missing_extra(module: str, error: ImportError, extra: str | None = None) -> MissingExtraError:
    """Return the ImportError for `module`, whose import of a package failed with `error`.

    The extra is `extra`, else the one :data:`EXTRA_OF_PACKAGE` names for the missing package,
    else ``test`` (the extra that holds every optional package).
    """
    package = (error.name or "").partition(".")[0]
    if extra is None:
        extra = EXTRA_OF_PACKAGE.get(package, "test")
    what = package or "a package"
    return MissingExtraError(
        f"{module} needs {what}, which is not installed; "
        f"install it with: {install_hint(extra)} (the {extra} extra)"
    )
