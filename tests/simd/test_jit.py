"""Kernel machinery: lazy imports, the backend registry, the disk cache and the two builds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.environment import need
from twocats.exceptions import BackendError
from twocats.simd import registry

# A tiny kernel module compiled in child processes; it reports its builds' cache statistics.
KERNEL_MODULE = textwrap.dedent(
    """
    import numpy as np
    from twocats.simd._jit import jit, variants

    @jit
    def bump(x):
        return np.uint32(x + np.uint32(1))

    @variants
    def add(a, b):
        for i in range(a.shape[0]):
            a[i] = bump(np.uint32(a[i] + b[i]))
    """
)

RUNNER = textwrap.dedent(
    """
    import json, numpy as np, probe_kernels as k
    a = np.arange(64, dtype=np.uint32); b = np.ones(64, dtype=np.uint32)
    k.add.simd(a, b); k.add.scalar(a, b)
    stats = {m: k.add.get(m).stats for m in ("simd", "scalar")}
    print(json.dumps({
        "values": a[:3].tolist(),
        "hits": {m: sum(s.cache_hits.values()) for m, s in stats.items()},
        "paths": {m: s.cache_path for m, s in stats.items()},
        "names": {m: k.add.get(m).py_func.__name__ for m in stats},
    }))
    """
)


def run_probe(folder: Path, cache: Path) -> dict[str, object]:
    """Run the probe kernels from ``folder`` in a fresh process with the given cache root."""
    env = {**os.environ, "TWOCATS_CACHE_DIR": str(cache), "PYTHONPATH": str(folder)}
    done = subprocess.run(
        [sys.executable, "-c", RUNNER], cwd=folder, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_import_twocats_imports_neither_numba_nor_numpy() -> None:
    """Importing twocats and twocats.simd (and touching cheap names) loads no numba or numpy."""
    code = (
        "import sys, twocats, twocats.simd as s;"
        "s.resolve_backend(None);"
        "print(sorted(m for m in ('numba', 'numpy', 'llvmlite') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_cache_survives_a_new_checkout_and_separates_builds(tmp_path: Path) -> None:
    """A second checkout of the same source hits the cache; simd and scalar are cached apart."""
    cache = tmp_path / "cache"
    first, second = tmp_path / "checkout1", tmp_path / "checkout2"
    for folder in (first, second):
        folder.mkdir()
        (folder / "probe_kernels.py").write_text(KERNEL_MODULE)
    cold = run_probe(first, cache)
    # Each build adds b + 1 = 2 to every element.
    assert cold["values"] == [4, 5, 6]
    assert cold["hits"] == {"simd": 0, "scalar": 0}
    paths = cold["paths"]
    assert isinstance(paths, dict)
    assert paths["simd"] != paths["scalar"]
    assert "checkout1" not in paths["simd"]
    assert cold["names"] == {"simd": "add__simd", "scalar": "add__scalar"}
    warm = run_probe(second, cache)
    assert warm["hits"] == {"simd": 1, "scalar": 1}
    # Editing the source (here: the callee's constant) invalidates the cached builds.
    edited = KERNEL_MODULE.replace("np.uint32(1)", "np.uint32(2)")
    (second / "probe_kernels.py").write_text(edited)
    changed = run_probe(second, cache)
    assert changed["hits"] == {"simd": 0, "scalar": 0}
    assert changed["values"] == [6, 7, 8]


# A kernel that allocates through numba's runtime, loaded in a child with the cache load either
# on the release's light path or on numba's own path ("plain"); it reports whether numba's
# implementation registries were imported.
SCRATCH_MODULE = textwrap.dedent(
    """
    import numpy as np
    from twocats.simd._jit import jit

    @jit
    def reverse_triples(out):
        scratch = np.empty(out.shape[0], np.uint32)
        for i in range(out.shape[0]):
            scratch[i] = np.uint32(3 * i)
        for i in range(out.shape[0]):
            out[i] = scratch[out.shape[0] - 1 - i]
    """
)

SCRATCH_RUNNER = textwrap.dedent(
    """
    import json, sys, numpy as np
    from twocats.simd import _jit
    if sys.argv[1] == "plain":
        _jit.LIGHT_LOAD_NUMBA = frozenset()
    import probe_scratch as k
    out = np.zeros(5, dtype=np.uint32)
    k.reverse_triples(out)
    print(json.dumps({
        "values": out.tolist(),
        "hits": sum(k.reverse_triples.stats.cache_hits.values()),
        "registries": "numba.np.arraymath" in sys.modules,
    }))
    """
)


def test_cached_kernel_loads_without_the_registries_on_tested_numba(tmp_path: Path) -> None:
    """On a tested numba a cached kernel loads without numba's registries, else on numba's path."""
    import numba

    from twocats.simd._jit import LIGHT_LOAD_NUMBA

    (tmp_path / "probe_scratch.py").write_text(SCRATCH_MODULE)
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "TWOCATS_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": path}

    def load(path: str) -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-c", SCRATCH_RUNNER, path],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
        return result

    expected = [12, 9, 6, 3, 0]
    cold = load("light")
    assert (cold["values"], cold["hits"], cold["registries"]) == (expected, 0, True)
    light = load("light")
    light_release = numba.__version__ in LIGHT_LOAD_NUMBA
    assert (light["values"], light["hits"]) == (expected, 1)
    assert light["registries"] is not light_release
    plain = load("plain")
    assert (plain["values"], plain["hits"], plain["registries"]) == (expected, 1, True)


def test_variants_resolve_callees_per_build() -> None:
    """Inside each build, a callee that is itself a variants kernel is that callee's same build."""
    from twocats.lanes._generated import blake2s
    from twocats.lanes.scheduler import SCHEDULERS

    # The scheduler's callee ``lanes`` is bound per hash type (Variants.specialise).
    scheduler = SCHEDULERS["blake2s"]
    build = scheduler.get("scalar")
    assert build.py_func.__globals__["lanes"] is blake2s.blake2s_lanes.get("scalar")
    assert build.py_func.__name__ == "lanes_many_blake2s__scalar"
    with pytest.raises(ValueError, match="backend must be 'simd' or 'scalar'"):
        scheduler.get("reference")
    with pytest.raises(TypeError, match=r"call \.simd, \.scalar or \.get\(backend\)"):
        scheduler()


def test_per_backend_globals_take_each_build_its_value() -> None:
    """A PerBackend global is its simd value in the simd build and its scalar one in the other."""
    from twocats.lanes import _blocks
    from twocats.lanes.scheduler import SCHEDULERS
    from twocats.simd._jit import PerBackend

    scheduler = SCHEDULERS["sha512"]
    simd = scheduler.get("simd").py_func.__globals__
    scalar = scheduler.get("scalar").py_func.__globals__
    assert (simd["STEP"], scalar["STEP"]) == (8, 1)
    assert simd["decode_groups"] is _blocks.transposed_groups
    assert scalar["decode_groups"] is _blocks.no_groups
    with pytest.raises(ValueError, match="backend must be 'simd' or 'scalar'"):
        PerBackend(simd=1, scalar=0).get("reference")


def test_interleaved_builds_have_their_own_cache_folder_and_options() -> None:
    """Vectors in flight are part of a build's cache folder and of the options it compiles
    under (a vector epilogue of the forced width); scalar builds ignore them."""
    from twocats.simd._jit import BUILDS, _forced_by

    simd = BUILDS["simd"].with_width(16)
    both = simd.with_interleave(2)
    assert (simd.tag, both.tag) == ("simd-w16", "simd-w16-i2")
    assert BUILDS["scalar"].with_interleave(2) == BUILDS["scalar"]
    assert _forced_by(both) == {
        "-force-vector-width": 16,
        "-force-vector-interleave": 2,
        "-epilogue-vectorization-force-VF": 16,
    }
    assert _forced_by(simd)["-epilogue-vectorization-force-VF"] == 1
    with pytest.raises(ValueError, match="interleave must be 0 or positive"):
        simd.with_interleave(-1)


def test_resolve_backend_order_and_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    """An explicit name wins, then TWOCATS_BACKEND, then simd; unknown names are refused."""
    monkeypatch.delenv("TWOCATS_BACKEND", raising=False)
    assert registry.resolve_backend(None) == "simd"
    monkeypatch.setenv("TWOCATS_BACKEND", "scalar")
    assert registry.resolve_backend(None) == "scalar"
    assert registry.resolve_backend("reference") == "reference"
    with pytest.raises(BackendError, match="backend must be one of reference, scalar, simd"):
        registry.resolve_backend("avx")
    monkeypatch.setenv("TWOCATS_BACKEND", "avx")
    with pytest.raises(BackendError, match="TWOCATS_BACKEND"):
        registry.resolve_backend(None)


def test_backend_description(monkeypatch: pytest.MonkeyPatch) -> None:
    """The description lists the backends and names the instruction set the CPU reports."""
    monkeypatch.delenv("TWOCATS_BACKEND", raising=False)
    monkeypatch.delenv("NUMBA_CPU_NAME", raising=False)
    monkeypatch.delenv("NUMBA_CPU_FEATURES", raising=False)
    info = registry.describe_backends()
    assert info["backends"] == registry.available_backends() == ("reference", "scalar", "simd")
    assert info["default"] == "simd"
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.is_file():
        need("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines()
    flags = set(next(line for line in lines if line.startswith("flags")).split(":", 1)[1].split())
    tiers = [
        ("AVX-512", {"avx512f", "avx512vl", "avx512bw"}),
        ("AVX2", {"avx2"}),
        ("AVX", {"avx"}),
        ("SSE4.2", {"sse4_2"}),
    ]
    tier = next(name for name, needed in tiers if needed <= flags)
    assert str(info["simd_isa"]).startswith(f"{tier} (")


def test_simd_isa_follows_numba_cpu_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    """NUMBA_CPU_NAME/NUMBA_CPU_FEATURES change the reported ISA as they change numba's target."""
    monkeypatch.setenv("NUMBA_CPU_NAME", "x86-64-v3")
    monkeypatch.setenv("NUMBA_CPU_FEATURES", "+avx,+avx2,+sse2,+sse4.2,-avx512f")
    assert registry.simd_isa() == "AVX2 (x86-64-v3)"
    monkeypatch.setenv("NUMBA_CPU_NAME", "generic")
    monkeypatch.delenv("NUMBA_CPU_FEATURES")
    assert registry.simd_isa() == "baseline of generic"


def test_a_kernel_compiles_in_a_new_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel that no cache holds compiles in a thread that did not import the machinery (and
    cannot see another thread's ``cached_only``)."""
    import threading

    from twocats.simd import _jit, cache

    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))

    @_jit.jit
    def triple(x: int) -> int:
        return 3 * x

    found: list[object] = []
    thread = threading.Thread(target=lambda: found.append(triple(5)))
    with _jit.cached_only():
        thread.start()
        thread.join()
    assert found == [15]
