"""The peers' own test utilities, taken from the installed package or its source distribution.

libpass's ``HandlerCase`` (the suite every passlib handler is expected to pass) lives in the
``tests`` folder of libpass's source distribution, which its wheel leaves out.  When the installed
package has no ``tests/utils.py``, :func:`libpass_test_utils` downloads the source distribution
of the installed version once with pip (a package registry, never anything else) into a cache
folder, and loads the module from there.  Nothing of it is copied into this repository.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from types import ModuleType

#: Where downloaded peer sources are kept between runs.
CACHE_DIR = Path(os.environ.get("TWOCATS_TEST_CACHE", Path.home() / ".cache" / "twocats-tests"))

# The files of libpass's test package HandlerCase needs.
_LIBPASS_FILES = ("__init__.py", "utils.py", "utils_.py")


class PeerSuiteMissingError(RuntimeError):
    """A peer's test utilities could be found neither installed nor downloaded."""


def _installed_tests(distribution: str) -> Path | None:
    """Return the folder of the installed distribution's ``tests`` package, if it ships one."""
    for file in importlib.metadata.files(distribution) or ():
        if file.parts[-2:] == ("tests", "utils.py"):
            return Path(str(file.locate())).parent
    return None


def _download_libpass_tests(version: str) -> Path:
    """Return the cached ``tests`` folder of libpass `version`'s sdist, downloading it once."""
    target = CACHE_DIR / f"libpass-{version}" / "tests"
    if all((target / name).is_file() for name in _LIBPASS_FILES):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--disable-pip-version-check",
            "--quiet",
            f"libpass=={version}",
            "-d",
            scratch,
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        archives = sorted(Path(scratch).glob(f"libpass-{version}.tar.gz"))
        if done.returncode != 0 or not archives:
            raise PeerSuiteMissingError(
                f"libpass {version}'s source distribution (pip download failed: "
                f"{done.stderr.strip()[-300:]})"
            )
        extracted = Path(scratch) / "tests"
        extracted.mkdir()
        wanted = {f"libpass-{version}/tests/{name}": name for name in _LIBPASS_FILES}
        with tarfile.open(archives[0]) as archive:
            for member in archive.getmembers():
                # Only the named regular files are read; no path from the archive is used.
                if member.name in wanted and member.isfile():
                    source = archive.extractfile(member)
                    assert source is not None
                    (extracted / wanted[member.name]).write_bytes(source.read())
        if not all((extracted / name).is_file() for name in _LIBPASS_FILES):
            raise PeerSuiteMissingError(
                f"libpass {version}'s source distribution with tests/utils.py"
            )
        if target.is_dir():
            shutil.rmtree(target)  # An incomplete copy of an interrupted run.
        extracted.rename(target)
    return target


def libpass_test_utils() -> ModuleType:
    """Return libpass's ``tests.utils`` module (``HandlerCase``) for the installed libpass.

    Raises :class:`PeerSuiteMissingError` if neither the installed package nor its source
    distribution provides it.
    """
    try:
        version = importlib.metadata.version("libpass")
    except importlib.metadata.PackageNotFoundError:
        raise PeerSuiteMissingError("libpass installed") from None
    folder = _installed_tests("libpass") or _download_libpass_tests(version)
    # The module imports its sibling as ``tests.utils_``: load it under that package name for
    # the time of the import only, leaving any other ``tests`` module as it was.
    saved = {
        name: sys.modules.pop(name)
        for name in list(sys.modules)
        if name == "tests" or name.startswith("tests.")
    }
    sys.path.insert(0, str(folder.parent))
    try:
        importlib.invalidate_caches()
        module = importlib.import_module("tests.utils")
    finally:
        sys.path.remove(str(folder.parent))
        for name in [name for name in sys.modules if name == "tests" or name.startswith("tests.")]:
            del sys.modules[name]
        sys.modules.update(saved)
    if not hasattr(module, "HandlerCase"):
        raise PeerSuiteMissingError(f"HandlerCase in {folder / 'utils.py'}")
    return module
