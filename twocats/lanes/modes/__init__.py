"""The lane modes from the literature, one module per family, each with scalar and simd kernels."""
