"""One version source: ``pyproject.toml``, read through the distribution's metadata or beside the package."""

import importlib.metadata
import pathlib
import tomllib

import pytest

import dmljax
from dmljax._core import version

PYPROJECT = pathlib.Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_the_version_is_pyprojects():
    assert dmljax.__version__ == tomllib.loads(PYPROJECT.read_text())["project"]["version"]


@pytest.mark.parametrize("pyproject", ['[project]\nversion = "9.8.7"\n', None])
def test_an_uninstalled_checkout_reads_the_pyproject_beside_the_package(pyproject, tmp_path, monkeypatch):
    """No distribution metadata: ``pyproject.toml`` two levels above ``dmljax/_core``, else ``0+unknown``."""

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    monkeypatch.setattr(version, "__file__", str(tmp_path / "dmljax" / "_core" / "version.py"))
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject)
    assert version.package_version() == ("9.8.7" if pyproject else "0+unknown")
