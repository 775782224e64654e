"""Lane hash primitives and compiled kernels (numba is imported lazily, on first use)."""
