"""Other local users in the tests: ``nobody`` runs this twocats as a service, ``daemon`` is the
neighbour who plants files and holds locks.

The tests that need them run as root (CI does) and skip through
:func:`tests.support.environment.need` elsewhere.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import twocats
from tests.support.environment import need

#: The service user, its group, and the neighbour.
SERVICE, SERVICE_GROUP, NEIGHBOUR = "nobody", 65534, "daemon"

#: What a child imports from site-packages, and every package's metadata (what exists is copied).
_PACKAGES = ("numba", "llvmlite", "numpy", "numpy.libs", "cffi", "pycparser", "click", "argon2")
_PACKAGE_GLOBS = (
    "_cffi_backend*",
    "_argon2_cffi_bindings",
    "argon2_cffi_bindings*",
    "colorama",
    "*.dist-info",
)


def need_root() -> None:
    """Skip (a failure under CI) unless this process is root with ``runuser`` and ``setpriv``."""
    if os.geteuid() != 0 or not (shutil.which("runuser") and shutil.which("setpriv")):
        need("root, runuser and setpriv, to act as another user")


def need_service_kernels() -> None:
    """Skip unless kernels are compiled (no ``NUMBA_DISABLE_JIT``) and this process can run
    Python as the service user."""
    from twocats.simd import _jit

    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    python_as()


@functools.cache
def readable_packages() -> str:
    """A folder every user may read, holding copies of this twocats and the packages it imports.

    A virtual environment or a checkout in root's home (or in a 0700 temporary folder, as CI's is)
    is closed to the service user, so the child imports these copies instead; they are removed
    when the test process ends.
    """
    top = Path(tempfile.mkdtemp(prefix="twocats-user-site-"))
    atexit.register(shutil.rmtree, top, True)
    top.chmod(0o755)
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(Path(twocats.__file__).parent, top / "twocats", ignore=ignore)
    site = Path(sysconfig.get_paths()["purelib"])
    names = {*_PACKAGES, *(p.name for g in _PACKAGE_GLOBS for p in site.glob(g))}
    for name in sorted(names):
        source = site / name
        if source.is_dir():
            shutil.copytree(source, top / name, ignore=ignore)
        elif source.is_file():
            shutil.copy2(source, top / name)
    for path in [top, *top.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return str(top)


def python_as(user: str = SERVICE, *, keep_home: bool = False) -> list[str]:
    """The command that starts a Python of this version as ``user``, with this twocats.

    ``runuser`` gives the user's own ``HOME``; ``keep_home`` switches with ``setpriv`` instead,
    which keeps this process's environment, ``HOME`` included (a service started that way).
    Where the user cannot run this interpreter or read its packages, the system's interpreter of
    the same version runs with readable copies of them.
    """
    need_root()
    group = "nogroup" if user == SERVICE else user
    if keep_home:
        prefix = ["setpriv", f"--reuid={user}", f"--regid={group}", "--clear-groups"]
    else:
        prefix = ["runuser", "-u", user, "--"]
    probe = [*prefix, sys.executable, "-c", "import numba, twocats"]
    if subprocess.run(probe, capture_output=True, cwd="/").returncode == 0:
        return [*prefix, sys.executable]
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    system = shutil.which(f"python{version}", path="/usr/bin")
    if system is None:
        need(f"a Python {version} the user {user} can run")
    return [*prefix, "env", f"PYTHONPATH={readable_packages()}", system]


@contextlib.contextmanager
def public_folder(prefix: str) -> Iterator[Path]:
    """A new folder every user may enter (0755, owned by this user), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def cache_env(root: Path, *, aot: bool | None = None) -> dict[str, str]:
    """This process's environment with ``root`` as the only twocats setting, kernels compiled,
    and artefacts on or off where ``aot`` says."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TWOCATS_")}
    env.pop("NUMBA_DISABLE_JIT", None)
    env["TWOCATS_CACHE_DIR"] = str(root)
    if aot is not None:
        env["TWOCATS_AOT"] = "1" if aot else "0"
    return env


def warm_shared(root: Path, **options: Any) -> subprocess.CompletedProcess[str]:
    """Run the documented recipe as this user: ``twocats warmup --shared`` of the cheapest
    profile into ``root``, artefacts on; ``options`` go to :func:`subprocess.run`."""
    command = [sys.executable, "-m", "twocats.cli", "warmup", "--profile", "cheapest"]
    return subprocess.run(
        [*command, "--insecure", "--jobs", "1", "--shared"],
        env=cache_env(root, aot=True),
        cwd="/",
        capture_output=True,
        text=True,
        timeout=600,
        **options,
    )
