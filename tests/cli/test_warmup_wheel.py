"""``twocats warmup --wheel``: a platform wheel's kernels, chosen by the CPU's x86-64 level,
checked, packaged.

The wheel's kernels are built for the x86-64 baseline into a folder of the test's own (a child
process whose numba targets that level); the loader picks them when no artefact of this machine
exists, and ``python -m build --wheel`` of a tree carrying them makes a platform wheel, while the
sdist does not carry them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.aot_artefacts import need_artefacts, reset
from twocats.cli.warmup import wheel_jobs
from twocats.kdf.engine import Engine
from twocats.kdf.fill.args import FillKey
from twocats.kdf.fill.family import FILL, reference_check, run_check
from twocats.lanes.primitives import FAMILY
from twocats.params import Params
from twocats.simd import aot, cache
from twocats.simd.family import wheel
from twocats.simd.isa import X86_64_LEVELS

KEY = FillKey(8, "simd", 0, 0)
PARAMS = Params(mem_cost=10, multiplies=2, lanes=8, hash_type="blake2s")
ROOT = Path(__file__).resolve().parents[2]

_AVX2 = "fpu sse2 avx avx2 bmi1 bmi2 f16c fma abm movbe xsave"


@pytest.mark.parametrize(
    ("vendor", "flags", "levels"),
    [
        ("GenuineIntel", _AVX2 + " avx512f avx512bw avx512cd avx512dq avx512vl", 3),
        ("AuthenticAMD", _AVX2, 2),
        ("GenuineIntel", "fpu sse2 avx avx2", 1),
        ("ARM", "fp asimd", 0),
    ],
)
def test_levels_follow_the_cpu_flags(
    vendor: str, flags: str, levels: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CPU runs the levels whose every flag it has, best first; a non-x86 CPU runs none."""
    monkeypatch.setattr(aot, "_cpuinfo", lambda: {"vendor_id": vendor, "flags": flags})
    expected = [level for level, _flags in X86_64_LEVELS][-levels:] if levels else []
    assert aot.host_levels() == expected


@pytest.fixture(scope="module")
def prebuilt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A prebuilt folder holding the wheel's kernels for the x86-64 baseline."""
    need_artefacts()
    if "x86-64" not in aot.host_levels():
        pytest.skip("prebuilt kernels are built for x86-64 CPUs")
    folder = tmp_path_factory.mktemp("prebuilt")
    assert list(wheel(wheel_jobs(), folder, ["x86-64"])) == [("x86-64", "built")]
    return folder


@pytest.fixture
def only_prebuilt(
    prebuilt: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Artefacts on, this machine's own folder empty, the package's folder the test's."""
    monkeypatch.setenv(cache.AOT_ENV, "1")
    monkeypatch.setenv(aot.AOT_DIR_ENV, str(tmp_path / "empty"))
    monkeypatch.setattr(aot, "PREBUILT_DIR", prebuilt)
    reset()
    yield prebuilt
    reset()


def test_prebuilt_lane_schedulers_are_loaded_and_exact(only_prebuilt: Path) -> None:
    """The wheel's lane schedulers load without an artefact of this machine and pass the check."""
    for key in FAMILY.keys("simd", None):
        kernel = aot.load(FAMILY, key)
        assert kernel is not None, key.name
        assert FAMILY.check(kernel, key), key.name


def test_prebuilt_baseline_kernel_is_loaded_and_exact(only_prebuilt: Path) -> None:
    """Without an artefact of this machine the baseline one is loaded and derives exactly."""
    kernel = aot.load(FILL, KEY)
    assert kernel is not None
    assert run_check(kernel, KEY) == reference_check(KEY)
    output = Engine("simd").derive(b"pw", b"saltsaltsalt", PARAMS)
    os.environ[cache.AOT_ENV] = "0"
    reset()
    try:
        assert output == Engine("simd").derive(b"pw", b"saltsaltsalt", PARAMS)
    finally:
        os.environ[cache.AOT_ENV] = "1"


def test_prebuilt_kernel_serves_when_this_machines_folder_is_refused(
    only_prebuilt: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache folder others may write to is refused with one warning, and the package's kernel
    is used instead of numba's build."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    monkeypatch.setenv(aot.AOT_DIR_ENV, str(shared))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel = aot.load(FILL, KEY)
    assert kernel is not None
    assert run_check(kernel, KEY) == reference_check(KEY)
    (warning,) = caught
    assert "writable" in str(warning.message)
    assert str(warning.message).endswith("; using the kernel the package carries")


def test_prebuilt_kernel_of_a_level_the_cpu_lacks_is_not_used(
    only_prebuilt: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index that has only a level this CPU does not run yields no artefact (no warning)."""
    index = (only_prebuilt / "index.json").read_text()
    assert '|x86-64"' in index
    monkeypatch.setattr(aot, "host_levels", lambda: ["x86-64-v4", "x86-64-v3"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert aot.load(FILL, KEY) is None
    assert not caught


def test_wheel_carries_the_kernels_and_the_sdist_does_not(prebuilt: Path, tmp_path: Path) -> None:
    """A tree with prebuilt kernels builds a py3-none-<platform> wheel holding them and no
    generator; its sdist holds no kernel."""
    tree = tmp_path / "tree"
    shutil.copytree(
        ROOT,
        tree,
        ignore=shutil.ignore_patterns(
            ".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "_prebuilt", "tests"
        ),
    )
    shutil.copytree(prebuilt, tree / "twocats" / "simd" / "_prebuilt")
    out = tmp_path / "dist"
    # The machine's setuptools builds it, whatever version the tree asks for.
    build = [sys.executable, "-m", "build", "--no-isolation", "--skip-dependency-check"]
    for kind in ("--wheel", "--sdist"):
        command = [*build, kind, "--outdir", str(out), str(tree)]
        subprocess.run(command, check=True, capture_output=True, timeout=600)
    (wheel,) = out.glob("*.whl")
    assert wheel.name.startswith("twocats-")
    assert "-py3-none-linux_" in wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    assert "twocats/simd/_prebuilt/index.json" in names
    assert any(name.endswith(".so") for name in names)
    # The generators stay in the source tree.
    assert not [name for name in names if name.startswith("codegen/")]
    (sdist,) = out.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        assert not [name for name in archive.getnames() if "_prebuilt" in name]
