"""The package's version, read from one source: ``version`` in ``pyproject.toml``.

An installed dmljax (a wheel, or ``pip install -e .``) reads it from its distribution's
metadata, which the build copied from ``pyproject.toml``; a checkout imported without
installing (``PYTHONPATH=.``) reads ``pyproject.toml`` beside the package.
"""

import importlib.metadata
import pathlib
import tomllib


def package_version() -> str:
    """The installed distribution's version, else the checkout's ``pyproject.toml`` one.

    Returns ``"0+unknown"`` when neither is found (a copy of the package on its own).
    """
    try:
        return importlib.metadata.version("dmljax")
    except importlib.metadata.PackageNotFoundError:
        pyproject = pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml"
        try:
            return str(tomllib.loads(pyproject.read_text())["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "0+unknown"


__version__ = package_version()
