#!/usr/bin/python3
"""Writes ResNet-18 v1 (torchvision-style basic blocks) as a float32 ONNX model (opset 13).

The network: conv1 7x7/2 (3->64) + BatchNormalization + Relu, MaxPool 3x3/2, four stages of two
basic blocks (64, 128, 256, 512 channels; the first block of stages 2-4 has stride 2 and a 1x1/2
downsample conv + BatchNormalization on the shortcut), GlobalAveragePool, Flatten, Gemm 512->1000.
Every Conv has no bias and is followed by a BatchNormalization node, as in the trained models.
Input "input" [1, 3, 224, 224] float32, output "logits" [1, 1000] float32.

Its convolutions are exactly the ResNet-18 v1 set of ../shared/reference/workloads.md (original
labels C1..C12, with C3 absent): C1 x1, C2 x4, C4 x1, C5 x1, C6 x3, C7 x1, C8 x1, C9 x3, C10 x1,
C11 x1, C12 x3.

Parameters are random but seeded (numpy PCG64, seed 20181), so the file is byte-identical on
every run: conv weights He-normal (std = sqrt(2 / fan_in)), BatchNormalization gamma uniform in
[0.8, 1.2] (uniform in [0.2, 0.5] on the last BatchNormalization of each residual branch, so the
residual sum stays in range through the eight blocks), beta normal(0, 0.05), running mean
normal(0, 0.05), running variance uniform in [0.8, 1.5], epsilon 1e-5; the FC weights normal with
std 1 / sqrt(512) and bias normal(0, 0.01).

Usage: gen_resnet18.py OUTPUT.onnx          writes the model (needs onnx and numpy; no torch)
       gen_resnet18.py --verify MODEL.onnx   checks MODEL.onnx: byte-identical to a fresh build
                                             (determinism), passes the ONNX checker, and its conv
                                             census (after ONNX shape inference) equals the
                                             workloads.md table below; exit 1 with the differences
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 20181
OPSET = 13


class Builder:
    def __init__(self, seed):
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.nodes = []
        self.inits = []

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def conv_bn(self, x, name, ic, oc, k, stride, pad, relu, residual_last=False):
        """Conv (no bias) + BatchNormalization (+ Relu); returns the output tensor name."""
        fan_in = ic * k * k
        w = self.rng.standard_normal((oc, ic, k, k)) * np.sqrt(2.0 / fan_in)
        self.const(name + ".weight", w.astype(np.float32))
        conv_out = name + ".conv_out"
        self.nodes.append(helper.make_node(
            "Conv", [x, name + ".weight"], [conv_out], name=name,
            kernel_shape=[k, k], strides=[stride, stride], pads=[pad, pad, pad, pad],
            dilations=[1, 1], group=1))
        lo, hi = (0.2, 0.5) if residual_last else (0.8, 1.2)
        gamma = self.rng.uniform(lo, hi, oc)
        beta = self.rng.normal(0.0, 0.05, oc)
        mean = self.rng.normal(0.0, 0.05, oc)
        var = self.rng.uniform(0.8, 1.5, oc)
        bn = name + ".bn"
        for suffix, arr in (("scale", gamma), ("bias", beta), ("mean", mean), ("var", var)):
            self.const(f"{bn}.{suffix}", arr.astype(np.float32))
        bn_out = bn + "_out"
        self.nodes.append(helper.make_node(
            "BatchNormalization",
            [conv_out, bn + ".scale", bn + ".bias", bn + ".mean", bn + ".var"], [bn_out],
            name=bn, epsilon=1e-5, momentum=0.9))
        if not relu:
            return bn_out
        out = name + ".relu_out"
        self.nodes.append(helper.make_node("Relu", [bn_out], [out], name=name + ".relu"))
        return out

    def basic_block(self, x, name, ic, oc, stride):
        y = self.conv_bn(x, name + ".conv1", ic, oc, 3, stride, 1, relu=True)
        y = self.conv_bn(y, name + ".conv2", oc, oc, 3, 1, 1, relu=False, residual_last=True)
        shortcut = x
        if stride != 1 or ic != oc:
            shortcut = self.conv_bn(x, name + ".downsample", ic, oc, 1, stride, 0, relu=False)
        s = name + ".add_out"
        self.nodes.append(helper.make_node("Add", [y, shortcut], [s], name=name + ".add"))
        out = name + ".relu_out"
        self.nodes.append(helper.make_node("Relu", [s], [out], name=name + ".relu"))
        return out


def build_model():
    b = Builder(SEED)
    x = b.conv_bn("input", "conv1", 3, 64, 7, 2, 3, relu=True)
    pooled = "maxpool_out"
    b.nodes.append(helper.make_node("MaxPool", [x], [pooled], name="maxpool",
                                    kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x = pooled
    ic = 64
    for stage, oc in enumerate((64, 128, 256, 512), start=1):
        for block in range(2):
            stride = 2 if (stage > 1 and block == 0) else 1
            x = b.basic_block(x, f"layer{stage}.{block}", ic, oc, stride)
            ic = oc
    b.nodes.append(helper.make_node("GlobalAveragePool", [x], ["avgpool_out"], name="avgpool"))
    b.nodes.append(helper.make_node("Flatten", ["avgpool_out"], ["flatten_out"], name="flatten",
                                    axis=1))
    fc_w = b.rng.standard_normal((1000, 512)) / np.sqrt(512.0)
    fc_b = b.rng.normal(0.0, 0.01, 1000)
    b.const("fc.weight", fc_w.astype(np.float32))
    b.const("fc.bias", fc_b.astype(np.float32))
    b.nodes.append(helper.make_node("Gemm", ["flatten_out", "fc.weight", "fc.bias"], ["logits"],
                                    name="fc", alpha=1.0, beta=1.0, transB=1))
    graph = helper.make_graph(
        b.nodes, "resnet18_v1",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])],
        initializer=b.inits)
    model = helper.make_model(graph, producer_name="tessel-bench-gen_resnet18",
                              producer_version="1",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 7  # the IR version of opset 13 (ONNX 1.8)
    model.doc_string = ("ResNet-18 v1, torchvision-style basic blocks, seeded random weights "
                        f"(seed {SEED}); generated by tessel bench/gen_resnet18.py")
    onnx.checker.check_model(model)
    return model


# ResNet-18 v1 rows of ../shared/reference/workloads.md, written out independently of the builder
# above: label -> (H=W, IC, OC, K, pad, stride, out H=W, count in resnet18_v1).
WORKLOADS = {
    "C1": (224, 3, 64, 7, 3, 2, 112, 1),
    "C2": (56, 64, 64, 3, 1, 1, 56, 4),
    "C3": (56, 64, 64, 1, 0, 1, 56, 0),
    "C4": (56, 64, 128, 3, 1, 2, 28, 1),
    "C5": (56, 64, 128, 1, 0, 2, 28, 1),
    "C6": (28, 128, 128, 3, 1, 1, 28, 3),
    "C7": (28, 128, 256, 3, 1, 2, 14, 1),
    "C8": (28, 128, 256, 1, 0, 2, 14, 1),
    "C9": (14, 256, 256, 3, 1, 1, 14, 3),
    "C10": (14, 256, 512, 3, 1, 2, 7, 1),
    "C11": (14, 256, 512, 1, 0, 2, 7, 1),
    "C12": (7, 512, 512, 3, 1, 1, 7, 3),
}


def conv_census(model):
    """Counts the model's Conv nodes per (H, IC, OC, K, pad, stride, out H) after shape inference."""
    inferred = onnx.shape_inference.infer_shapes(model)
    shapes = {}
    for vi in list(inferred.graph.input) + list(inferred.graph.value_info) + list(
            inferred.graph.output):
        shapes[vi.name] = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    weights = {init.name: list(init.dims) for init in inferred.graph.initializer}
    census = {}
    for node in inferred.graph.node:
        if node.op_type != "Conv":
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        x, w, y = shapes[node.input[0]], weights[node.input[1]], shapes[node.output[0]]
        key = (x[2], x[1], w[0], w[2], attrs["pads"][0], attrs["strides"][0], y[2])
        census[key] = census.get(key, 0) + 1
    return census


def verify(path):
    errors = []
    with open(path, "rb") as f:
        on_disk = f.read()
    fresh = build_model().SerializeToString(deterministic=True)
    if on_disk != fresh:
        errors.append(f"{path}: {len(on_disk)} bytes differ from a fresh build ({len(fresh)} bytes)")
    try:
        model = onnx.load_from_string(on_disk)
        onnx.checker.check_model(model)
    except Exception as e:  # DecodeError, ValidationError: report, do not trace back
        errors.append(f"{path}: not a valid ONNX model ({type(e).__name__}: {e})")
        for err in errors:
            sys.stderr.write("error: " + err + "\n")
        return 1
    census = conv_census(model)
    expected = {row[:7]: row[7] for row in WORKLOADS.values() if row[7] > 0}
    for key in sorted(set(census) | set(expected)):
        if census.get(key, 0) != expected.get(key, 0):
            errors.append(f"conv (H, IC, OC, K, pad, stride, outH) = {key}: "
                          f"{census.get(key, 0)} in the model, {expected.get(key, 0)} expected")
    for e in errors:
        sys.stderr.write("error: " + e + "\n")
    if not errors:
        print(f"{path}: deterministic, {sum(census.values())} convs matching workloads.md "
              f"C1..C12 counts")
    return 1 if errors else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--verify":
        return verify(argv[2])
    if len(argv) != 2 or argv[1].startswith("-"):
        sys.stderr.write("usage: gen_resnet18.py OUTPUT.onnx | gen_resnet18.py --verify MODEL.onnx\n")
        return 2
    model = build_model()
    data = model.SerializeToString(deterministic=True)
    with open(argv[1], "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
