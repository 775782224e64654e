"""Entry point: ``python -m fuzz [--count N] [--seed S] [--targets a,b] [--out DIR]``."""

from fuzz import main

if __name__ == "__main__":
    raise SystemExit(main())
