// Shared operator rules of the ONNX dialect: 2-D window geometry (Conv, MaxPool, AveragePool,
// including auto_pad and ceil_mode) with the range checks of every window attribute, numpy
// broadcasting, axis normalisation by opset, the output shapes of the shape-manipulating
// operators (Reshape, Flatten, Squeeze, Unsqueeze, Concat, Gather, Shape) and of Conv, Gemm and
// MatMul, and the stated tensor size bound. Shape inference, the float reference interpreter
// and the quantisation passes all call these, so they agree on every output size and every
// attribute's meaning; none of them allocates tensor data.
//
// Every function throws UserError naming the node (ir::describe) and the attribute or input
// with its value when the node's attributes or input shapes are invalid or not supported; all
// size arithmetic is overflow-checked (support/checked.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace tessel::compiler::ir {

/// Geometry of a 2-D sliding window over an NCHW input. Pads are [top, left, bottom, right];
/// all sizes in elements.
struct Window2d {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t oh = 0, ow = 0;
};

/// Computes and range-checks the window of node `n` (a Conv / QLinearConv, or a MaxPool /
/// AveragePool) over an input of ih x iw (both >= 1). The kernel is `kh` x `kw` (a Conv's
/// weights; kernel_shape, when given, must equal it) or, for pools, kernel_shape (required).
/// Rules, each an error naming the node, the attribute and the value:
///  - kernel_shape, strides: 2 values (2-D only), each >= 1;
///  - auto_pad: NOTSET (explicit pads), SAME_UPPER / SAME_LOWER (output = ceil(in / stride),
///    the odd pad at the end / the beginning) or VALID (no padding); with SAME_* no pads
///    attribute may be given, with VALID only zero pads;
///  - pads: 4 values, each >= 0; for pools each must be smaller than the kernel (ONNX Runtime's
///    rule: otherwise a window can lie entirely in the padding);
///  - the kernel must fit the padded input (input + both pads, overflow-checked); a stride
///    larger than the padded input of its dimension is legal (one output along it) and is
///    returned clamped to that padded extent (the same single window);
///  - ceil_mode (pools): 0 or 1.
/// Output sizes come from runtime::cpu::window_output_size (ONNX's rule, ceil_mode's dropped
/// last window included), the one implementation shared with the CPU kernels.
Window2d window_2d(const Node& n, int64_t ih, int64_t iw, int64_t kh, int64_t kw);

/// The geometry of a Conv (or QLinearConv) with input `x` [N,C,H,W] and weights `w`
/// [OC,C/group,KH,KW]: the window, `group` and the output shape [N,OC,OH,OW]. Checks both
/// ranks (only 2-D convolution), positive sizes (a zero-sized weight dimension is an error naming
/// the weights), group >= 1 dividing C and OC with C/group = w's second dimension, and the window.
struct ConvGeometry {
  Window2d win;
  int64_t groups = 1;
  std::vector<int64_t> out;
};
ConvGeometry conv_geometry(const Node& n, const std::vector<int64_t>& x, const std::vector<int64_t>& w);

/// Output shape of ONNX MatMul (numpy.matmul): A [..., M, K] x B [..., K, N] -> [..., M, N] with
/// the batch dimensions broadcast; a 1-D A is [1, K] and a 1-D B [K, 1], the added dimension
/// removed from the result. Errors for scalars, differing K or batch dimensions that do not
/// broadcast.
std::vector<int64_t> matmul_shape(const Node& n, const std::vector<int64_t>& a, const std::vector<int64_t>& b);

/// Output shape [M, N] of Gemm with 2-D A and B (transA / transB attributes applied); an optional
/// C (`c`, nullptr when absent) must broadcast to [M, N] (unidirectionally).
std::vector<int64_t> gemm_shape(const Node& n, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                const std::vector<int64_t>* c);

/// numpy broadcast of two shapes (runtime::cpu::broadcast_shapes, the rule the CPU kernels
/// apply); throws UserError naming the node and the mismatching dimension if they are incompatible.
std::vector<int64_t> broadcast_shapes(const Node& n, const std::vector<int64_t>& a,
                                      const std::vector<int64_t>& b);

/// Normalises a possibly negative axis for a tensor of rank `rank`: accepts -rank..rank-1, or
/// -rank..rank when `inclusive` (Flatten's axis); a negative axis counts from the end
/// (axis + rank). Throws UserError naming the node when out of range.
int64_t normalize_axis(const Node& n, int64_t axis, int64_t rank, bool inclusive = false);

/// Normalises `axis` of `n` as ONNX defines it at `opset`: as normalize_axis(), but a negative
/// value is an error when the operator does not accept it at that opset (Flatten, Softmax,
/// Concat, Squeeze and Unsqueeze accept negative axes from opset 11, Gather from its first
/// version). `what` names the attribute or input in messages ("axis", "axes").
int64_t onnx_axis(const Node& n, int64_t opset, const std::string& what, int64_t axis, int64_t rank,
                  bool inclusive = false);

/// The axis attribute of Softmax at `opset` for a rank-`rank` input, normalised (default 1 before
/// opset 13, where the input is coerced to 2-D at the axis, and -1 from 13).
int64_t softmax_axis(const Node& n, int64_t opset, int64_t rank);

/// Output shape of Reshape of `in` to `target` (the shape input's values): 0 copies the input's
/// dimension (unless `allowzero`, Reshape-14's attribute, when it is a literal 0), one -1 is
/// inferred; the element count must be preserved.
std::vector<int64_t> reshape_shape(const Node& n, const std::vector<int64_t>& in,
                                   const std::vector<int64_t>& target, bool allowzero);

/// Output shape of Flatten at `opset` (axis attribute, default 1, range [-r, r]; negative from
/// opset 11): [prod(in[0:axis]), prod(in[axis:])].
std::vector<int64_t> flatten_shape(const Node& n, int64_t opset, const std::vector<int64_t>& in);

/// The axes of Squeeze / Unsqueeze at `opset`: the `axes` attribute before opset 13, the second
/// input from 13 (`axes_input`: its values when given, nullptr when omitted). nullopt when the
/// node has no axes.
std::optional<std::vector<int64_t>> squeeze_axes(const Node& n, int64_t opset,
                                                 const std::vector<int64_t>* axes_input);

/// Output shape of Squeeze: the listed axes (each of size 1, no duplicates) removed, or every
/// dimension of size 1 when `axes` is nullopt. An empty axes list is an error (ONNX and ONNX
/// Runtime disagree on its meaning).
std::vector<int64_t> squeeze_shape(const Node& n, int64_t opset, const std::vector<int64_t>& in,
                                   const std::optional<std::vector<int64_t>>& axes);

/// Output shape of Unsqueeze: dimensions of size 1 inserted at `axes` (required, non-empty,
/// axes of the output, no duplicates).
std::vector<int64_t> unsqueeze_shape(const Node& n, int64_t opset, const std::vector<int64_t>& in,
                                     const std::optional<std::vector<int64_t>>& axes);

/// Output shape of Concat of `ins` (at least one; equal ranks >= 1; equal dimensions except on
/// the axis) along its axis attribute (required), and that axis normalised in `*axis_out` when
/// not null.
std::vector<int64_t> concat_shape(const Node& n, int64_t opset, const std::vector<std::vector<int64_t>>& ins,
                                  int64_t* axis_out = nullptr);

/// Output shape of Gather of `data` (rank >= 1) with indices of shape `indices` along its axis
/// attribute (default 0): data[:axis] + indices + data[axis+1:].
std::vector<int64_t> gather_shape(const Node& n, int64_t opset, const std::vector<int64_t>& data,
                                  const std::vector<int64_t>& indices);

/// The dimensions [start, end) of a rank-`rank` input that Shape returns at `opset` (start / end
/// attributes from opset 15, negative ones counting from the end, clamped to [0, rank]).
std::pair<int64_t, int64_t> shape_range(const Node& n, int64_t opset, int64_t rank);

/// Bytes of a tensor of `shape` and `dtype` (overflow-checked). Throws UserError
/// "<what> has shape [..], N bytes as <dtype>, more than the 1073741824-byte limit on one tensor"
/// when it exceeds runtime::kMaxTensorBytes; `what` names the tensor ("node 'c' (Conv): output
/// 'y'", "initializer 'w'").
int64_t bounded_tensor_bytes(const std::vector<int64_t>& shape, DType dtype, const std::string& what);

/// True when `shape` has a zero-sized dimension.
bool has_zero_dim(const std::vector<int64_t>& shape);

/// The one value of the constant `v`, input `what` of node `n` (e.g. "min (input 1)", "x_scale
/// (input 1)"), for inputs ONNX defines as scalars or per-tensor values. Throws UserError naming
/// the node, the input and its shape when the constant does not hold exactly one element (an
/// empty [0] tensor must never be read past its end).
float const_scalar_f32(const Graph& g, int v, const Node& n, const std::string& what);
/// As const_scalar_f32, for integer constants (zero points).
int64_t const_scalar_i64(const Graph& g, int v, const Node& n, const std::string& what);

/// The ONNX type string of a Tessel element type ("tensor(float)", "tensor(int64)", ...).
std::string onnx_type_str(DType t);

/// Checks node `n`'s inputs against its ONNX type constraints (Node::input_types): each input's
/// type is one its formal parameter allows, and inputs that share a type parameter (Gemm's A, B
/// and C are all "T") have one type. Only inputs for which `known(i)` is true are checked (the
/// importer knows the types of constants and graph inputs; shape inference, of every input).
/// Tessel reads FLOAT, UINT8, INT8, INT32 and INT64, so an error lists the allowed types among
/// those. Throws UserError naming the node, the input (index, formal name, value) and both types.
void check_input_types(const Graph& g, const Node& n, const std::function<bool(size_t)>& known);

}  // namespace tessel::compiler::ir
