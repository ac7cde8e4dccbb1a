// Shared operator helpers of the ONNX dialect: 2-D window geometry (Conv, MaxPool, AveragePool,
// including auto_pad), numpy broadcasting, and axis normalisation. Used by shape inference, the
// reference interpreter and the quantisation passes so they agree on every output size.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/ir/graph.h"

namespace tessel::compiler::ir {

/// Geometry of a 2-D sliding window over an NCHW input. Pads are [top, left, bottom, right].
struct Window2d {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t oh = 0, ow = 0;
};

/// Computes the window of node `n` (attributes kernel_shape, strides, pads, auto_pad, ceil_mode)
/// over an input of ih x iw, with the kernel size taken from `kh`/`kw` when kernel_shape is
/// absent (Conv reads it from the weights). ONNX rules: explicit pads, or SAME_UPPER /
/// SAME_LOWER (output = ceil(in / stride), the odd pad at the end / the beginning), or VALID;
/// out = floor((in + pads - k) / s) + 1, or ceil(...) + 1 with ceil_mode = 1.
/// Throws UserError naming the node for non-positive strides/kernels, negative pads, or an
/// empty output.
Window2d window_2d(const Node& n, int64_t ih, int64_t iw, int64_t kh, int64_t kw);

/// numpy broadcast of two shapes (runtime::cpu::broadcast_shapes, the rule the CPU kernels
/// apply); throws UserError naming the node and the mismatching dimension if they are incompatible.
std::vector<int64_t> broadcast_shapes(const Node& n, const std::vector<int64_t>& a,
                                      const std::vector<int64_t>& b);

/// Normalises a possibly negative axis for a tensor of rank `rank` (accepting -rank..rank-1, or
/// up to rank when `inclusive`); throws UserError naming the node when out of range.
int64_t normalize_axis(const Node& n, int64_t axis, int64_t rank, bool inclusive = false);

}  // namespace tessel::compiler::ir
