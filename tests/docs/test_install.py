"""Every install line of the README and the documentation works as written, in a fresh virtual
environment, and so does every hint the library gives for a missing optional part.

The environment sees the running one's packages and pip runs offline (``PIP_NO_INDEX``), so the
dependencies come from the machine and only twocats itself is installed: from a copy of the
checkout, as a user who has what the README gives them would run the lines.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.doc_blocks import ROOT, install_commands
from twocats._extras import extra_requirements, install_hint

_IGNORED = shutil.ignore_patterns(
    ".git", "_build", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
)


def _pip(venv: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(("PIP_", "PYTHON"))
    }
    # Offline, with the machine's setuptools as the build backend.
    env |= {
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    return subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _imported_from(venv: Path) -> Path:
    """Where the environment's Python imports twocats from."""
    shown = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import twocats; print(twocats.__file__)"],
        cwd=venv,
        env={key: value for key, value in os.environ.items() if not key.startswith("PYTHON")},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return Path(shown.stdout.strip())


def test_install_lines_work_as_written(tmp_path: Path) -> None:
    """Each documented pip command succeeds and installs this twocats, which then runs."""
    checkout = tmp_path / "twocats"
    shutil.copytree(ROOT, checkout, ignore=_IGNORED)
    venv = tmp_path / "venv"
    # Without pip of its own, the new environment has no setuptools of its own either (Python
    # 3.11's venv brings an old one): it sees this one's packages (pip, twocats' dependencies,
    # setuptools and wheel), and pip installs into it.
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300
    )
    (site_packages,) = venv.glob("lib/python*/site-packages")
    outer = [path for path in sys.path if path.endswith("-packages")]
    (site_packages / "_outer.pth").write_text("\n".join(outer) + "\n")
    commands = install_commands()
    assert any(args[0] == "wheel" for _, args in commands)
    done: set[tuple[str, ...]] = set()
    for where, args in commands:
        if tuple(args) in done:  # the same line on another page
            continue
        done.add(tuple(args))
        if args[0] == "install":  # each line installs twocats itself, not "already satisfied"
            _pip(venv, ["uninstall", "-y", "twocats"], checkout)
        result = _pip(venv, args, checkout)
        assert result.returncode == 0, f"{where}: pip {shlex.join(args)}\n{result.stderr[-3000:]}"
        if args[0] == "install":
            assert tmp_path in _imported_from(venv).parents, f"{where}: another twocats imports"
    shown = subprocess.run(
        [str(venv / "bin" / "twocats"), "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert "0.1.0" in shown.stdout


def test_missing_extra_hints_install_what_the_extra_lists() -> None:
    """The hint for each extra names exactly that extra's requirements, as pip reads them."""
    for extra in ("bulk", "postgres", "django", "pwdlib", "passlib", "bench"):
        requirements = extra_requirements(extra)
        assert requirements, extra
        assert shlex.split(install_hint(extra)) == ["pip", "install", *requirements]
