"""Names of a package imported on first use, so that importing the package stays cheap."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """Return the module ``__getattr__`` of `package` that loads each name of `where` on first use.

    `where` maps a public name to the module that defines it; a name mapped to ``package.name``
    is that submodule itself.  A loaded name is kept in the package, so it is looked up only once.
    """
    namespace = sys.modules[package].__dict__

    def load(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        imported = importlib.import_module(module)
        value = imported if module == f"{package}.{name}" else getattr(imported, name)
        namespace[name] = value
        return value

    return load
