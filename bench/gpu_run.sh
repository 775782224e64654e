#!/bin/sh
# The GPU measurement in one short run, from the repository root of a machine with a CUDA GPU:
# the kernels' tests on the real GPU, then python -m bench gpu at the built-in profiles, which
# writes bench/results/gpu.json and gpu.md.  It needs an environment with the test and gpu
# extras (pip install -e '.[test,gpu]'; where the machine has no CUDA toolkit, numba-cuda's cu12
# or cu13 extra, matching the driver).  Extra arguments go to python -m bench gpu.  About five
# minutes on one GPU; each step has a time limit so that the whole stays under eight.
set -eu
cd "$(dirname "$0")/.."
export TWOCATS_CACHE_DIR="${TWOCATS_CACHE_DIR:-$(mktemp -d)}"
python -c "from numba import cuda; cuda.detect()" || true
timeout 150 python -m pytest -q -x -p no:cacheprovider tests/gpu/test_device.py
timeout 300 python -m bench gpu "$@"
