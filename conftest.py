"""Doctest namespace: ``np`` and ``jnp`` are available in every docstring example."""

import jax.numpy as jnp
import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _doctest_namespace(doctest_namespace):
    doctest_namespace["np"] = np
    doctest_namespace["jnp"] = jnp
