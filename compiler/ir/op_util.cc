#include "compiler/ir/op_util.h"

#include <fmt/format.h>

#include "runtime/cpu/kernels.h"
#include "support/error.h"

namespace tessel::compiler::ir {

Window2d window_2d(const Node& n, int64_t ih, int64_t iw, int64_t kh, int64_t kw) {
  Window2d w;
  const auto ks = attr_ints(n, "kernel_shape", {kh, kw});
  if (ks.size() != 2) throw_unsupported(n, fmt::format("kernel_shape [{}] not supported (only 2-D)", fmt::join(ks, ",")));
  w.kh = ks[0];
  w.kw = ks[1];
  const auto st = attr_ints(n, "strides", {1, 1});
  if (st.size() != 2) throw_unsupported(n, fmt::format("strides [{}] not supported (only 2-D)", fmt::join(st, ",")));
  w.sh = st[0];
  w.sw = st[1];
  if (w.kh < 1 || w.kw < 1 || w.sh < 1 || w.sw < 1)
    throw_unsupported(n, fmt::format("kernel [{},{}] / strides [{},{}] must be positive", w.kh, w.kw, w.sh, w.sw));
  const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  const bool ceil_mode = attr_int(n, "ceil_mode", 0) != 0;
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    auto same = [&](int64_t in, int64_t k, int64_t s, int64_t& begin, int64_t& end, int64_t& out) {
      out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + k - in);
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    };
    same(ih, w.kh, w.sh, w.pad_top, w.pad_bottom, w.oh);
    same(iw, w.kw, w.sw, w.pad_left, w.pad_right, w.ow);
    return w;
  }
  if (auto_pad == "NOTSET") {
    const auto p = attr_ints(n, "pads", {0, 0, 0, 0});
    if (p.size() != 4) throw_unsupported(n, fmt::format("pads [{}] not supported (need 4 values)", fmt::join(p, ",")));
    for (int64_t x : p)
      if (x < 0) throw_unsupported(n, fmt::format("negative pads [{}] not supported", fmt::join(p, ",")));
    w.pad_top = p[0];
    w.pad_left = p[1];
    w.pad_bottom = p[2];
    w.pad_right = p[3];
  }
  auto out = [&](int64_t in, int64_t pb, int64_t pe, int64_t k, int64_t s) -> int64_t {
    const int64_t span = in + pb + pe - k;
    if (span < 0) return 0;
    return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  };
  w.oh = out(ih, w.pad_top, w.pad_bottom, w.kh, w.sh);
  w.ow = out(iw, w.pad_left, w.pad_right, w.kw, w.sw);
  if (w.oh < 1 || w.ow < 1)
    throw_unsupported(n, fmt::format("window {}x{} does not fit the padded input {}x{} (pads [{},{},{},{}])", w.kh,
                                     w.kw, ih, iw, w.pad_top, w.pad_left, w.pad_bottom, w.pad_right));
  return w;
}

std::vector<int64_t> broadcast_shapes(const Node& n, const std::vector<int64_t>& a,
                                      const std::vector<int64_t>& b) {
  try {
    return runtime::cpu::broadcast_shapes(a, b);
  } catch (const UserError& e) {
    throw_unsupported(n, e.what());
  }
}

int64_t normalize_axis(const Node& n, int64_t axis, int64_t rank, bool inclusive) {
  const int64_t hi = inclusive ? rank : rank - 1;
  const int64_t lo = inclusive ? -rank - 1 : -rank;
  if (axis < lo || axis > hi) throw_unsupported(n, fmt::format("axis {} out of range for rank {}", axis, rank));
  return axis < 0 ? axis + (inclusive ? rank + 1 : rank) : axis;
}

}  // namespace tessel::compiler::ir
