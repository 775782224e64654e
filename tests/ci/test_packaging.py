"""pyproject.toml in the form the packaging tools keep accepting: an SPDX licence expression."""

from __future__ import annotations

import warnings

import pytest

from tests.support.doc_blocks import ROOT


def test_the_licence_is_an_spdx_expression_with_its_file() -> None:
    """The licence is ``MIT-0`` with license-files, read by setuptools without a deprecation."""
    tomllib = pytest.importorskip("tomllib")
    pyprojecttoml = pytest.importorskip("setuptools.config.pyprojecttoml")
    path = ROOT / "pyproject.toml"
    config = tomllib.loads(path.read_text(encoding="utf-8"))
    assert config["project"]["license"] == "MIT-0"
    assert config["project"]["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT No Attribution")
    # setuptools reads licence expressions from 77 on, which the build must therefore require.
    assert config["build-system"]["requires"] == ["setuptools>=77"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read = pyprojecttoml.read_configuration(path)
    assert read["project"]["license"] == "MIT-0"
