"""``python -m twocats``: the ``twocats`` command line."""

from twocats.cli import run

run()
