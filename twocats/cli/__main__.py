"""``python -m twocats.cli``: the ``twocats`` command line."""

from twocats.cli import run

run()
