"""How to install an optional extra, read from the installed package's own metadata.

twocats is installed from a checkout or a wheel, not from a package index, so ``pip install
'twocats[bulk]'`` would fail; the hint names the extra's own requirements instead, which a package
index does serve, exactly as ``pyproject.toml`` lists them.
"""

from __future__ import annotations

import shlex
from importlib import metadata

__all__ = ["extra_requirements", "install_hint"]


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
