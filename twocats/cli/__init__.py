"""The twocats command-line interface."""
