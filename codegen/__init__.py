"""The project's generators, kept outside the installed package: ``python -m codegen [--check]``.

They write every generated file of ``twocats``: the unrolled lane kernels of the hash primitives
(:mod:`codegen.lanes`), the fill kernels (:mod:`codegen.fill`) and the lane modes' rounds
(:mod:`codegen.modes`), all through :mod:`codegen.entry`; with ``--check`` they only report the
files that differ, and CI and a test run that check.  Run them from the repository root.
The run-time modules import nothing from here: the facts a generator shares with the code it
writes for are defined by the run-time module that owns them (:mod:`twocats.kdf.fill.args`,
:mod:`twocats.lanes.modes.widths`, :mod:`twocats.hashes`), and the generators read them there.
"""
