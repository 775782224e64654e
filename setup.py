"""Build hook: a wheel that carries prebuilt kernels is tagged for its platform.

``twocats warmup --wheel`` writes the ahead-of-time kernels of the built-in profiles and the
lane primitives into ``twocats/simd/_prebuilt``; a wheel built from the tree afterwards
(``python -m build --wheel``) carries them and is tagged ``py3-none-<platform>``.  The sdist never
carries them (MANIFEST.in), so a wheel built from it, like a tree without them, stays pure Python
and compiles with numba.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import Distribution, setup

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

PREBUILT_INDEX = Path(__file__).resolve().parent / "twocats" / "simd" / "_prebuilt" / "index.json"


class PlatformDistribution(Distribution):
    """A distribution that counts as platform-specific when it carries prebuilt kernels."""

    def has_ext_modules(self) -> bool:
        return PREBUILT_INDEX.exists()


class PlatformWheel(bdist_wheel):  # type: ignore[misc]
    """bdist_wheel that tags a wheel with prebuilt kernels for any Python on the platform."""

    def get_tag(self) -> tuple[str, str, str]:
        python, abi, platform = super().get_tag()
        if PREBUILT_INDEX.exists():
            # The kernels are machine code for the platform, called through ctypes by any Python.
            return "py3", "none", platform
        return python, abi, platform


setup(distclass=PlatformDistribution, cmdclass={"bdist_wheel": PlatformWheel})
