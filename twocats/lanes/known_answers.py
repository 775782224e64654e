"""The lanes' known-answer check: a compiled build answers only once it agrees with the reference.

Before a process uses an algorithm's compiled build ("simd" or "scalar") for the first time,
:func:`check_compiled` hashes :data:`SAMPLE` with it and compares the SHA-256 of the digests with
:data:`KNOWN_ANSWERS`, which the pure-Python reference gave (``tests/lanes/test_known_answers.py``
recomputes the table from the reference).  A build that differs, for example one loaded from a
damaged cache, is compiled afresh with one warning; one that still differs raises
:class:`~twocats.exceptions.BackendError`, so a wrong digest is never returned.  The check hashes
about 18 KB once per algorithm and backend in a process.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Final

from twocats.exceptions import BackendError

__all__ = ["KNOWN_ANSWERS", "SAMPLE", "check_compiled"]

#: Messages of every padding case and of more than two 8 KiB chunks, painted ``i % 251``.
SAMPLE: Final = tuple(bytes(i % 251 for i in range(n)) for n in (0, 1, 64, 65, 200, 1000, 16391))

#: The SHA-256 of the reference's digests of :data:`SAMPLE`, joined, per algorithm.
KNOWN_ANSWERS: Final = {
    "blake2s": "30098671a8501144f69ef8d473134519ee10c7400cb9797a5604b0d65650a899",
    "blake2b": "97ca7c9634ee3dce1e6ccc9c4b01a71975ea18588e779adb1e9a26cf85c7683c",
    "sha256": "abf1b7af47b8055ab2310135be505fa85fe6b5edc8a5568ff3da05150e48f314",
    "sha512": "1771a739604008436d5d10d75029f637227c908d9dc1e89c65cfb98802261fea",
    "sha1": "78695d520a0bc11e42860bb32ded5f72bcbee13e4aa18b7228743cbd768eda8b",
    "sha3-224": "75a4ec241b766d7c135ceb43513cecd6e851234b32c67f45aac4b76dc9a552b8",
    "sha3-256": "f448e539005e6bb6973e84bd55078feaed0d921f7e5bfc0ec874ba8ce9b1b649",
    "sha3-384": "81baed8a6605dbc0be7ceae73db07bf51d594e3d0c8da0856c9a5f00dba6590d",
    "sha3-512": "7fcd22458e08a17299c4e73dc13309c629a3e9e753b8e7d7294476260b29b870",
    "shake128": "3625e95acab1fc7cd84feeda0c71578cf1e9a7aa7c345e368393563a62730031",
    "shake256": "488050b818a55626270c5825d3dda8eda70b18b0c8f1115ba9b67091673896f0",
    "turboshake128": "3896364ec13a25ea3c79409f55514ba615c0088ada2ed97679cfdf06b02c3485",
    "turboshake256": "0a904f4fc50a2c9d29bb4699d6ae3ca0db4bbc56f09e276c6bb3e1a8a2c87caf",
    "kt128": "a71cb655c09a8896a4ba76e1e1a457719f2c71cf8361f714c6815f0f185875e9",
    "kt256": "bc41f396f7932f145675b32baa14e38e6b55b14e0dd3bed661a50ed8064b1473",
    "parallelhash128": "577497c95ee8a9892d9908e5d32743bf0722d5cd43278c9a9f4e77ae877a5258",
    "parallelhash256": "4fb7bec796d066fc67130c2beb445a8716baeeba7e94257006ca576eb95d0948",
    "blake2sp": "9eb17f0720918cff34177e8076641227c8275505d53ba778c9c12959fc9e34ff",
    "blake2bp": "9ec926ea182453ded1dc7de4f4ec9105bca2588f56673b09cd02ab075dbb9987",
    "mh-sha256": "44e4151f78b23fa9b8777873816dd75572ec03201f8e16593419d55caf232997",
    "jlanes-sha256-4": "9f2f5e741a838d1bb7c724b054703ad53ae22207f5b2c237ca0cb0b7114ef5ff",
    "jlanes-sha256-8": "a34dcf35ee1ae8f96185dd7703fbfdd096168b8e2b2876647d25b02a3adba581",
    "jlanes-sha256-16": "2ae213c93f171daa0e4048d754b7be90ff2aa20631d0732c248923d67fedb58f",
    "lsh-256-224": "7454ab8143be6a749f101a9d6e887270e2e69cb05fac5828c9fec9020ea9c1be",
    "lsh-256-256": "ea8f224b38c436779f802d87bf50eb8cbb996d6f55419306c7fd6d4a1cbb6368",
    "lsh-512-224": "7af0354a94b0db8b6f05b9b1cf749fc2e350a1fad58519b73a289735cb743992",
    "lsh-512-256": "03701d39614cd898528c282327bd53b2c1ac9e9fd54fc100e567904b7623c639",
    "lsh-512-384": "a5e5e37ca202b8ecbcbe79ea29776b53b9e0d9b38bafe921745dc23928148a5e",
    "lsh-512-512": "a32bfa1b011289ce8085be14a88ffd759e550c415c2bbb4830a5a5d2ec26557c",
}

_checked: set[tuple[str, str]] = set()
_lock = threading.Lock()


def _answer(many: Callable[..., list[bytes]], backend: str) -> str:
    return hashlib.sha256(b"".join(many(list(SAMPLE), backend=backend))).hexdigest()


def check_compiled(name: str, many: Callable[..., list[bytes]], backend: str) -> None:
    """Make sure ``many``, algorithm ``name``'s function, agrees with the reference on ``backend``.

    The reference backend and a process without compiled kernels (``NUMBA_DISABLE_JIT``) are not
    checked: they run the source itself.
    """
    if backend == "reference" or (name, backend) in _checked:
        return
    with _lock:
        if (name, backend) in _checked:
            return
        from twocats.simd import _jit, cache

        if not _jit.config.DISABLE_JIT and _answer(many, backend) != KNOWN_ANSWERS[name]:
            cache.warn_once(
                f"twocats: the {backend} build of {name} fails its known-answer check; "
                "its kernels compile afresh"
            )
            _jit.recompile_package("twocats.lanes")
            if _answer(many, backend) != KNOWN_ANSWERS[name]:
                raise BackendError(
                    f"the compiled {name} kernels ({backend}) fail their known-answer check"
                )
        _checked.add((name, backend))
