#!/usr/bin/python3
"""Exports operator test cases with independently computed expected outputs for Tessel's
conformance test (tests/compiler/test_onnx_spec.cc).

Two sources:
  1. The ONNX specification's own node test cases (onnx/backend/test/case/node/*.py in Debian's
     python3-onnx), whose expected outputs are computed with numpy, for every operator Tessel
     supports. Each module is imported directly: onnx 1.12's collect_testcases() imports every
     module, and some of those (bernoulli.py) use numpy aliases that numpy 1.24 removed.
  2. Tessel's own cases for attribute edge cases the spec examples miss (negative axes at every
     operator that has an axis, omitted optional inputs, defaults and attributes by opset,
     ceil_mode windows that start in the end padding), with expected outputs from numpy here.

Tessel takes only float32 graph inputs and wants weights, shapes and quantisation parameters as
constants, so every case is rewritten the same way: the first graph input stays an input when it
is a float32 tensor; every other input becomes an initializer holding the case's data (when the
first input is not float32 it becomes an initializer too and an unused float input
'tessel_unused' [1] is added, since an ONNX graph for Tessel needs one). Models whose opset is
below 7 (Tessel's lowest) are moved to opset 7 when the operator's definition is the same there.

Usage: onnx_spec_cases.py OUTDIR   (writes OUTDIR/manifest.json and one .onnx per case)
"""
import importlib
import json
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

# The spec modules of the operators Tessel supports (onnx/backend/test/case/node/<module>.py).
SPEC_MODULES = [
    "add", "averagepool", "batchnorm", "clip", "concat", "conv", "dequantizelinear", "flatten",
    "gather", "gemm", "globalaveragepool", "identity", "matmul", "maxpool", "mul", "qlinearconv",
    "qlinearmatmul", "quantizelinear", "relu", "reshape", "shape", "softmax", "squeeze",
    "unsqueeze",
]
TESSEL_OPS = {
    "Add", "AveragePool", "BatchNormalization", "Clip", "Concat", "Conv", "DequantizeLinear",
    "Flatten", "Gather", "Gemm", "GlobalAveragePool", "Identity", "MatMul", "MaxPool", "Mul",
    "QLinearConv", "QLinearMatMul", "QuantizeLinear", "Relu", "Reshape", "Shape", "Softmax",
    "Squeeze", "Unsqueeze", "Constant",
}


def spec_cases():
    from onnx.backend.test.case import node as node_cases
    for m in SPEC_MODULES:
        importlib.import_module("onnx.backend.test.case.node." + m)
    for t in node_cases._NodeTestCases:
        yield t.name, t.model, t.data_sets[0][0], t.data_sets[0][1]


# ---------------------------------------------------------------- Tessel's own cases

def model(name, nodes, inputs, outputs, opset):
    """A one-graph model: `inputs` / `outputs` are (name, array) pairs (every input a graph input;
    the export below turns all but the first into initializers)."""
    def vi(n, a):
        return helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
    g = helper.make_graph(nodes, name, [vi(n, a) for n, a in inputs], [vi(n, a) for n, a in outputs])
    return helper.make_model(g, opset_imports=[helper.make_operatorsetid("", opset)], ir_version=7)


def case(name, op, opset, inputs, outputs, expect_error=None, **attrs):
    """One node `op` reading inputs x0.. (None = omitted optional input) writing y0..."""
    in_names = ["" if a is None else "x%d" % k for k, a in enumerate(inputs)]
    node = helper.make_node(op, in_names, ["y%d" % k for k in range(len(outputs))], **attrs)
    ins = [(n, a) for n, a in zip(in_names, inputs) if a is not None]
    outs = [("y%d" % k, a) for k, a in enumerate(outputs)]
    return name, model(name, [node], ins, outs, opset), [a for _, a in ins], [a for _, a in outs], expect_error


def softmax_np(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def pool_np(x, kernel, stride, pads, ceil_mode, kind, count_include_pad=0):
    """ONNX MaxPool / AveragePool on NCHW `x`: windows at o * stride - pad_begin; with ceil_mode
    the output size is ceil((in + pads - k) / s) + 1, less a last window that would start in the
    end padding; count_include_pad divides by the window's extent inside input + pads."""
    n, c, h, w = x.shape
    def out_size(i, k, s, pb, pe):
        span = i + pb + pe - k
        o = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (o - 1) * s >= i + pb:
            o -= 1
        return o
    oh = out_size(h, kernel[0], stride[0], pads[0], pads[2])
    ow = out_size(w, kernel[1], stride[1], pads[1], pads[3])
    y = np.zeros((n, c, oh, ow), dtype=np.float32)
    for oy in range(oh):
        y0 = oy * stride[0] - pads[0]
        y1 = min(y0 + kernel[0], h + pads[2])
        for ox in range(ow):
            x0 = ox * stride[1] - pads[1]
            x1 = min(x0 + kernel[1], w + pads[3])
            win = x[:, :, max(y0, 0):min(y1, h), max(x0, 0):min(x1, w)]
            if kind == "max":
                y[:, :, oy, ox] = win.max(axis=(2, 3))
            else:
                div = (y1 - y0) * (x1 - x0) if count_include_pad else win.shape[2] * win.shape[3]
                y[:, :, oy, ox] = win.sum(axis=(2, 3)) / div
    return y


def conv_np(x, w, b, stride, pads, group):
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]), dtype=np.float64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    oh = (xp.shape[2] - kh) // stride[0] + 1
    ow = (xp.shape[3] - kw) // stride[1] + 1
    y = np.zeros((n, oc, oh, ow))
    ocg = oc // group
    for o in range(oc):
        g = o // ocg
        for oy in range(oh):
            for ox in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg, oy * stride[0]:oy * stride[0] + kh, ox * stride[1]:ox * stride[1] + kw]
                y[:, o, oy, ox] = (patch * w[o]).sum(axis=(1, 2, 3)) + (b[o] if b is not None else 0)
    return y.astype(np.float32)


def quantize_np(x, scale, zp, axis, dtype):
    shape = [1] * x.ndim
    if np.ndim(scale) == 1 and scale.size > 1:
        shape[axis] = scale.size
    s = np.reshape(scale, shape) if np.ndim(scale) else scale
    z = np.reshape(zp, shape).astype(np.int64) if np.ndim(zp) else np.int64(zp)
    info = np.iinfo(dtype)
    return np.clip(np.rint(x / s) + z, info.min, info.max).astype(dtype)


def tessel_cases():
    rng = np.random.RandomState(7)
    f = lambda *s: rng.uniform(-2, 2, s).astype(np.float32)
    i64 = lambda *v: np.array(v, dtype=np.int64)
    x4 = f(2, 3, 4, 5)
    cases = []
    # Flatten: every negative axis at opset 13 (the case: axis -1 on [2,3,4,5] is 24x5),
    # and negative axes are an error before opset 11.
    for axis in (-1, -2, -3, -4, 0, 4):
        a = axis if axis >= 0 else axis + 4
        cases.append(case("tessel_flatten_axis%d_opset13" % axis, "Flatten", 13, [x4],
                          [x4.reshape(int(np.prod(x4.shape[:a])), -1)], axis=axis))
    cases.append(case("tessel_flatten_negative_axis_opset9", "Flatten", 9, [x4], [x4.reshape(24, 5)],
                      expect_error="axis -1 is negative; Flatten accepts negative axes from opset 11", axis=-1))
    cases.append(case("tessel_flatten_default_axis_opset9", "Flatten", 9, [x4], [x4.reshape(2, 60)]))
    # Softmax: default axis by opset (1 and coerced to 2-D before 13, -1 from 13), negative axes.
    x3 = f(2, 3, 4)
    cases.append(case("tessel_softmax_default_axis_opset11", "Softmax", 11, [x3],
                      [softmax_np(x3.reshape(2, 12), 1).reshape(2, 3, 4)]))
    cases.append(case("tessel_softmax_axis_minus1_opset11", "Softmax", 11, [x3], [softmax_np(x3, 2)], axis=-1))
    cases.append(case("tessel_softmax_axis_minus2_opset13", "Softmax", 13, [x3], [softmax_np(x3, 1)], axis=-2))
    cases.append(case("tessel_softmax_default_axis_opset13", "Softmax", 13, [x3], [softmax_np(x3, 2)]))
    cases.append(case("tessel_softmax_negative_axis_opset9", "Softmax", 9, [x3], [softmax_np(x3, 2)],
                      expect_error="axis -1 is negative; Softmax accepts negative axes from opset 11", axis=-1))
    # Concat: negative axes; the axis attribute is required.
    a, b = f(2, 3), f(2, 4)
    cases.append(case("tessel_concat_axis_minus1_opset11", "Concat", 11, [a, b], [np.concatenate([a, b], 1)], axis=-1))
    cases.append(case("tessel_concat_without_axis_opset13", "Concat", 13, [a, b], [np.concatenate([a, b], 1)],
                      expect_error="attribute 'axis' is required by Concat at opset 13"))
    cases.append(case("tessel_concat_negative_axis_opset7", "Concat", 7, [a, b], [np.concatenate([a, b], 1)],
                      expect_error="axis -1 is negative; Concat accepts negative axes from opset 11", axis=-1))
    # Gather: negative axis and negative indices.
    d = f(3, 4)
    cases.append(case("tessel_gather_axis_minus1_opset13", "Gather", 13, [d, i64(0, -1, 2)],
                      [np.take(d, [0, 3, 2], axis=1)], axis=-1))
    cases.append(case("tessel_gather_axis1_2d_indices_opset11", "Gather", 11, [d, np.array([[1, 0], [3, -4]], np.int64)],
                      [np.take(d, [[1, 0], [3, 0]], axis=1)], axis=1))
    # Gather-1 already defines negative axes.
    cases.append(case("tessel_gather_axis_minus2_opset9", "Gather", 9, [d, i64(2, 0)], [np.take(d, [2, 0], axis=0)],
                      axis=-2))
    # Squeeze / Unsqueeze: axes as attributes before 13, as an input from 13; negative axes;
    # omitted axes squeeze every 1.
    s = f(1, 3, 1, 2)
    cases.append(case("tessel_squeeze_attr_negative_opset11", "Squeeze", 11, [s], [s.reshape(1, 3, 2)], axes=[-2]))
    cases.append(case("tessel_squeeze_no_axes_opset13", "Squeeze", 13, [s], [s.reshape(3, 2)]))
    cases.append(case("tessel_squeeze_input_negative_opset13", "Squeeze", 13, [s, i64(-4, 2)], [s.reshape(3, 2)]))
    cases.append(case("tessel_squeeze_attr_at_opset13", "Squeeze", 13, [s], [s.reshape(3, 2)],
                      expect_error="attribute 'axes' is not defined by Squeeze at opset 13 (at this opset 'axes' is an input)",
                      axes=[0]))
    u = f(3, 4)
    cases.append(case("tessel_unsqueeze_attr_negative_opset11", "Unsqueeze", 11, [u], [u.reshape(1, 3, 4, 1)], axes=[-1, 0]))
    cases.append(case("tessel_unsqueeze_input_negative_opset13", "Unsqueeze", 13, [u, i64(-1, -4)], [u.reshape(1, 3, 4, 1)]))
    cases.append(case("tessel_unsqueeze_negative_attr_opset9", "Unsqueeze", 9, [u], [u.reshape(3, 4, 1)],
                      expect_error="axes -1 is negative; Unsqueeze accepts negative axes from opset 11", axes=[-1]))
    # Clip: attributes before 11, optional inputs from 11 (an omitted min, no bounds at all);
    # attributes at opset 13 are an error (the silent wrong answer).
    c = f(3, 4) * 3
    cases.append(case("tessel_clip_attrs_opset7", "Clip", 7, [c], [np.clip(c, -1, 0.5)], min=-1.0, max=0.5))
    cases.append(case("tessel_clip_attr_min_only_opset7", "Clip", 7, [c], [np.maximum(c, -1.0)], min=-1.0))
    cases.append(case("tessel_clip_omitted_min_opset12", "Clip", 12, [c, None, np.array(0.5, np.float32)],
                      [np.minimum(c, 0.5)]))
    cases.append(case("tessel_clip_no_bounds_opset13", "Clip", 13, [c], [c]))
    # min > max is legal: min(max(x, min), max) is max everywhere (hostile review 3).
    cases.append(case("tessel_clip_min_above_max_opset13", "Clip", 13,
                      [c, np.array(1.0, np.float32), np.array(0.0, np.float32)],
                      [np.minimum(np.maximum(c, np.float32(1.0)), np.float32(0.0))]))
    cases.append(case("tessel_clip_inf_max_opset13", "Clip", 13, [c, np.array(0, np.float32), np.array(np.inf, np.float32)],
                      [np.maximum(c, 0)]))
    cases.append(case("tessel_clip_attrs_at_opset13", "Clip", 13, [c], [np.clip(c, -1, 0.5)],
                      expect_error="attribute 'max' is not defined by Clip at opset 13 (at this opset 'max' is an input)",
                      min=-1.0, max=0.5))
    cases.append(case("tessel_clip_nan_bound_opset13", "Clip", 13, [c, np.array(np.nan, np.float32)], [c],
                      expect_error="has the non-finite value nan at element 0"))
    # A one-sided Clip in the float part of a graph (before a Softmax, which stays float): the
    # float CPU kernel, max only, min only, and both (the finding: "float Clip [-inf, 0.44] has
    # no cpu kernel").
    cs = f(2, 6) * 2
    for tag, lo, hi in (("max_only", None, 0.44), ("min_only", -0.3, None), ("both", -0.5, 0.75)):
        bounds = ["x0", "" if lo is None else "lo", "" if hi is None else "hi"]
        while bounds[-1] == "":
            bounds.pop()
        nodes = [helper.make_node("Clip", bounds, ["c"]), helper.make_node("Softmax", ["c"], ["y0"], axis=1)]
        ins = [("x0", cs)] + ([("lo", np.array(lo, np.float32))] if lo is not None else []) + \
              ([("hi", np.array(hi, np.float32))] if hi is not None else [])
        want = softmax_np(np.clip(cs, -np.inf if lo is None else lo, np.inf if hi is None else hi), 1)
        name = "tessel_clip_%s_before_softmax_opset13" % tag
        cases.append((name, model(name, nodes, ins, [("y0", want)], 13), [a for _, a in ins], [want], None))
    # Shape: start / end exist from opset 15.
    cases.append(case("tessel_shape_opset13", "Shape", 13, [x4], [i64(2, 3, 4, 5)]))
    cases.append(case("tessel_shape_start_at_opset13", "Shape", 13, [x4], [i64(3, 4, 5)],
                      expect_error="attribute 'start' is not defined by Shape at opset 13", start=1))
    cases.append(case("tessel_shape_start_end_negative_opset15", "Shape", 15, [x4], [i64(3, 4)], start=-3, end=-1))
    # Reshape: 0 copies a dimension, -1 is inferred; allowzero from opset 14.
    r = f(2, 3, 4)
    cases.append(case("tessel_reshape_zero_minus1_opset13", "Reshape", 13, [r, i64(0, -1)], [r.reshape(2, 12)]))
    cases.append(case("tessel_reshape_allowzero_no_zero_opset14", "Reshape", 14, [r, i64(4, -1)], [r.reshape(4, 6)],
                      allowzero=1))
    cases.append(case("tessel_reshape_allowzero_at_opset13", "Reshape", 13, [r, i64(4, -1)], [r.reshape(4, 6)],
                      expect_error="attribute 'allowzero' is not defined by Reshape at opset 13", allowzero=1))
    # Pools with ceil_mode: the last window of [1,1,5,5] with kernel 2, stride 2, pads 1 would start
    # in the end padding and is dropped (output 3x3, the case); other ceil_mode windows
    # hang over the input's end and are kept; count_include_pad counts input + pads only.
    p5 = f(1, 2, 5, 5)
    p6 = f(1, 1, 6, 7)
    for kind, op in (("max", "MaxPool"), ("avg", "AveragePool")):
        cases.append(case("tessel_%spool_ceil_drops_window_in_end_pad" % kind, op, 13, [p5],
                          [pool_np(p5, (2, 2), (2, 2), (1, 1, 1, 1), True, kind)],
                          kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1))
        cases.append(case("tessel_%spool_ceil_overhang" % kind, op, 13, [p6],
                          [pool_np(p6, (3, 3), (2, 2), (0, 0, 0, 0), True, kind)],
                          kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1))
        cases.append(case("tessel_%spool_ceil_asymmetric_pads" % kind, op, 13, [p6],
                          [pool_np(p6, (3, 2), (2, 3), (1, 0, 2, 1), True, kind)],
                          kernel_shape=[3, 2], strides=[2, 3], pads=[1, 0, 2, 1], ceil_mode=1))
    cases.append(case("tessel_avgpool_ceil_count_include_pad", "AveragePool", 13, [p6],
                      [pool_np(p6, (3, 3), (2, 2), (1, 1, 1, 1), True, "avg", 1)],
                      kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1))
    cases.append(case("tessel_maxpool_ceil_mode_at_opset9", "MaxPool", 9, [p6],
                      [pool_np(p6, (3, 3), (2, 2), (0, 0, 0, 0), True, "max")],
                      expect_error="attribute 'ceil_mode' is not defined by MaxPool at opset 9",
                      kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1))
    # (its first output row would be a window entirely in the padding: no expected value)
    cases.append(case("tessel_maxpool_pad_not_smaller_than_kernel", "MaxPool", 13, [p6], [p6],
                      expect_error="must be smaller than the kernel 2x2", kernel_shape=[2, 2], pads=[2, 0, 0, 0]))
    # Conv: groups with bias, asymmetric pads and strides, SAME_LOWER, explicit kernel_shape.
    cx = f(1, 4, 6, 5)
    cw = f(6, 2, 3, 2)
    cb = f(6)
    cases.append(case("tessel_conv_group2_bias_asymmetric", "Conv", 11, [cx, cw, cb],
                      [conv_np(cx, cw, cb, (2, 1), (1, 0, 2, 1), 2)],
                      group=2, strides=[2, 1], pads=[1, 0, 2, 1], kernel_shape=[3, 2]))
    dw = f(4, 1, 3, 3)
    # SAME_LOWER, stride 2 on 6x5: out 3x3, total pads 1 (rows) and 2 (cols), the odd one first.
    cases.append(case("tessel_conv_depthwise_same_lower", "Conv", 11, [cx, dw],
                      [conv_np(cx, dw, None, (2, 2), (1, 1, 0, 1), 4)],
                      group=4, strides=[2, 2], auto_pad="SAME_LOWER"))
    # A stride larger than the padded input is legal when the kernel fits: one output along that
    # dimension (ONNX: floor((in + pads - k) / s) + 1 = 1), whatever the stride (2^40 included).
    cases.append(case("tessel_conv_stride_beyond_padded_input", "Conv", 11, [cx, dw],
                      [conv_np(cx, dw, None, (7, 1), (0, 0, 0, 0), 4)], group=4, strides=[7, 1]))
    cases.append(case("tessel_conv_huge_stride", "Conv", 11, [cx, dw],
                      [conv_np(cx, dw, None, (1, 1 << 40), (1, 0, 0, 1), 4)], group=4, strides=[1, 1 << 40],
                      pads=[1, 0, 0, 1]))
    # The finding's layers: kernel 1, stride 2 on an input of height 1 (out = floor((1 - 1) / 2) + 1).
    h1 = f(1, 3, 1, 6)
    w1 = f(5, 3, 1, 1)
    b1 = f(5)
    cases.append(case("tessel_conv_k1_stride2_height1", "Conv", 11, [h1, w1, b1],
                      [conv_np(h1, w1, b1, (2, 2), (0, 0, 0, 0), 1)], strides=[2, 2]))
    for kind, op in (("max", "MaxPool"), ("avg", "AveragePool")):
        cases.append(case("tessel_%spool_k1_stride2_height1" % kind, op, 13, [h1],
                          [pool_np(h1, (1, 1), (2, 2), (0, 0, 0, 0), False, kind)],
                          kernel_shape=[1, 1], strides=[2, 2]))
        # ceil_mode: the second window would start past the padded input and is dropped
        cases.append(case("tessel_%spool_ceil_stride_beyond_padded_input" % kind, op, 13, [p6],
                          [pool_np(p6, (2, 3), (9, 8), (1, 0, 0, 1), True, kind)],
                          kernel_shape=[2, 3], strides=[9, 8], pads=[1, 0, 0, 1], ceil_mode=1))
    # Output rows whose windows lie wholly in the padding (finding conv-all-padding-no-tile: the
    # offloaded layer had "no tile fits the scratchpads"): x [1,1,1,4], pads [1,0,0,0], strides
    # [2,1]: the only output row is the bias alone; and x [1,3,2,3] with pads [2,2,2,0], strides
    # [3,2]: output row 0 and column 0 read only padding.
    pz, wz, bz = f(1, 1, 1, 4), f(1, 1, 1, 1), f(1)
    cases.append(case("tessel_conv_window_wholly_in_padding", "Conv", 11, [pz, wz, bz],
                      [conv_np(pz, wz, bz, (2, 1), (1, 0, 0, 0), 1)], strides=[2, 1], pads=[1, 0, 0, 0]))
    ps, ws, bs2 = f(1, 3, 2, 3), f(4, 3, 1, 1), f(4)
    cases.append(case("tessel_conv_some_windows_in_padding", "Conv", 11, [ps, ws, bs2],
                      [conv_np(ps, ws, bs2, (3, 2), (2, 2, 2, 0), 1)], strides=[3, 2], pads=[2, 2, 2, 0]))
    # The kernel must still fit the padded input.
    cases.append(case("tessel_conv_kernel_beyond_padded_input", "Conv", 11, [h1, f(5, 3, 2, 1)],
                      [np.zeros((1, 5, 0, 6), np.float32)],
                      expect_error="kernel 2x1 is larger than the padded input 1x6", strides=[2, 1]))
    # Gemm: C is required before opset 11, optional from 11.
    ga, gb, gc = f(3, 4), f(5, 4), f(5)
    cases.append(case("tessel_gemm_transB_alpha_no_c_opset11", "Gemm", 11, [ga, gb], [0.5 * ga @ gb.T],
                      transB=1, alpha=0.5))
    cases.append(case("tessel_gemm_no_c_opset9", "Gemm", 9, [ga, gb], [ga @ gb.T],
                      expect_error="has 2 inputs; Gemm at opset 9 needs at least 3", transB=1))
    cases.append(case("tessel_gemm_vector_c_beta_opset9", "Gemm", 9, [ga, gb, gc], [ga @ gb.T + 2 * gc],
                      transB=1, beta=2.0))
    # BatchNormalization: spatial exists at opset 7 only; momentum is accepted (training only).
    bx = f(2, 3, 2, 2)
    bs, bb, bm, bv = f(3), f(3), f(3), np.abs(f(3)) + 0.5
    bn = ((bx - bm.reshape(1, 3, 1, 1)) / np.sqrt(bv.reshape(1, 3, 1, 1) + 1e-3) * bs.reshape(1, 3, 1, 1)
          + bb.reshape(1, 3, 1, 1)).astype(np.float32)
    cases.append(case("tessel_batchnorm_spatial_opset7", "BatchNormalization", 7, [bx, bs, bb, bm, bv], [bn],
                      epsilon=1e-3, spatial=1, momentum=0.8))
    cases.append(case("tessel_batchnorm_opset9", "BatchNormalization", 9, [bx, bs, bb, bm, bv], [bn], epsilon=1e-3))
    cases.append(case("tessel_batchnorm_spatial_at_opset9", "BatchNormalization", 9, [bx, bs, bb, bm, bv], [bn],
                      expect_error="attribute 'spatial' is not defined by BatchNormalization at opset 9",
                      epsilon=1e-3, spatial=1))
    cases.append(case("tessel_batchnorm_per_activation_opset7", "BatchNormalization", 7, [bx, bs, bb, bm, bv], [bn],
                      expect_error="spatial 0 not supported (only 1)", epsilon=1e-3, spatial=0))
    # QuantizeLinear / DequantizeLinear: an omitted zero point is uint8 0; per-axis with a
    # negative axis (opset 13).
    qx = f(1, 3, 2) * 20
    qs = np.array(0.25, np.float32)
    cases.append(case("tessel_quantize_default_zero_point_opset10", "QuantizeLinear", 10, [qx, qs],
                      [quantize_np(qx, qs, 0, None, np.uint8)]))
    qsa = np.array([0.1, 0.2, 0.4], np.float32)
    qza = np.array([-3, 0, 5], np.int8)
    cases.append(case("tessel_quantize_axis_minus2_opset13", "QuantizeLinear", 13, [qx, qsa, qza],
                      [quantize_np(qx, qsa, qza, 1, np.int8)], axis=-2))
    dq = np.array([[[10, -20], [30, 127], [-128, 0]]], np.int8)
    cases.append(case("tessel_dequantize_axis_minus2_opset13", "DequantizeLinear", 13, [dq, qsa, qza],
                      [((dq.astype(np.float32) - qza.reshape(1, 3, 1)) * qsa.reshape(1, 3, 1)).astype(np.float32)],
                      axis=-2))
    cases.append(case("tessel_dequantize_per_axis_at_opset10", "DequantizeLinear", 10, [dq, qsa, qza],
                      [((dq.astype(np.float32) - qza.reshape(1, 3, 1)) * qsa.reshape(1, 3, 1)).astype(np.float32)],
                      expect_error="per-axis scales need opset 13"))
    # A non-finite initializer is an error naming it (the NaN/Inf weights).
    cases.append(case("tessel_conv_inf_weight", "Conv", 11, [cx, np.where(dw > 1.5, np.inf, dw).astype(np.float32)],
                      [conv_np(cx, dw, None, (1, 1), (0, 0, 0, 0), 4)],
                      expect_error="initializer 'x1' has the non-finite value inf", group=4))
    # A zero-sized weight dimension is a named error (the SIGSEGV).
    cases.append(case("tessel_conv_zero_output_channels", "Conv", 11, [cx, np.zeros((0, 4, 1, 1), np.float32)],
                      [np.zeros((1, 0, 6, 5), np.float32)],
                      expect_error="input 'x1' has shape [0,4,1,1]; tensors with a zero-sized dimension are not supported"))
    return cases


# ---------------------------------------------------------------- export

def tensor_json(name, a):
    a = np.asarray(a)
    return {"name": name, "dtype": str(a.dtype), "shape": list(a.shape),
            "data": [float(v) for v in a.astype(np.float64).ravel()]}


def same_definition_at(op, domain, old, new):
    """True when `op`'s definition at opset `new` is the one current at `old`."""
    try:
        return onnx.defs.get_schema(op, new, domain).since_version <= old
    except onnx.defs.SchemaError:
        return False


def export(name, m, inputs, outputs, expect_error, outdir):
    g = m.graph
    ops = [n.op_type for n in g.node]
    if not set(ops) <= TESSEL_OPS:
        return None  # uses an operator Tessel does not support (e.g. the Softmax '_expanded' forms)
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx") and o.version < 7 and all(
                same_definition_at(n.op_type, n.domain, o.version, 7) for n in g.node):
            o.version = 7
    opset = max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
    # numpy scalars (np.float32(2)) are 0-d tensors
    as_array = lambda a: np.asarray(a) if isinstance(a, (np.ndarray, np.generic)) else a
    inputs = [as_array(a) for a in inputs]
    outputs = [as_array(a) for a in outputs]
    graph_inputs = list(g.input)
    assert len(graph_inputs) == len(inputs), name
    keep = []
    tensors = all(isinstance(a, np.ndarray) for a in inputs)
    if tensors:
        # The first float32 input stays a graph input; every other one becomes an initializer.
        first_float = len(inputs) > 0 and inputs[0].dtype == np.float32
        for k, (vi, a) in enumerate(zip(graph_inputs, inputs)):
            if k == 0 and first_float:
                keep.append((vi, a))
            else:
                g.initializer.append(numpy_helper.from_array(a, vi.name))
        del g.input[:]
        for vi, a in keep:
            g.input.append(vi)
        if not keep:
            g.input.append(helper.make_tensor_value_info("tessel_unused", TensorProto.FLOAT, [1]))
            keep.append((None, np.zeros([1], np.float32)))
    path = os.path.join(outdir, name + ".onnx")
    with open(path, "wb") as fh:
        fh.write(m.SerializeToString())
    entry = {"name": name, "ops": ops, "opset": opset, "model": path,
             "inputs": [tensor_json(vi.name if vi is not None else "tessel_unused", a) for vi, a in keep]
             if tensors else None,
             "outputs": [tensor_json(vi.name, a) for vi, a in zip(g.output, outputs)]
             if all(isinstance(a, np.ndarray) for a in outputs) else None}
    if expect_error:
        entry["expect_error"] = expect_error
    return entry


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    entries, skipped = [], []
    for name, m, ins, outs in spec_cases():
        e = export(name, m, ins, outs, None, outdir)
        if e:
            e["source"] = "onnx"
            entries.append(e)
        else:
            skipped.append(name)
    for name, m, ins, outs, err in tessel_cases():
        e = export(name, m, ins, outs, err, outdir)
        e["source"] = "tessel"
        entries.append(e)
    with open(os.path.join(outdir, "manifest.json"), "w") as fh:
        json.dump({"onnx_version": onnx.__version__, "cases": entries, "skipped": skipped}, fh, separators=(",", ":"))
    print("exported %d cases (%d from the onnx specification, %d tessel edge cases) to %s; skipped %d spec cases "
          "that use operators Tessel does not support" % (
              len(entries), sum(e["source"] == "onnx" for e in entries), sum(e["source"] == "tessel" for e in entries),
              outdir, len(skipped)))


if __name__ == "__main__":
    main()
