"""The GPU kernels on a real GPU, where there is one, and the gpu package's import boundary."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.gpu_support import (
    Case,
    argon2id_cases,
    gpu_available,
    need_numba_cuda,
    run_cases,
    twocats_cases,
)

#: On a real GPU the cases are cheap: the simulator's, and Argon2id where a segment needs several
#: address blocks (more than 128 blocks per segment) with t = 3 and p = 4.
DEVICE_CASES = [*twocats_cases(), *argon2id_cases(), *argon2id_cases(((3, 4096, 4), (2, 1024, 1)))]


@pytest.fixture(scope="module")
def device_outputs() -> dict[str, tuple[bytes, ...]]:
    """Every case's outputs from one process on the real GPU (skips where there is none)."""
    need_numba_cuda()
    if not gpu_available():
        pytest.skip("no CUDA GPU on this machine; the simulator tests cover the kernels")
    outputs = run_cases(DEVICE_CASES, simulator=False)
    return {case.name: got for case, got in zip(DEVICE_CASES, outputs, strict=True)}


@pytest.mark.parametrize("case", DEVICE_CASES, ids=[case.name for case in DEVICE_CASES])
def test_device_kernel_matches(case: Case, device_outputs: dict[str, tuple[bytes, ...]]) -> None:
    """The kernel on the real GPU gives the expected output of every guess of the batch."""
    assert device_outputs[case.name] == case.expected


def test_the_password_path_never_imports_the_gpu_package() -> None:
    """import twocats, its command line and a hash leave twocats.gpu and numba_cuda unimported."""
    code = (
        "import sys, twocats, twocats.cli\n"
        "from twocats.profiles import CHEAPEST\n"
        "twocats.PasswordHasher.from_params(CHEAPEST).hash(b'pw')\n"
        "print(sorted(name for name in ('twocats.gpu', 'numba_cuda') if name in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_without_numba_cuda_the_import_names_the_extra() -> None:
    """Importing a kernel module without numba-cuda raises an ImportError naming the gpu extra."""
    code = (
        "import sys\n"
        "sys.modules['numba_cuda'] = None\n"
        "try:\n"
        "    import twocats.gpu.twocats_fill\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "numba-cuda" in done.stdout
    assert "the gpu extra" in done.stdout


def test_refuses_parameters_it_cannot_run() -> None:
    """The host side refuses another variant and too many threads, naming the parameter."""
    need_numba_cuda()
    code = (
        "from twocats import Params\n"
        "from twocats.exceptions import InvalidParametersError\n"
        "from twocats.gpu.twocats_fill import Batch\n"
        "from twocats.gpu.argon2 import Argon2Params\n"
        "for make in (lambda: Batch(Params(variant='2014', mem_cost=10, time_cost=0), 1),\n"
        "             lambda: Batch(Params(mem_cost=20, parallelism=255, lanes=8), 1),\n"
        "             lambda: Argon2Params(1, 8, 17)):\n"
        "    try:\n"
        "        make()\n"
        "    except InvalidParametersError as error:\n"
        "        print(str(error).split()[0])\n"
    )
    env_code = "import os; os.environ['NUMBA_ENABLE_CUDASIM'] = '1'\n" + code
    done = subprocess.run(
        [sys.executable, "-c", env_code], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["variant", "parallelism", "parallelism"]
