"""``python -m codegen [--check]``: write or check every generated file of the project."""

from __future__ import annotations

from codegen.entry import main

raise SystemExit(main())
