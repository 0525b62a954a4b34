"""DirectML's "Tensor support" tables, transcribed from the operators' pages as plain data.

Each page lists, per feature level ("DML_FEATURE_LEVEL_4_1 and above", ...), every tensor of
the struct with its supported dimension counts and data types; "Availability" names the level
that introduced the operator. Transcribed by hand from the English pages (their Markdown
source: github.com/MicrosoftDocs/sdk-api, sdk-api-src/content/directml/); the Korean and
Japanese copies of the SCATTER, SLICE1 and RANDOM_GENERATOR pages in the project's seeds agree.
``tests/test_descriptor_support.py`` compares them with the library's tables.

Layout: ``PAGES[struct] = {"url", "introduced", "levels": {level: {tensor: (dims, types)}}}``,
``dims`` the ``(min, max)`` dimension count, ``types`` the data types in the page's order.
"""

_BASE = "https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-"

# The type lists the tables repeat, in the pages' order.
ALL_4_1 = ("FLOAT64", "FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8")
ALL_2_1 = ("FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8")
FLOATS_1_0 = ("FLOAT32", "FLOAT16")
INDICES_3_0 = ("INT64", "INT32", "UINT64", "UINT32")
INDICES_1_0 = ("UINT32",)
ALL_5_0 = ("FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8")
BYTES_6_2 = ("FLOAT32", "FLOAT16", "INT8", "UINT8")
_AI = "https://learn.microsoft.com/en-us/windows/ai/directml/api/ns-directml-"


def _rows(dims: tuple[int, int], types: tuple[str, ...], *tensors: str) -> dict:
    """One level's rows when every tensor has the same dimension counts and data types."""
    return {tensor: (dims, types) for tensor in tensors}


def _pool(dims: tuple[int, int], data: tuple[str, ...], indices: tuple[str, ...], indices_name: str) -> dict:
    """One level's rows of a max-pooling page (data in and out, and the indices tensor)."""
    return {"InputTensor": (dims, data), indices_name: (dims, indices), "OutputTensor": (dims, data)}


def _indexing(dims: tuple[int, int], data: tuple[str, ...], indices: tuple[str, ...], updates: bool = False) -> dict:
    """One level's rows of a gather-like table (and UpdatesTensor for a scatter)."""
    rows = {"InputTensor": (dims, data), "IndicesTensor": (dims, indices)}
    if updates:
        rows["UpdatesTensor"] = (dims, data)
    rows["OutputTensor"] = (dims, data)
    return rows


PAGES = {
    "DML_GATHER_OPERATOR_DESC": {
        "url": _BASE + "dml_gather_operator_desc",
        "introduced": "1_0",
        "levels": {
            "4_1": _indexing((1, 8), ALL_4_1, INDICES_3_0),
            "3_0": _indexing((1, 8), ALL_2_1, INDICES_3_0),
            "2_1": _indexing((4, 4), ALL_2_1, INDICES_1_0),
            "1_0": _indexing((4, 4), FLOATS_1_0, INDICES_1_0),
        },
    },
    "DML_GATHER_ELEMENTS_OPERATOR_DESC": {
        "url": _BASE + "dml_gather_elements_operator_desc",
        "introduced": "2_1",
        "levels": {
            "4_1": _indexing((1, 8), ALL_4_1, INDICES_3_0),
            "3_0": _indexing((1, 8), ALL_2_1, INDICES_3_0),
            "2_1": _indexing((4, 4), ALL_2_1, INDICES_1_0),
        },
    },
    # GATHER_ND1 (BatchDimensionCount): what dmljax's GatherNDOperatorDesc is. Its predecessor
    # DML_GATHER_ND_OPERATOR_DESC (no batch dimensions) came in 2.1 with 4-D tensors and UINT32 indices.
    "DML_GATHER_ND1_OPERATOR_DESC": {
        "url": _BASE + "dml_gather_nd1_operator_desc",
        "introduced": "3_0",
        "levels": {
            "4_1": _indexing((1, 8), ALL_4_1, INDICES_3_0),
            "3_0": _indexing((1, 8), ALL_2_1, INDICES_3_0),
        },
    },
    "DML_SCATTER_OPERATOR_DESC": {
        "url": _BASE + "dml_scatter_operator_desc",
        "introduced": "1_0",
        "levels": {
            "4_1": _indexing((1, 8), ALL_4_1, INDICES_3_0, updates=True),
            "3_0": _indexing((1, 8), ALL_2_1, INDICES_3_0, updates=True),
            "2_1": _indexing((4, 4), ALL_2_1, INDICES_1_0, updates=True),
            "1_0": _indexing((4, 4), FLOATS_1_0, INDICES_1_0, updates=True),
        },
    },
    "DML_SCATTER_ND_OPERATOR_DESC": {
        "url": _BASE + "dml_scatter_nd_operator_desc",
        "introduced": "2_1",
        "levels": {
            "4_1": _indexing((1, 8), ALL_4_1, INDICES_3_0, updates=True),
            "3_0": _indexing((1, 8), ALL_2_1, INDICES_3_0, updates=True),
            "2_1": _indexing((4, 4), ALL_2_1, INDICES_1_0, updates=True),
        },
    },
    "DML_SLICE1_OPERATOR_DESC": {
        "url": _BASE + "dml_slice1_operator_desc",
        "introduced": "2_1",
        "levels": {
            "4_1": {"InputTensor": ((1, 8), ALL_4_1), "OutputTensor": ((1, 8), ALL_4_1)},
            "3_0": {"InputTensor": ((1, 8), ALL_2_1), "OutputTensor": ((1, 8), ALL_2_1)},
            "2_1": {"InputTensor": ((4, 5), ALL_2_1), "OutputTensor": ((4, 5), ALL_2_1)},
        },
    },
    # The state tensors' sizes: {1,1,1,6} at 3.0; leading 1s, then 6, in 1 to 8 dimensions from 4.0.
    "DML_RANDOM_GENERATOR_OPERATOR_DESC": {
        "url": _BASE + "dml_random_generator_operator_desc",
        "introduced": "3_0",
        "levels": {
            "4_0": {
                "InputStateTensor": ((1, 8), ("UINT32",)),
                "OutputTensor": ((1, 8), ("UINT32",)),
                "OutputStateTensor": ((1, 8), ("UINT32",)),
            },
            "3_0": {
                "InputStateTensor": ((4, 4), ("UINT32",)),
                "OutputTensor": ((4, 4), ("UINT32",)),
                "OutputStateTensor": ((4, 4), ("UINT32",)),
            },
        },
    },
    # The vision operators (MicrosoftDocs/sdk-api and, for the structs documented under
    # windows/ai/directml, MicrosoftDocs/windows-ai-docs docs/directml/api/). UNFOLD and FOLD
    # (6.4, 3 to 8 dimensions) are absent: their pages leave the data types empty.
    "DML_MAX_POOLING2_OPERATOR_DESC": {
        "url": _BASE + "dml_max_pooling2_operator_desc",
        "introduced": "2_1",
        "levels": {
            "5_0": _pool((4, 5), ALL_5_0, ("UINT64", "UINT32"), "OutputIndicesTensor"),
            "3_0": _pool((4, 5), BYTES_6_2, INDICES_1_0, "OutputIndicesTensor"),
            "2_1": _pool((4, 5), FLOATS_1_0, INDICES_1_0, "OutputIndicesTensor"),
        },
    },
    "DML_MAX_UNPOOLING_OPERATOR_DESC": {
        "url": _BASE + "dml_max_unpooling_operator_desc",
        "introduced": "3_0",
        "levels": {
            "5_0": _pool((4, 4), ALL_5_0, ("UINT64", "UINT32"), "IndicesTensor"),
            "3_0": _pool((4, 4), FLOATS_1_0, INDICES_1_0, "IndicesTensor"),
        },
    },
    "DML_RESAMPLE_OPERATOR_DESC": {
        "url": _BASE + "dml_resample_operator_desc",
        "introduced": "2_0",
        "levels": {
            "6_2": _rows((1, 4), BYTES_6_2, "InputTensor", "OutputTensor"),
            "5_1": _rows((1, 4), FLOATS_1_0, "InputTensor", "OutputTensor"),
            "2_0": _rows((4, 4), FLOATS_1_0, "InputTensor", "OutputTensor"),
        },
    },
    "DML_RESAMPLE1_OPERATOR_DESC": {
        "url": _BASE + "dml_resample1_operator_desc",
        "introduced": "2_1",
        "levels": {
            "6_2": _rows((1, 4), BYTES_6_2, "InputTensor", "OutputTensor"),
            "5_1": _rows((1, 4), FLOATS_1_0, "InputTensor", "OutputTensor"),
            "2_1": _rows((4, 4), FLOATS_1_0, "InputTensor", "OutputTensor"),
        },
    },
    "DML_RESAMPLE2_OPERATOR_DESC": {
        "url": _AI + "dml_resample2_operator_desc",
        "introduced": "5_1",
        "levels": {"5_1": _rows((1, 4), FLOATS_1_0, "InputTensor", "OutputTensor")},
    },
    "DML_RESAMPLE3_OPERATOR_DESC": {
        "url": _AI + "dml_resample3_operator_desc",
        "introduced": "6_4",
        "levels": {"6_4": _rows((1, 4), BYTES_6_2, "InputTensor", "OutputTensor")},
    },
    "DML_RESAMPLE_GRAD_OPERATOR_DESC": {
        "url": _BASE + "dml_resample_grad_operator_desc",
        "introduced": "3_0",
        "levels": {
            "5_1": _rows((1, 4), FLOATS_1_0, "InputGradientTensor", "OutputGradientTensor"),
            "3_0": _rows((4, 4), FLOATS_1_0, "InputGradientTensor", "OutputGradientTensor"),
        },
    },
    "DML_RESAMPLE_GRAD1_OPERATOR_DESC": {
        "url": _AI + "dml_resample_grad1_operator_desc",
        "introduced": "5_1",
        "levels": {"5_1": _rows((1, 4), FLOATS_1_0, "InputGradientTensor", "OutputGradientTensor")},
    },
    "DML_DIAGONAL_MATRIX_OPERATOR_DESC": {
        "url": _BASE + "dml_diagonal_matrix_operator_desc",
        "introduced": "2_0",
        "levels": {
            "5_1": _rows((2, 4), ALL_4_1, "OutputTensor"),
            "4_0": _rows((2, 4), ALL_2_1, "OutputTensor"),
            "2_1": _rows((4, 4), ALL_2_1, "OutputTensor"),
            "2_0": _rows((4, 4), FLOATS_1_0, "OutputTensor"),
        },
    },
    "DML_DIAGONAL_MATRIX1_OPERATOR_DESC": {
        "url": _AI + "dml_diagonal_matrix1_operator_desc",
        "introduced": "5_1",
        "levels": {"5_1": _rows((2, 4), ALL_4_1, "InputTensor", "OutputTensor")},
    },
    "DML_FILL_VALUE_CONSTANT_OPERATOR_DESC": {
        "url": _BASE + "dml_fill_value_constant_operator_desc",
        "introduced": "2_1",
        "levels": {
            "4_1": _rows((1, 8), ALL_4_1, "OutputTensor"),
            "4_0": _rows((1, 8), ALL_2_1, "OutputTensor"),
            "2_1": _rows((4, 4), ALL_2_1, "OutputTensor"),
        },
    },
}
