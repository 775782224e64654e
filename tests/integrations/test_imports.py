"""Each adapter imports only with its framework, and says which extra to install otherwise."""

from __future__ import annotations

import subprocess
import sys

import pytest

from twocats._extras import install_hint

# A None entry in sys.modules makes "import name" raise ImportError, as if it were not installed.
_BLOCKED_IMPORT = """
import sys
sys.modules[{framework!r}] = None
try:
    import {module}
except ImportError as error:
    print(error)
else:
    print("imported")
"""


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return result.stdout.strip()


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("twocats.integrations.django", "django", "django"),
        ("twocats.integrations.pwdlib", "pwdlib", "pwdlib"),
        ("twocats.integrations.passlib", "passlib", "passlib"),
    ],
)
def test_adapter_without_its_framework_names_the_extra(
    module: str, framework: str, extra: str
) -> None:
    """Importing an adapter whose framework is missing raises ImportError naming the extra."""
    message = _run(_BLOCKED_IMPORT.format(framework=framework, module=module))
    assert message.startswith(f"{module} needs ")
    assert f"install it with: {install_hint(extra)} (the {extra} extra)" in message


def test_the_package_imports_no_framework() -> None:
    """import twocats.integrations loads none of the frameworks."""
    loaded = _run(
        "import sys, twocats.integrations; "
        "print(sorted({'django', 'pwdlib', 'passlib', 'fastapi'} & set(sys.modules)))"
    )
    assert loaded == "[]"
