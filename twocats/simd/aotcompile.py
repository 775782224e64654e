"""Build the ahead-of-time artefact of a registered kernel (imports numba; only builds use it).

Usage::

    from twocats.simd.aotcompile import build

    path = build(KERNELS, key)   # the stored shared object, or None if none can be built

numba compiles the kernel (or loads it from its cache) behind the C entry point of its
:class:`~twocats.simd.aot.KernelSet` (:func:`cfunc_ir`), under the kernel's own vectorizer mode. The
linked LLVM module of that entry is reduced to the entry and what it calls, emitted as
position-independent code for numba's target CPU and features, linked by the C compiler into a
shared object (or, without a C compiler, kept as the object for llvmlite's MCJIT), checked against
the numba build, and stored by :func:`twocats.simd.aot.store`.  The scratch arrays are arguments, so
the code calls nothing of numba's runtime; a module that would still need any symbol but a few of
the C library's is refused.

The build reads private attributes of numba (a compiled C function's code library), so it runs only
on the numba releases in :data:`BUILD_NUMBA`; elsewhere kernels stay with numba's JIT.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import llvmlite.binding as llvm
import numba
from numba import cfunc
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import cpu_target

from twocats.exceptions import BackendError
from twocats.simd import _jit, aot

__all__ = ["BUILD_NUMBA", "build", "cfunc_ir", "compiler", "kernel_files", "try_build"]

#: numba releases whose private code-library attributes the build is tested with.
BUILD_NUMBA = frozenset({"0.68.1"})

# The longest a link may take: a compiler that hangs must not hang the hash that started it.
_LINK_SECONDS = 120

# The prefix numba gives the C wrapper of a compiled function.
_WRAPPER_PREFIX = "cfunc."


def compiler() -> str | None:
    """Return the C compiler that links artefacts (``$CC``, else ``cc``), or None if absent."""
    return shutil.which(os.environ.get("CC") or "cc")


def cfunc_ir(entry: Callable[..., Any], signature: Any, mode: Any) -> tuple[str, str]:
    """Compile ``entry`` as a C function of ``signature`` under the vectorizer ``mode``.

    Returns the linked LLVM IR and the symbol of the function inside numba's C wrapper.
    """
    with global_compiler_lock, _jit._vectorizers(mode):
        compiled = cfunc(signature, error_model="numpy")(entry)
    # The C wrapper numba puts around the entry turns a failure into a Python exception through
    # numba's helpers; the artefact exports the function inside it, which only returns a status.
    wrapper = compiled.native_name
    if not wrapper.startswith(_WRAPPER_PREFIX):
        raise BackendError(f"unexpected name of numba's C wrapper: {wrapper!r}")
    library: Any = compiled._library  # type: ignore[attr-defined]
    return library.get_llvm_str(), wrapper.removeprefix(_WRAPPER_PREFIX)


def kernel_files(function: Any, *extra: str) -> list[str]:
    """Return the project files the machine code of the numba kernel ``function`` depends on.

    Those numba's cache is keyed on (the kernel's and its callees' files and the JIT settings),
    the modules of the kernel's globals (numba's key misses intrinsics such as prefetches), this
    builder and ``extra``.
    """
    files = _jit._source_files(function.py_func) | {_jit.__file__, __file__, *extra}
    for value in function.py_func.__globals__.values():
        module = sys.modules.get(getattr(value, "__module__", None) or "")
        if module is not None and module.__name__.startswith("twocats.") and module.__file__:
            files.add(module.__file__)
    return sorted(str(Path(path).resolve()) for path in files)


def _target_machine() -> Any:
    triple, cpu_name, features = cpu_target.target_context.codegen().magic_tuple()
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(
        cpu=cpu_name, features=features, opt=3, reloc="pic", codemodel="default"
    )


def _reduce(ir: str, entry: str, symbol: str, machine: Any) -> Any:
    """Parse ``ir``, keep only ``entry`` (renamed ``symbol``) and what it reaches, check imports.

    Every other definition becomes internal and is named by its place in the module, so that the
    same source gives the same bytes: numba's names count the functions the process compiled
    before (``B2v1`` in one process is ``B3v13`` in another).
    """
    module = llvm.parse_assembly(ir)
    module.name = symbol
    internal = 0
    for function in module.functions:
        if function.name == entry:
            function.name = symbol
        elif not function.is_declaration:
            function.linkage = "internal"
            function.name = f"{symbol}.f{internal}"
            internal += 1
    for variable in module.global_variables:
        if not variable.is_declaration:
            variable.linkage = "internal"
            variable.name = f"{symbol}.v{internal}"
            internal += 1
    # With everything internal, interprocedural constant propagation sees that the arrays carry
    # no runtime object and that the kernel never fails, so numba's reference counting and error
    # paths are dead code; the vectorizers stay off, so the kernel's vectorizer mode is kept.
    passes = llvm.create_new_module_pass_manager()
    passes.add_ipsccp_pass()
    passes.add_global_opt_pass()
    passes.add_dead_arg_elimination_pass()
    passes.add_instruction_combine_pass()
    passes.add_simplify_cfg_pass()
    passes.add_aggressive_dce_pass()
    passes.add_global_dead_code_eliminate_pass()
    passes.add_strip_dead_prototype_pass()
    passes.run(module, llvm.create_pass_builder(machine, llvm.PipelineTuningOptions()))
    module.verify()
    imports = {
        f.name for f in module.functions if f.is_declaration and not f.name.startswith("llvm.")
    }
    imports |= {v.name for v in module.global_variables if v.is_declaration}
    if imports - aot.LIBC_SYMBOLS:
        raise BackendError(f"the kernel's code still needs {sorted(imports - aot.LIBC_SYMBOLS)}")
    return module


def build(
    kernels: aot.KernelSet[aot.Key],
    key: aot.Key,
    level: str | None = None,
    prebuilt: Path = aot.PREBUILT_DIR,
) -> Path | None:
    """Build and store the artefact of one kernel of ``kernels``; return its path.

    Returns None, building nothing, where no artefact can be used or built: an untested numba
    release or a machine whose CPU cannot be named without numba.  Without a C compiler the
    artefact is the object itself, for llvmlite's MCJIT.  The set's reference decides between the
    builds: numba's build passes its known-answer check first (``kernels.prepare``), and
    :class:`~twocats.exceptions.BackendError` is raised, storing nothing, if the built code fails
    the set's check.  With ``level`` (a process whose numba targets that x86-64 level, see
    :func:`twocats.simd.aotbuild.build_levels`) the artefact is stored in ``prebuilt`` for a
    platform wheel instead of this machine's cache.
    """
    cc = compiler()
    cpu = aot.cpu_key()
    if numba.__version__ not in BUILD_NUMBA or cpu is None:
        return None
    kernels.prepare(key)
    ir, entry = kernels.entry_ir(key)
    machine = _target_machine()
    module = _reduce(ir, entry, kernels.entry, machine)
    obj = machine.emit_object(module)
    data, suffix = (obj, aot.OBJECT) if cc is None else (_link(cc, obj), aot.SHARED)
    sources = aot.kernel_sources(kernels.sources(key))
    _check_built(kernels, key, data, suffix)
    return aot.store(key, data, sources, level, prebuilt, suffix)


def _link(cc: str, obj: bytes) -> bytes:
    """Link the object code ``obj`` into a shared object with the C compiler ``cc``."""
    with tempfile.TemporaryDirectory(prefix="twocats-aot-") as work:
        source, shared = Path(work) / "kernel.o", Path(work) / "kernel.so"
        source.write_bytes(obj)
        subprocess.run(
            [cc, "-shared", "-Wl,-z,now", "-Wl,-z,noexecstack", "-o", str(shared), str(source)],
            check=True,
            capture_output=True,
            timeout=_LINK_SECONDS,
        )
        return shared.read_bytes()


def try_build(kernels: aot.KernelSet[aot.Key], key: aot.Key) -> Path | None:
    """Build the artefact of ``key`` like :func:`build`, but warn once instead of raising.

    A kernel without an artefact keeps running on numba's build, so a failed build costs speed,
    never a result.
    """
    try:
        return build(kernels, key)
    except (BackendError, aot.RefusedError, OSError, subprocess.SubprocessError) as error:
        stderr = getattr(error, "stderr", None)
        detail = stderr.decode(errors="replace").strip() if isinstance(stderr, bytes) else ""
        detail = detail or str(error)
        aot.warn_once(f"could not build the compiled kernel {key.name} ({detail!s:.300})")
        return None


def _check_built(kernels: aot.KernelSet[aot.Key], key: aot.Key, data: bytes, suffix: str) -> None:
    """Run the built code's known-answer check; refuse it if it fails."""
    with tempfile.TemporaryDirectory(prefix="twocats-aot-") as work:
        path = Path(work) / f"check{suffix}"
        path.write_bytes(data)
        built = aot.open_kernel(kernels, path, key)
        if not kernels.check(built, key):
            message = f"the ahead-of-time build of {key.name} fails its known-answer check"
            raise BackendError(message)
