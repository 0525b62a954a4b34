"""Test tiers and the doctest namespace (``np`` and ``jnp`` in every docstring example).

Tiers: ``python -m pytest`` runs the fast tier, everything but the tests marked ``slow``
or ``system`` (markers registered in ``pyproject.toml``); ``python -m pytest --full``
runs the whole suite, as CI does, spread over the machine's cores (at most 8) with
pytest-xdist unless ``-n`` is given (``--dist loadfile``: each module on one worker, so a
module-scoped fixture's subprocess runs once; not ``loadgroup``, which pytest 9.2 breaks,
https://github.com/pytest-dev/pytest-xdist/issues/1386). A ``-m`` expression, when given,
picks the tests instead (``-m system`` runs only those, ``-m hlo`` the compiled-HLO guards).
"""

import importlib.util
import os

import jax.numpy as jnp
import numpy as np
import pytest

SLOW_TIERS = ("slow", "system")


def pytest_addoption(parser):
    parser.addoption(
        "--full", action="store_true", help="run the whole suite, the slow and system tests too (default: fast tier)"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """``--full`` without ``-n``: pytest-xdist on every core, at most 8 (runs before xdist's own hook)."""
    if not config.getoption("--full") or hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return
    if config.getoption("numprocesses") is None and config.getoption("dist") == "no":
        config.option.numprocesses = min(os.cpu_count() or 1, 8)
        config.option.dist = "loadfile"


def pytest_collection_modifyitems(config, items):
    if config.getoption("--full") or config.getoption("markexpr"):
        return
    fast = [item for item in items if not any(item.get_closest_marker(tier) for tier in SLOW_TIERS)]
    if not fast:
        # Only slow or system tests were asked for by path (say `pytest tests/test_notebook.py`):
        # say why they do not run rather than collect nothing.
        skip = pytest.mark.skip(reason="slow or system test: run with --full")
        for item in items:
            item.add_marker(skip)
        return
    kept = {id(item) for item in fast}
    deselected = [item for item in items if id(item) not in kept]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = fast


def pytest_report_header(config):
    if config.getoption("--full") or config.getoption("markexpr"):
        return None
    return "fast tier: tests marked slow or system are deselected (python -m pytest --full runs them)"


@pytest.fixture(autouse=True)
def _doctest_namespace(doctest_namespace):
    doctest_namespace["np"] = np
    doctest_namespace["jnp"] = jnp


# dmljax.onnx needs the optional extra dmljax[onnx]; without jax2onnx its doctests are skipped.
# The tests' worker scripts run as subprocesses (and import what their test checks is installed).
collect_ignore_glob = ["tests/*_worker.py"] + ([] if importlib.util.find_spec("jax2onnx") else ["dmljax/onnx/*"])
