"""Sphinx configuration of the twocats documentation.

Build: ``python -m sphinx -W --keep-going -b html docs docs/_build/html`` (after
``pip install -e '.[docs]'``).  Pages are MyST Markdown; the API reference comes from the
docstrings (autodoc with napoleon) and the command-line reference from the click commands
themselves (sphinx-click), so neither is copied by hand.
"""

from __future__ import annotations

import click

import twocats
from twocats.cli import main as cli_main

project = "twocats"
author = "the twocats developers"
copyright = "the twocats developers; MIT-0"
release = twocats.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx_click",
]

source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}

# The command line loads some commands only when they run; sphinx-click documents the commands a
# group holds, so the build hands it every command that ``twocats --help`` lists.
_context = click.Context(cli_main)
for _name in cli_main.list_commands(_context):
    _command = cli_main.get_command(_context, _name)
    if _command is not None:
        cli_main.commands.setdefault(_name, _command)

html_theme = "furo"
html_title = f"twocats {release}"
