"""Lane hashing: many independent messages hashed at once in SIMD lanes, and ``twocats sum``."""
