"""The public KDF API: update identity, server relief, convenience derivations, Engine, errors."""

from __future__ import annotations

import errno
import inspect
import mmap
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest

from twocats import kdf
from twocats.exceptions import BackendError, HashingError, InvalidParametersError, MemoryLimitError
from twocats.kdf import engine as engine_module
from twocats.kdf.engine import Engine
from twocats.kdf.words import address as address_of
from twocats.params import Params

PASSWORD = b"password"
SALT = b"salt"

#: Small parameter sets of each variant that still fill memory (64 KiB, 1 KiB blocks).
SMALL = {
    "2015": {"variant": "2015", "block_size": 1024, "sub_block_size": 64},
    "2014": {"variant": "2014", "block_size": 1024, "sub_block_size": 64, "time_cost": 1},
    "2014-03": {"variant": "2014-03", "block_size": 1024, "sub_block_size": 64, "hash_size": 40},
}

#: Field names of the vector files' derived_extended_parameters, as Params fields.
DERIVED_FIELDS = {
    "startMemCost": "start_mem_cost",
    "stopMemCost": "mem_cost",
    "multiplies": "multiplies",
    "lanes": "lanes",
    "parallelism": "parallelism",
    "blockSize": "block_size",
    "subBlockSize": "sub_block_size",
    "overwriteCost": "overwrite_cost",
    "sideChannelResistant": "side_channel_resistant",
}


def _small(variant: str, **changes: Any) -> Params:
    return Params(**{**SMALL[variant], "mem_cost": 6, **changes})


# -- update and server relief ----------------------------------------------------------------------


@pytest.mark.parametrize("variant", sorted(SMALL))
def test_update_equals_direct_derivation(variant: str) -> None:
    """Updating a stored output from mem_cost 6 to 8 equals deriving at 8 with the same start."""
    stored = kdf.derive(PASSWORD, SALT, _small(variant, start_mem_cost=4), backend="reference")
    target = _small(variant, start_mem_cost=4, mem_cost=8)
    updated = kdf.update(stored, target, 6, backend="reference")
    assert updated == kdf.derive(PASSWORD, SALT, target, backend="reference")


def test_update_by_one_level_with_side_channel_resistance() -> None:
    """An update by exactly one level works, also in side-channel-resistant mode."""
    old = _small("2015", side_channel_resistant=True)
    new = _small("2015", side_channel_resistant=True, mem_cost=7, start_mem_cost=6)
    stored = kdf.derive(PASSWORD, SALT, old, backend="reference")
    assert kdf.update(stored, new, 6, backend="reference") == kdf.derive(
        PASSWORD, SALT, new, backend="reference"
    )


def test_update_refuses_bad_input() -> None:
    """An update must raise mem_cost, and the stored output must have the output size."""
    params = _small("2015", mem_cost=8)
    with pytest.raises(InvalidParametersError, match=r"^old_mem_cost must be from 0 to"):
        kdf.update(bytes(32), params, 8, backend="reference")
    with pytest.raises(InvalidParametersError) as caught:
        kdf.update(bytes(31), params, 6, backend="reference")
    assert str(caught.value) == "stored must be 32 bytes long for these parameters; got 31"


@pytest.mark.parametrize("variant", sorted(SMALL))
def test_server_relief(variant: str) -> None:
    """The server half of a client output equals the full derivation."""
    params = _small(variant)
    half = kdf.client(PASSWORD, SALT, params, data=b"data", backend="reference")
    assert len(half) == params.output_size
    full = kdf.derive(PASSWORD, SALT, params, data=b"data", backend="reference")
    assert kdf.server(half, params) == full
    assert half != full


def test_server_refuses_a_wrong_length() -> None:
    """The server half checks the client output length against the parameters."""
    with pytest.raises(InvalidParametersError, match=r"^client_output must be 64 bytes long"):
        kdf.server(bytes(32), Params(hash_type="sha512"))


def test_data_is_hashed() -> None:
    """Associated data changes the output."""
    params = _small("2015")
    plain = kdf.derive(PASSWORD, SALT, params, backend="reference")
    assert kdf.derive(PASSWORD, SALT, params, data=b"x", backend="reference") != plain


# -- convenience APIs ------------------------------------------------------------------------------


def _derived(record: dict[str, Any]) -> Params:
    fields = {DERIVED_FIELDS[k]: v for k, v in record["derived_extended_parameters"].items()}
    return Params(hash_type=record["hash_type"], **fields)


def test_convenience_parameters_match_the_reference(twocats_records: list[dict[str, Any]]) -> None:
    """full_params, simple_params and phs_params derive exactly the reference's parameters."""
    checked = 0
    for record in twocats_records:
        api = record.get("api")
        if api == "full":
            params = kdf.full_params(
                record["memCost"],
                record["parallelism"],
                hash_type=record["hash_type"],
                side_channel_resistant=record["sideChannelResistant"],
            )
        elif api == "simple":
            params = kdf.simple_params(record["memCost"])
        elif api == "phs":
            params = kdf.phs_params(record["t_cost"], record["m_cost"], outlen=record["outlen"])
        else:
            continue
        assert params == _derived(record), record["id"]
        checked += 1
    assert checked == 47


def test_convenience_apis_hash_with_their_parameters() -> None:
    """full, simple and phs equal derive with their derived parameters."""
    expected = kdf.derive(PASSWORD, SALT, kdf.simple_params(5), backend="reference")
    assert kdf.simple(PASSWORD, SALT, 5, backend="reference") == expected
    assert kdf.full(PASSWORD, SALT, 5, 2, backend="reference") == expected
    assert kdf.phs(PASSWORD, SALT, 2, 5, backend="reference") == expected


def test_convenience_parameters_of_older_variants() -> None:
    """The 2014 and 2014-03 wrappers map t_cost to time_cost, and 2014-03 keeps 16 KiB blocks."""
    timecost = kdf.phs_params(3, 12, variant="2014")
    assert (timecost.time_cost, timecost.parallelism, timecost.block_size) == (3, 2, 8192)
    march = kdf.phs_params(1, 12, outlen=100, variant="2014-03")
    assert (march.time_cost, march.hash_size, march.block_size, march.multiplies) == (
        1,
        100,
        16384,
        3,
    )
    assert kdf.simple_params(12, variant="2014").time_cost == 0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: kdf.full_params(10, 0), "parallelism must be an integer from 1 to 255; got 0"),
        (lambda: kdf.phs_params(0, 10), "t_cost must be an integer from 1 to 255; got 0"),
        (lambda: kdf.phs_params(2, 10, outlen=64), "outlen must be 32 for variant '2015'; got 64"),
        (
            lambda: kdf.phs_params(2, 10, outlen=16, variant="2014"),
            "outlen must be 32 for variant '2014'; got 16",
        ),
        (lambda: kdf.full_params(31, 2), "mem_cost must be an integer from 0 to 30; got 31"),
        (
            lambda: kdf.simple_params(10, variant="2013"),
            "variant must be one of '2015', '2014', '2014-03'; got '2013'",
        ),
    ],
)
def test_convenience_parameters_refuse(call: Any, message: str) -> None:
    """The convenience derivations refuse what the reference crashes on or rejects."""
    with pytest.raises(InvalidParametersError) as caught:
        call()
    assert str(caught.value) == message


def test_full_refuses_undefined_small_64_byte_hashes() -> None:
    """full with a 64-byte hash at mem_cost 4 would pick 32-byte blocks: refused, not random."""
    with pytest.raises(InvalidParametersError, match=r"^block_size must be a power of two from 64"):
        kdf.full_params(4, 2, hash_type="blake2b")


# -- Engine ----------------------------------------------------------------------------------------


def test_engine_reuses_its_buffer() -> None:
    """An engine keeps one buffer, grows it for bigger requests and gives equal results."""
    engine = Engine("reference")
    small, large = _small("2015"), _small("2015", mem_cost=7)
    first = engine.derive(PASSWORD, SALT, small)
    assert engine.buffer_bytes == 64 << 10
    engine.derive(PASSWORD, SALT, large)
    assert engine.buffer_bytes == 128 << 10
    assert engine.derive(PASSWORD, SALT, small) == first
    assert engine.buffer_bytes == 128 << 10
    engine.release()
    assert engine.buffer_bytes == 0


def test_concurrent_calls_never_share_a_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two derivations running at once on one engine work in different buffers, correctly."""
    params = _small("2015")
    expected = {pw: kdf.derive(pw.encode(), SALT, params, backend="reference") for pw in "ab"}
    barrier = threading.Barrier(2)
    addresses: dict[str, int] = {}

    real_load = engine_module._load_fill

    def load(backend: str) -> Callable[..., None]:
        fill = real_load(backend)

        def spy(mem: memoryview, *args: Any) -> None:
            name = threading.current_thread().name
            if name not in addresses:
                addresses[name] = address_of(mem)
                barrier.wait(timeout=30)
            fill(mem, *args)

        return spy

    # The spy watches the engine's own compiled fill; it replaces nothing.
    monkeypatch.setattr(engine_module, "_load_fill", load)
    engine = Engine("scalar")
    results: dict[str, bytes] = {}

    def work(password: bytes) -> None:
        results[password.decode()] = engine.derive(password, SALT, params)

    threads = [threading.Thread(target=work, args=(pw,), name=pw.decode()) for pw in (b"a", b"b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(addresses.values())) == 2
    assert results == expected


def test_max_memory_refuses_before_allocating(monkeypatch: pytest.MonkeyPatch) -> None:
    """A request above max_memory raises MemoryLimitError naming mem_cost, size and limit."""

    def refuse(words: int, params: Params) -> None:
        pytest.fail("work memory was allocated despite the limit")

    monkeypatch.setattr(Engine, "_allocate", staticmethod(refuse))
    engine = Engine("reference", max_memory=100_000)
    with pytest.raises(MemoryLimitError) as caught:
        engine.derive(PASSWORD, SALT, _small("2015", mem_cost=7))
    assert str(caught.value) == (
        "mem_cost=7 needs 128 KiB of work memory (131072 bytes), more than max_memory "
        "(97.66 KiB, 100000 bytes)"
    )


def test_max_memory_allows_requests_within_the_limit() -> None:
    """A request within max_memory runs normally."""
    engine = Engine("reference", max_memory=64 << 10)
    params = _small("2015")
    assert engine.derive(PASSWORD, SALT, params) == kdf.derive(
        PASSWORD, SALT, params, backend="reference"
    )


@pytest.mark.parametrize("limit", [-1, True, 1.5, "1GiB"])
def test_max_memory_must_be_a_byte_count(limit: object) -> None:
    """max_memory is None or a non-negative integer."""
    with pytest.raises(InvalidParametersError, match=r"^max_memory must be None or a number"):
        Engine("reference", max_memory=limit)  # type: ignore[arg-type]


@pytest.mark.parametrize("wipe", [True, False])
def test_wipe_zeroes_the_work_memory(wipe: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """With wipe the work memory is all zero after the call; without it the blocks remain."""
    seen: list[memoryview] = []
    real_load = engine_module._load_fill

    def load(backend: str) -> Callable[..., None]:
        fill = real_load(backend)

        def spy(mem: memoryview, *args: Any) -> None:
            seen.append(mem)
            fill(mem, *args)

        return spy

    # The spy keeps a view of the memory the engine's own compiled fill writes; it replaces nothing.
    monkeypatch.setattr(engine_module, "_load_fill", load)
    params = _small("2015")
    output = Engine("scalar", wipe=wipe).derive(PASSWORD, SALT, params)
    assert output == kdf.derive(PASSWORD, SALT, params, backend="reference")
    assert seen
    assert (not any(seen[0])) is wipe


def test_allocation_failure_is_a_hashing_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the work memory cannot be had the engine raises HashingError, not MemoryError."""

    def fail(*args: Any, **kwargs: Any) -> mmap.mmap:
        raise OSError(errno.ENOMEM, os.strerror(errno.ENOMEM))

    monkeypatch.setattr(mmap, "mmap", fail)
    with pytest.raises(HashingError) as caught:
        Engine("reference").derive(PASSWORD, SALT, _small("2015"))
    assert str(caught.value) == (
        "could not allocate 64 KiB of work memory (65536 bytes) for mem_cost=6: the system is out "
        "of memory"
    )


def test_refused_huge_page_hint_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel without transparent huge pages refuses the hint (EINVAL): the hash goes on."""

    class NoHugePages(mmap.mmap):
        def madvise(self, *args: int) -> None:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))

    expected = Engine("reference").derive(PASSWORD, SALT, _small("2015"))
    monkeypatch.setattr(mmap, "mmap", NoHugePages)
    assert Engine("reference").derive(PASSWORD, SALT, _small("2015")) == expected


def test_default_engine_is_per_thread_and_backend() -> None:
    """Each thread has its own default engine per backend."""
    mine = kdf.default_engine("reference")
    assert kdf.default_engine("reference") is mine
    assert kdf.default_engine("scalar") is not mine
    other: list[Engine] = []
    thread = threading.Thread(target=lambda: other.append(kdf.default_engine("reference")))
    thread.start()
    thread.join()
    assert other[0] is not mine


def test_memory_required() -> None:
    """memory_required reports the largest level, and nothing when no level fills memory."""
    assert kdf.memory_required(Params(mem_cost=10)) == 1 << 20
    assert kdf.memory_required(Params(mem_cost=6, strict=False)) == 0
    assert kdf.memory_required(Params(mem_cost=10), old_mem_cost=8) == 1 << 20
    march = Params(variant="2014-03", mem_cost=10, parallelism=3)
    assert kdf.memory_required(march) == 3 * 256 * 1024


# -- errors ----------------------------------------------------------------------------------------


def test_inputs_must_be_bytes_and_are_never_echoed() -> None:
    """A non-bytes password is refused without its content appearing in the message."""
    with pytest.raises(InvalidParametersError) as caught:
        kdf.derive("hunter2", SALT, _small("2015"), backend="reference")  # type: ignore[arg-type]
    assert str(caught.value) == "password must be bytes; got str"
    params = _small("2015")
    expected = kdf.derive(PASSWORD, SALT, params, backend="reference")
    given = kdf.derive(bytearray(PASSWORD), memoryview(SALT), params, backend="reference")
    assert given == expected


def test_params_must_be_params() -> None:
    """Passing anything but Params is an InvalidParametersError."""
    with pytest.raises(InvalidParametersError, match=r"^params must be a twocats.Params; got dict"):
        kdf.derive(PASSWORD, SALT, {"mem_cost": 6}, backend="reference")  # type: ignore[arg-type]


def test_unknown_backend() -> None:
    """An unknown backend name raises BackendError naming the allowed ones."""
    with pytest.raises(BackendError, match="reference, scalar, simd"):
        kdf.derive(PASSWORD, SALT, _small("2015"), backend="gpu")


def test_importing_kdf_imports_neither_numpy_nor_numba() -> None:
    """``import twocats.kdf`` stays cheap: numpy and numba load only when a hash runs."""
    code = "import sys, twocats.kdf; print('numpy' in sys.modules, 'numba' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"]


def test_derive_shows_and_checks_the_parameters_of_client() -> None:
    """derive's signature is client's, and a wrong argument names derive in its TypeError."""
    assert inspect.signature(kdf.derive) == inspect.signature(kdf.client)
    assert "max_work" in inspect.signature(Engine().derive).parameters
    assert kdf.derive.__doc__ is not None
    assert kdf.derive.__doc__.startswith("Derive the TwoCats")
    with pytest.raises(TypeError, match=r"^derive\(\) got an unexpected keyword argument 'dat'"):
        kdf.derive(PASSWORD, SALT, Params(), dat=b"")
    with pytest.raises(TypeError, match=r"^derive\(\) missing a required argument: 'params'"):
        kdf.derive(PASSWORD, SALT)
