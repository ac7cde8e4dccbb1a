#include "runtime/cpu/kernel_util.h"

#include <cmath>

#include "support/checked.h"
#include "support/text.h"

namespace tessel::runtime::cpu::detail {

std::string where(const Step& step) { return fmt::format("step {} ({})", support::quote(step.name), step.op); }

void fail(const KernelCall& call, const std::string& message) {
  throw UserError(fmt::format("{}: {}", where(*call.step), message));
}

void check_arity(const KernelCall& call, int n_in, int n_out, int min_in) {
  const size_t ni = call.inputs.size(), no = call.outputs.size();
  if (n_in >= 0 && ni != static_cast<size_t>(n_in)) {
    fail(call, fmt::format("expects {} inputs, got {}", n_in, ni));
  }
  if (n_in < 0 && ni < static_cast<size_t>(min_in)) {
    fail(call, fmt::format("expects at least {} inputs, got {}", min_in, ni));
  }
  if (no != static_cast<size_t>(n_out)) {
    fail(call, fmt::format("expects {} outputs, got {}", n_out, no));
  }
  for (size_t i = 0; i < ni; ++i) {
    if (call.inputs[i].desc == nullptr || call.inputs[i].data == nullptr) {
      fail(call, fmt::format("input {} is not bound to data", i));
    }
  }
  for (size_t i = 0; i < no; ++i) {
    if (call.outputs[i].desc == nullptr || call.outputs[i].data == nullptr) {
      fail(call, fmt::format("output {} is not bound to data", i));
    }
  }
}

void check_tensor(const KernelCall& call, const TensorDesc& d, std::string_view role, DType dtype,
                  int rank, bool plain_layout) {
  if (d.dtype != dtype) {
    fail(call, fmt::format("{} {} has dtype {}, expected {}", role, support::quote(d.name), to_string(d.dtype),
                           to_string(dtype)));
  }
  if (rank >= 0 && d.shape.size() != static_cast<size_t>(rank)) {
    fail(call, fmt::format("{} {} has {} dimensions, expected {}", role, support::quote(d.name), d.shape.size(),
                           rank));
  }
  for (int64_t v : d.shape) {
    if (v < 0) fail(call, fmt::format("{} {} has a negative dimension {}", role, support::quote(d.name), v));
  }
  if (plain_layout && d.layout != Layout::kNCHW) {
    fail(call, fmt::format("{} {} is in NCHWnc layout, expected NCHW", role, support::quote(d.name)));
  }
}

void check_scale(const KernelCall& call, const TensorDesc& d, std::string_view role) {
  if (!std::isfinite(d.quant.scale) || d.quant.scale <= 0.0f) {
    fail(call, fmt::format("{} {} has scale {}, expected a finite positive value", role, support::quote(d.name),
                           d.quant.scale));
  }
  if (d.quant.zero_point < -128 || d.quant.zero_point > 127) {
    fail(call, fmt::format("{} {} has zero point {}, outside the int8 range [-128, 127]", role,
                           support::quote(d.name), d.quant.zero_point));
  }
}

void check_same_shape(const KernelCall& call, const TensorDesc& a, std::string_view ra,
                      const TensorDesc& b, std::string_view rb) {
  if (a.shape != b.shape) {
    fail(call, fmt::format("{} shape [{}] differs from {} shape [{}]", ra,
                           fmt::join(a.shape, ", "), rb, fmt::join(b.shape, ", ")));
  }
}

namespace {
const nlohmann::json* find_attr(const Step& step, const std::string& key) {
  if (!step.attrs.is_object()) {
    throw UserError(fmt::format("{}: attrs must be a JSON object, got {}", where(step),
                                step.attrs.dump()));
  }
  auto it = step.attrs.find(key);
  return it == step.attrs.end() ? nullptr : &*it;
}
}  // namespace

int64_t attr_int(const Step& step, const std::string& key, const int64_t* dflt) {
  const nlohmann::json* j = find_attr(step, key);
  if (j == nullptr) {
    if (dflt) return *dflt;
    throw UserError(fmt::format("{}: missing attribute {}", where(step), support::quote(key)));
  }
  if (!j->is_number_integer()) {
    throw UserError(fmt::format("{}: attribute {} must be an integer, got {}", where(step), support::quote(key),
                                j->dump()));
  }
  return j->get<int64_t>();
}

std::optional<double> attr_finite_number(const Step& step, const std::string& key) {
  const nlohmann::json* j = find_attr(step, key);
  if (j == nullptr) return std::nullopt;
  if (!j->is_number() || !std::isfinite(j->get<double>())) {
    throw UserError(fmt::format("{}: attribute {} must be a finite number, got {}", where(step), support::quote(key),
                                j->dump()));
  }
  return j->get<double>();
}

bool attr_bool(const Step& step, const std::string& key, bool dflt) {
  const nlohmann::json* j = find_attr(step, key);
  if (j == nullptr) return dflt;
  if (j->is_boolean()) return j->get<bool>();
  if (j->is_number_integer() && (j->get<int64_t>() == 0 || j->get<int64_t>() == 1)) {
    return j->get<int64_t>() == 1;
  }
  throw UserError(fmt::format("{}: attribute {} must be a boolean, got {}", where(step), support::quote(key),
                              j->dump()));
}

std::vector<int64_t> attr_ints(const Step& step, const std::string& key, size_t n,
                               const std::vector<int64_t>* dflt) {
  const nlohmann::json* j = find_attr(step, key);
  if (j == nullptr) {
    if (dflt) return *dflt;
    throw UserError(fmt::format("{}: missing attribute {}", where(step), support::quote(key)));
  }
  bool ok = j->is_array() && j->size() == n;
  if (ok) {
    for (const auto& e : *j) ok = ok && e.is_number_integer();
  }
  if (!ok) {
    throw UserError(fmt::format("{}: attribute {} must be a list of {} integers, got {}",
                                where(step), support::quote(key), n, j->dump()));
  }
  std::vector<int64_t> v;
  for (const auto& e : *j) v.push_back(e.get<int64_t>());
  return v;
}

std::vector<int64_t> broadcast_shape(const KernelCall& call, const std::vector<int64_t>& a,
                                     const std::vector<int64_t>& b) {
  try {
    return broadcast_shapes(a, b);
  } catch (const UserError& e) {
    fail(call, e.what());
  }
}

std::vector<int64_t> broadcast_offsets(const std::vector<int64_t>& in,
                                       const std::vector<int64_t>& out) {
  const size_t r = out.size();
  std::vector<int64_t> stride(r, 0);
  int64_t s = 1;
  for (size_t k = 0; k < in.size(); ++k) {
    const size_t i = in.size() - 1 - k;   // input dim
    const size_t o = r - 1 - k;           // output dim
    stride[o] = in[i] == 1 ? 0 : s;
    s *= in[i];
  }
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  std::vector<int64_t> offsets(static_cast<size_t>(total));
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  for (int64_t e = 0; e < total; ++e) {
    offsets[static_cast<size_t>(e)] = off;
    for (size_t d = r; d-- > 0;) {
      ++idx[d];
      off += stride[d];
      if (idx[d] < out[d]) break;
      off -= stride[d] * idx[d];
      idx[d] = 0;
    }
  }
  return offsets;
}

PoolGeom pool_geom(const KernelCall& call, bool avg) {
  const Step& st = *call.step;
  const TensorDesc& x = *call.inputs[0].desc;
  const TensorDesc& y = *call.outputs[0].desc;
  PoolGeom g;
  g.n = x.shape[0];
  g.c = x.shape[1];
  g.ih = x.shape[2];
  g.iw = x.shape[3];
  const auto k = attr_ints(st, "kernel", 2, nullptr);
  const std::vector<int64_t> one{1, 1}, zero{0, 0, 0, 0};
  const auto s = attr_ints(st, "stride", 2, &one);
  const auto p = attr_ints(st, "pads", 4, &zero);
  const bool ceil_mode = attr_bool(st, "ceil_mode", false);
  g.kh = k[0];
  g.kw = k[1];
  g.sh = s[0];
  g.sw = s[1];
  g.pt = p[0];
  g.pl = p[1];
  g.pb = p[2];
  g.pr = p[3];
  if (g.kh < 1 || g.kw < 1) fail(call, fmt::format("kernel [{}, {}] must be positive", g.kh, g.kw));
  if (g.sh < 1 || g.sw < 1) fail(call, fmt::format("stride [{}, {}] must be positive", g.sh, g.sw));
  for (int64_t v : p) {
    if (v < 0) fail(call, fmt::format("pads [{}] must be non-negative", fmt::join(p, ", ")));
  }
  if (g.pt >= g.kh || g.pb >= g.kh || g.pl >= g.kw || g.pr >= g.kw) {
    fail(call, fmt::format("pads [{}] must be smaller than the kernel [{}, {}]",
                           fmt::join(p, ", "), g.kh, g.kw));
  }
  if (g.ih < 1 || g.iw < 1) {
    fail(call, fmt::format("input {} has an empty spatial extent [{}, {}]", support::quote(x.name), g.ih, g.iw));
  }
  // Pads are smaller than the kernel (checked above), so the padded extent cannot overflow.
  g.oh = window_output_size(g.ih, g.pt, g.pb, g.kh, g.sh, ceil_mode);
  g.ow = window_output_size(g.iw, g.pl, g.pr, g.kw, g.sw, ceil_mode);
  if (g.oh < 1 || g.ow < 1) {
    fail(call, fmt::format("kernel [{}, {}] is larger than the padded input [{}, {}]", g.kh, g.kw,
                           g.ih + g.pt + g.pb, g.iw + g.pl + g.pr));
  }
  if (avg) g.count_include_pad = attr_bool(st, "count_include_pad", false);
  const std::vector<int64_t> expect{g.n, g.c, g.oh, g.ow};
  if (y.shape != expect) {
    fail(call, fmt::format("output {} has shape [{}], the pool gives [{}]", support::quote(y.name),
                           fmt::join(y.shape, ", "), fmt::join(expect, ", ")));
  }
  return g;
}

}  // namespace tessel::runtime::cpu::detail

namespace tessel::runtime::cpu {

int64_t window_output_size(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t kernel,
                           int64_t stride, bool ceil_mode) {
  if (in < 1 || pad_begin < 0 || pad_end < 0 || kernel < 1 || stride < 1) {
    throw UserError(fmt::format("window: input {}, pads [{}, {}], kernel {} and stride {} must be "
                                "positive (pads non-negative)",
                                in, pad_begin, pad_end, kernel, stride));
  }
  const int64_t begin = support::checked_add(in, pad_begin, "window: padded input");
  const int64_t padded = support::checked_add(begin, pad_end, "window: padded input");
  if (padded < kernel) return 0;
  const int64_t span = padded - kernel;
  if (!ceil_mode) return span / stride + 1;
  int64_t out = span / stride + (span % stride != 0 ? 1 : 0) + 1;
  // The last window starts at (out - 1) * stride (relative to the padded start); ONNX drops it
  // when that is at or after `begin`, i.e. when out - 1 >= ceil(begin / stride).
  if (out - 1 >= (begin - 1) / stride + 1) --out;
  return out;
}

std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw UserError(fmt::format("shapes [{}] and [{}] cannot be broadcast (dimension {}: {} vs {})",
                                  fmt::join(a, ", "), fmt::join(b, ", "), i, da, db));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace tessel::runtime::cpu
