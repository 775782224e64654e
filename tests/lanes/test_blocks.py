"""The simd build's transposing block decode against numpy's transpose, and its scalar stand-in."""

from __future__ import annotations

import numpy as np
import pytest

from twocats.lanes._blocks import no_groups, transposed_groups
from twocats.simd.isa import host_arch


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("width", [0, 1, 7, 8, 16, 17, 33])
def test_whole_groups_are_the_blocks_transposed(dtype: type, swap: bool, width: int) -> None:
    """Each whole group of lanes gets its next whole blocks' words (byte-swapped if asked) in
    its columns (a lane whose block is not whole gets M's own words, which do not matter); lanes
    past the last whole group within ``width`` are left alone."""
    nlanes = 40
    word = np.dtype(dtype).itemsize
    size = 512 // (8 * word)
    block = 16 * word
    rng = np.random.default_rng(width)
    # Messages at odd offsets of one buffer (the decode loads them unaligned), each lane's next
    # block at a different offset; every fifth block runs past its message's end.
    buffer = rng.integers(0, 256, nlanes * 4 * block + 3, dtype=np.uint8)
    bases = [3 + lane * 4 * block for lane in range(nlanes)]
    starts = [(lane % 3) * block + lane % 2 for lane in range(nlanes)]
    lengths = [start + block - (lane % 5 == 4) for lane, start in enumerate(starts)]
    meta = np.zeros((5, nlanes), dtype=np.uint64)
    meta[0] = [buffer.ctypes.data + base for base in bases]
    meta[1] = lengths
    T = np.array(starts, dtype=np.uint64)
    M = np.full((16, nlanes), 7, dtype=dtype)
    done = transposed_groups(M, meta, T, width, swap)
    assert done == width // size * size
    for lane in range(done):
        if lane % 5 != 4:
            at = bases[lane] + starts[lane]
            words = buffer[at : at + block].view(dtype)
            assert (M[:, lane] == (words.byteswap() if swap else words)).all(), lane
    assert (M[:, done:] == 7).all()


def test_scalar_stand_in_decodes_nothing() -> None:
    """The scalar build's stand-in leaves every lane to the plain decode."""
    M = np.zeros((16, 16), dtype=np.uint32)
    meta = np.zeros((5, 16), dtype=np.uint64)
    assert no_groups(M, meta, np.zeros(16, dtype=np.uint64), 16, True) == 0
    assert not M.any()


@pytest.mark.skipif(host_arch() != "x86_64", reason="x86 assembly")
def test_decode_runs_on_vector_shuffles() -> None:
    """The decode loads whole vectors and transposes them with vector permutes."""
    from twocats.simd._jit import kernel_asm
    from twocats.simd.asm import profile_asm

    M = np.zeros((16, 16), dtype=np.uint32)
    meta = np.zeros((5, 16), dtype=np.uint64)
    asm = kernel_asm(transposed_groups, M, meta, np.zeros(16, dtype=np.uint64), 16, True)
    wide = profile_asm(asm).wide_mnemonics()
    assert any(name.startswith(("vperm", "vpunpck", "vshuf")) for name in wide), wide
