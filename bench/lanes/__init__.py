"""The lane hashes: primitives and lane modes against hashlib and other peers, ``twocats sum``
against coreutils, and LSH against the published NEON ratios."""
