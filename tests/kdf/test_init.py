"""twocats.kdf is a face over kdf.api and kdf.compat, and params imports nothing of kdf."""

from __future__ import annotations

import subprocess
import sys

from twocats import kdf
from twocats.kdf import api, compat


def test_the_face_reexports_every_public_name() -> None:
    """Each public name of twocats.kdf is the object kdf.api, kdf.compat or the engine defines."""
    homes = {"twocats.kdf.api", "twocats.kdf.compat", "twocats.kdf.engine"}
    for name in kdf.__all__:
        value = getattr(kdf, name)
        assert value.__module__ in homes, name
    assert set(api.__all__) | set(compat.__all__) | {"Engine"} == set(kdf.__all__)


def test_params_loads_nothing_of_kdf() -> None:
    """Importing twocats.params and validating March 2014 sizes load no module of twocats.kdf."""
    code = (
        "import sys\n"
        "from twocats.params import Params\n"
        "Params(variant='2014-03', mem_cost=12, start_mem_cost=4)\n"
        "print(sorted(m for m in sys.modules if 'kdf' in m))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
