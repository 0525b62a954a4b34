"""Doctest namespace: ``np`` and ``jnp`` are available in every docstring example."""

import importlib.util

import jax.numpy as jnp
import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _doctest_namespace(doctest_namespace):
    doctest_namespace["np"] = np
    doctest_namespace["jnp"] = jnp


# dmljax.onnx needs the optional extra dmljax[onnx]; without jax2onnx its doctests are skipped.
collect_ignore_glob = [] if importlib.util.find_spec("jax2onnx") else ["dmljax/onnx/*"]
