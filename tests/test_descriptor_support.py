"""The library's feature-level support tables equal DirectML's pages (`tests/directml_support.py`).

At every feature level, each struct's table in ``dmljax/_descriptors`` must allow exactly
the dimension counts and data types the page lists for each of its tensors, from the level
the page says introduced the operator (before it: no row).
"""

import pytest

from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.gather import GATHER_SUPPORT
from dmljax._descriptors.gather_elements import GATHER_ELEMENTS_SUPPORT
from dmljax._descriptors.generators import (
    DIAGONAL_MATRIX1_SUPPORT,
    DIAGONAL_MATRIX_SUPPORT,
    FILL_VALUE_CONSTANT_SUPPORT,
)
from dmljax._descriptors.nd import GATHER_ND_SUPPORT, SCATTER_ND_SUPPORT
from dmljax._descriptors.pooling import MAX_POOLING2_SUPPORT, MAX_UNPOOLING_SUPPORT
from dmljax._descriptors.random_generator import RANDOM_GENERATOR_SUPPORT
from dmljax._descriptors.resample import (
    RESAMPLE1_SUPPORT,
    RESAMPLE2_SUPPORT,
    RESAMPLE3_SUPPORT,
    RESAMPLE_GRAD1_SUPPORT,
    RESAMPLE_GRAD_SUPPORT,
    RESAMPLE_SUPPORT,
)
from dmljax._descriptors.scatter import SCATTER_SUPPORT
from dmljax._descriptors.slice1 import SLICE1_SUPPORT
from dmljax._descriptors.support import support_at
from tests.directml_support import PAGES

TABLES = {
    "DML_GATHER_OPERATOR_DESC": GATHER_SUPPORT,
    "DML_GATHER_ELEMENTS_OPERATOR_DESC": GATHER_ELEMENTS_SUPPORT,
    "DML_GATHER_ND1_OPERATOR_DESC": GATHER_ND_SUPPORT,
    "DML_SCATTER_OPERATOR_DESC": SCATTER_SUPPORT,
    "DML_SCATTER_ND_OPERATOR_DESC": SCATTER_ND_SUPPORT,
    "DML_SLICE1_OPERATOR_DESC": SLICE1_SUPPORT,
    "DML_RANDOM_GENERATOR_OPERATOR_DESC": RANDOM_GENERATOR_SUPPORT,
    "DML_MAX_POOLING2_OPERATOR_DESC": MAX_POOLING2_SUPPORT,
    "DML_MAX_UNPOOLING_OPERATOR_DESC": MAX_UNPOOLING_SUPPORT,
    "DML_RESAMPLE_OPERATOR_DESC": RESAMPLE_SUPPORT,
    "DML_RESAMPLE1_OPERATOR_DESC": RESAMPLE1_SUPPORT,
    "DML_RESAMPLE2_OPERATOR_DESC": RESAMPLE2_SUPPORT,
    "DML_RESAMPLE3_OPERATOR_DESC": RESAMPLE3_SUPPORT,
    "DML_RESAMPLE_GRAD_OPERATOR_DESC": RESAMPLE_GRAD_SUPPORT,
    "DML_RESAMPLE_GRAD1_OPERATOR_DESC": RESAMPLE_GRAD1_SUPPORT,
    "DML_DIAGONAL_MATRIX_OPERATOR_DESC": DIAGONAL_MATRIX_SUPPORT,
    "DML_DIAGONAL_MATRIX1_OPERATOR_DESC": DIAGONAL_MATRIX1_SUPPORT,
    "DML_FILL_VALUE_CONSTANT_OPERATOR_DESC": FILL_VALUE_CONSTANT_SUPPORT,
}
INDEX_TENSORS = ("IndicesTensor", "OutputIndicesTensor")


def page_row(struct: str, level: FeatureLevel) -> dict | None:
    """The page's rows (tensor -> (dims, type set)) that apply at ``level``, None before the operator."""
    levels = {FeatureLevel[f"FL_{name}"]: rows for name, rows in PAGES[struct]["levels"].items()}
    applicable = [found for found in sorted(levels) if found <= level]
    if not applicable:
        return None
    return {tensor: (dims, set(types)) for tensor, (dims, types) in levels[applicable[-1]].items()}


def _span(counts: tuple[int, ...]) -> tuple[int, int]:
    assert counts == tuple(range(counts[0], counts[-1] + 1)), counts  # a contiguous range, as the pages write it
    return counts[0], counts[-1]


def library_row(struct: str, level: FeatureLevel, tensors: list[str]) -> dict | None:
    """The library's row at ``level`` in the page's shape, for the page's tensors."""
    row = support_at(TABLES[struct], level)
    if row is None:
        return None
    types = {t.name for t in row.data_types}
    if struct == "DML_RANDOM_GENERATOR_OPERATOR_DESC":
        state, output = _span(row.state_dimension_counts), _span(row.output_dimension_counts)
        return {t: (output if t == "OutputTensor" else state, types) for t in tensors}
    index_types = {t.name for t in row.index_types}
    return {t: (row.dims, index_types if t in INDEX_TENSORS else types) for t in tensors}


@pytest.mark.parametrize("level", list(FeatureLevel), ids=str)
@pytest.mark.parametrize("struct", sorted(PAGES))
def test_the_library_table_equals_directmls_page(struct, level):
    page = page_row(struct, level)
    tensors = sorted(PAGES[struct]["levels"][next(iter(PAGES[struct]["levels"]))])
    assert library_row(struct, level, tensors) == page, PAGES[struct]["url"]


@pytest.mark.parametrize("struct", sorted(PAGES))
def test_the_operator_appears_at_the_level_its_page_names(struct):
    first = FeatureLevel[f"FL_{PAGES[struct]['introduced']}"]
    assert TABLES[struct][0].level == first == min(FeatureLevel[f"FL_{n}"] for n in PAGES[struct]["levels"])
