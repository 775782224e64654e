"""twocats.perf and the machine probe: light imports."""

from __future__ import annotations

import subprocess
import sys


def test_the_probe_and_the_perf_modules_import_nothing_heavy() -> None:
    """twocats._machine (on the start-up path) and twocats.perf import no numpy, numba or peer."""
    code = (
        "import sys, twocats._machine, twocats.perf.levels, twocats.perf.compare\n"
        "heavy = ('numpy', 'numba', 'argon2', 'matplotlib')\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
