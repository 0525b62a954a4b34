"""Run one ONNX node with onnx's reference evaluator or onnxruntime (CPU), for the conformance tests."""

import numpy as np
import onnx
from onnx import helper
from onnx.reference import ReferenceEvaluator

from tests._util import onnx_session

OPSET = 18  # ScatterND and ScatterElements with reduction "max"/"min"


def model(op_type, inputs, opset=OPSET, **attributes):
    names = ["data", "indices", "updates"][: len(inputs)]
    node = helper.make_node(op_type, names, ["out"], **attributes)
    graph = helper.make_graph(
        [node],
        op_type.lower(),
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
            for n, x in zip(names, inputs, strict=True)
        ],
        [
            helper.make_tensor_value_info(
                "out", helper.np_dtype_to_tensor_dtype(inputs[0].dtype), out_shape(op_type, inputs, attributes)
            )
        ],
    )
    built = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    built.ir_version = 8
    onnx.checker.check_model(built)
    return built, dict(zip(names, inputs, strict=True))


def reference(op_type, inputs, **attributes):
    """The output of onnx.reference.ReferenceEvaluator on a single-node model."""
    built, feeds = model(op_type, [np.asarray(x) for x in inputs], **attributes)
    return ReferenceEvaluator(built).run(None, feeds)[0]


def onnxruntime(op_type, inputs, **attributes):
    """The output of onnxruntime's CPU kernel on a single-node model."""
    built, feeds = model(op_type, [np.asarray(x) for x in inputs], **attributes)
    return onnx_session(built).run(None, feeds)[0]


def out_shape(op_type, inputs, attributes):
    if op_type == "GatherND":
        data, indices = inputs
        b = attributes.get("batch_dims", 0)
        return indices.shape[:-1] + data.shape[b + indices.shape[-1] :]
    return inputs[0].shape
