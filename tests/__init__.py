"""The tests: one folder per package of twocats, and for bench, fuzz, the docs and CI."""
