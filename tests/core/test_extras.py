"""Every module that needs an optional extra says which one when its package is missing."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from twocats._extras import install_hint

# A meta-path finder that hides the packages named in HIDDEN, as if they were not installed.
_BLOCKER = """
import sys
HIDDEN = {hidden!r}

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Blocker())
"""

_IMPORT = """
try:
    {statement}
except ImportError as error:
    print(type(error).__name__, error)
else:
    print("imported")
"""

_BULK = ("dask", "distributed", "sqlalchemy", "cryptography")


def _run(hidden: tuple[str, ...], code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _BLOCKER.format(hidden=set(hidden)) + code],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("statement", "hidden", "module", "extra"),
    [
        ("from twocats.bulk import upgrade_table", _BULK, "twocats.bulk.job", "bulk"),
        ("from twocats.bulk import JobAbortedError", ("sqlalchemy",), "twocats.bulk.job", "bulk"),
        ("import twocats.bulk.table", ("sqlalchemy",), "twocats.bulk.table", "bulk"),
        ("import twocats.bulk.workers", ("dask",), "twocats.bulk.workers", "bulk"),
        ("import twocats.bulk.credentials", ("cryptography",), "twocats.bulk.credentials", "bulk"),
        (
            "from twocats.perf.compare_plot import pyplot; pyplot()",
            ("matplotlib",),
            "twocats.perf.compare_plot",
            "bench",
        ),
    ],
)
def test_a_module_without_its_extra_names_it(
    statement: str, hidden: tuple[str, ...], module: str, extra: str
) -> None:
    """Importing a module whose package is hidden raises ImportError naming the extra."""
    result = _run(hidden, _IMPORT.format(statement=statement))
    assert result.returncode == 0, result.stderr
    message = result.stdout.strip()
    assert message.startswith(f"MissingExtraError {module} needs "), message
    assert f"install it with: {install_hint(extra)} (the {extra} extra)" in message


def test_the_bulk_package_itself_imports_without_its_extra() -> None:
    """import twocats.bulk (its limits, for the command line's help) needs no extra."""
    result = _run(_BULK, _IMPORT.format(statement="import twocats.bulk.limits"))
    assert result.stdout.strip() == "imported", result.stderr


def test_upgrade_db_without_the_bulk_extra_is_one_line() -> None:
    """upgrade-db without Dask is exit 2 with one Error: line naming the bulk extra."""
    code = (
        "from twocats.cli import main\n"
        "main(['upgrade-db', 'sqlite:///absent.db', '--table', 't', '--key-column', 'k',"
        " '--hash-column', 'h'])\n"
    )
    result = _run(("dask", "distributed"), code)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert re.match(
        r"Error: upgrade-db: twocats\.bulk\.\w+ needs (dask|distributed),", result.stderr
    )
    assert f"{install_hint('bulk')} (the bulk extra)" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_bench_suite_without_its_framework_is_one_line() -> None:
    """python -m bench adapters without Django is exit 2 with one line naming the django extra."""
    code = "from bench.__main__ import _run\nraise SystemExit(_run(['adapters', '--smoke']))\n"
    result = _run(("django",), code)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(
        "error: bench.password.adapters needs django, which is not installed"
    )
    assert f"{install_hint('django')} (the django extra)" in result.stderr
    assert "Traceback" not in result.stderr
