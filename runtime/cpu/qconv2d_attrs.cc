// Parsing and validation of qconv2d step attributes and parameters (the integer convolution
// itself is in qconv2d.cc).
#include <algorithm>

#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/kernels.h"
#include "support/checked.h"
#include "support/text.h"

namespace tessel::runtime::cpu {

using namespace detail;

Requant parse_requant(const nlohmann::json& j, int64_t oc, std::string_view where) {
  if (!j.is_object()) {
    throw UserError(fmt::format("{}: attribute 'requant' must be an object, got {}", where,
                                j.dump()));
  }
  auto get_int = [&](const char* key, int64_t dflt, bool required) -> int64_t {
    auto it = j.find(key);
    if (it == j.end()) {
      if (required) throw UserError(fmt::format("{}: requant is missing {}", where, support::quote(key)));
      return dflt;
    }
    if (!it->is_number_integer()) {
      throw UserError(fmt::format("{}: requant {} must be an integer, got {}", where, support::quote(key),
                                  it->dump()));
    }
    return it->get<int64_t>();
  };
  // a per-channel list: 1 or oc int32 values; `what` names it in the error
  auto list_of = [&](const nlohmann::json& node, const std::string& what) -> std::vector<int32_t> {
    bool ok = node.is_array() && (node.size() == 1 || static_cast<int64_t>(node.size()) == oc);
    if (ok) {
      for (const auto& e : node) {
        ok = ok && e.is_number_integer() && e.get<int64_t>() >= INT32_MIN &&
             e.get<int64_t>() <= INT32_MAX;
      }
    }
    if (!ok) {
      throw UserError(fmt::format("{}: requant {} must be a list of 1 or {} int32 values, got {}",
                                  where, what, oc, node.dump()));
    }
    std::vector<int32_t> v;
    for (const auto& e : node) v.push_back(static_cast<int32_t>(e.get<int64_t>()));
    return v;
  };
  auto get_list = [&](const char* key) -> std::vector<int32_t> {
    auto it = j.find(key);
    if (it == j.end()) throw UserError(fmt::format("{}: requant is missing {}", where, support::quote(key)));
    return list_of(*it, support::quote(key));
  };
  Requant rq;
  // pre_shift (a rounding shift before the multiplier) was removed: it rounded twice. Accept 0
  // (what it meant when absent) and reject anything else instead of silently ignoring it.
  if (const int64_t pre = get_int("pre_shift", 0, false); pre != 0) {
    throw UserError(fmt::format("{}: requant pre_shift {} is not supported (a pre-shift rounds twice); "
                                "recompile the model",
                                where, pre));
  }
  auto get_list_or = [&](const char* key, int32_t dflt) {
    return j.contains(key) ? get_list(key) : std::vector<int32_t>{dflt};
  };
  rq.acc_offset = get_list_or("acc_offset", 0);
  rq.acc_min = get_list_or("acc_min", INT32_MIN);
  rq.acc_max = get_list_or("acc_max", INT32_MAX);
  rq.multiplier = get_list("multiplier");
  rq.shift = get_list("shift");
  for (int32_t s : rq.shift) {
    if (s < 0 || s > 31) {
      throw UserError(fmt::format("{}: requant shift {} is outside [0, 31]", where, s));
    }
  }
  // the low limbs (runtime/qnn.h): both lists or neither, one list of 1 or oc int32 per limb
  if (j.contains("low_multiplier") != j.contains("low_shift")) {
    throw UserError(fmt::format("{}: requant has {} without {}", where,
                                support::quote(j.contains("low_multiplier") ? "low_multiplier" : "low_shift"),
                                support::quote(j.contains("low_multiplier") ? "low_shift" : "low_multiplier")));
  }
  for (const char* key : {"low_multiplier", "low_shift"}) {
    if (!j.contains(key)) continue;
    const auto& limbs = j.at(key);
    if (!limbs.is_array() || limbs.size() > kMaxLowLimbs) {
      throw UserError(fmt::format("{}: requant {} must be a list of at most {} limbs, got {}", where,
                                  support::quote(key), kMaxLowLimbs, limbs.dump()));
    }
    std::vector<std::vector<int32_t>> v;
    for (size_t i = 0; i < limbs.size(); ++i) v.push_back(list_of(limbs[i], fmt::format("{} limb {}", support::quote(key), i)));
    (std::string(key) == "low_multiplier" ? rq.low_multiplier : rq.low_shift) = std::move(v);
  }
  const int64_t zp = get_int("out_zero_point", 0, true);
  const int64_t lo = get_int("clip_lo", -128, false), hi = get_int("clip_hi", 127, false);
  if (zp < -128 || zp > 127) {
    throw UserError(fmt::format("{}: requant out_zero_point {} is outside [-128, 127]", where, zp));
  }
  if (lo < -128 || hi > 127 || lo > hi) {
    throw UserError(fmt::format(
        "{}: requant clip range [{}, {}] must satisfy -128 <= clip_lo <= clip_hi <= 127", where,
        lo, hi));
  }
  rq.out_zero_point = static_cast<int32_t>(zp);
  rq.clip_lo = static_cast<int32_t>(lo);
  rq.clip_hi = static_cast<int32_t>(hi);
  if (const std::string problem = requant_problem(rq, oc); !problem.empty()) {
    throw UserError(fmt::format("{}: {}", where, problem));
  }
  return rq;
}

QConv2dParams parse_qconv2d(const Step& step, const TensorDesc& x, const TensorDesc& w,
                            const TensorDesc& y) {
  const std::string at = where(step);
  auto fail_here = [&](const std::string& msg) { throw UserError(fmt::format("{}: {}", at, msg)); };
  if (x.shape.size() != 4 || w.shape.size() != 4 || y.shape.size() != 4) {
    fail_here(fmt::format("x, w and y must be 4-D, got {}, {} and {} dimensions", x.shape.size(),
                          w.shape.size(), y.shape.size()));
  }
  const std::vector<int64_t> one{1, 1}, zero{0, 0, 0, 0};
  const int64_t g1 = 1, z0 = 0;
  const auto s = attr_ints(step, "stride", 2, &one);
  const auto pads = attr_ints(step, "pads", 4, &zero);
  QConv2dParams p;
  p.groups = attr_int(step, "groups", &g1);
  const int64_t izp = attr_int(step, "in_zero_point", &z0);
  if (!step.attrs.contains("requant")) fail_here("missing attribute 'requant'");
  p.n = x.shape[0];
  p.ic = x.shape[1];
  p.ih = x.shape[2];
  p.iw = x.shape[3];
  p.oc = w.shape[0];
  p.kh = w.shape[2];
  p.kw = w.shape[3];
  p.stride_h = s[0];
  p.stride_w = s[1];
  p.pad_top = pads[0];
  p.pad_left = pads[1];
  p.pad_bottom = pads[2];
  p.pad_right = pads[3];
  if (izp < -128 || izp > 127) fail_here(fmt::format("in_zero_point {} is outside [-128, 127]", izp));
  p.in_zero_point = static_cast<int32_t>(izp);
  if (p.stride_h < 1 || p.stride_w < 1) {
    fail_here(fmt::format("stride [{}, {}] must be positive", p.stride_h, p.stride_w));
  }
  for (int64_t v : pads) {
    if (v < 0) fail_here(fmt::format("pads [{}] must be non-negative", fmt::join(pads, ", ")));
  }
  if (p.n < 1 || p.ic < 1 || p.ih < 1 || p.iw < 1 || p.oc < 1 || p.kh < 1 || p.kw < 1) {
    fail_here(fmt::format("x [{}] and w [{}] must have positive dimensions",
                          fmt::join(x.shape, ", "), fmt::join(w.shape, ", ")));
  }
  if (p.groups < 1 || p.ic % p.groups != 0 || p.oc % p.groups != 0) {
    fail_here(fmt::format("groups {} must divide input channels {} and output channels {}",
                          p.groups, p.ic, p.oc));
  }
  if (w.shape[1] != p.ic / p.groups) {
    fail_here(fmt::format("weights {} have {} input channels per group, expected {} ({} / {} "
                          "groups)",
                          support::quote(w.name), w.shape[1], p.ic / p.groups, p.ic, p.groups));
  }
  int64_t oh = 0, ow = 0;
  try {
    oh = window_output_size(p.ih, p.pad_top, p.pad_bottom, p.kh, p.stride_h, false);
    ow = window_output_size(p.iw, p.pad_left, p.pad_right, p.kw, p.stride_w, false);
  } catch (const UserError& e) {
    fail_here(e.what());
  }
  if (oh < 1 || ow < 1) {
    fail_here(fmt::format("kernel [{}, {}] is larger than the padded input (pads [{}])", p.kh, p.kw,
                          fmt::join(pads, ", ")));
  }
  const std::vector<int64_t> expect{p.n, p.oc, oh, ow};
  if (y.shape != expect) {
    fail_here(fmt::format("output {} has shape [{}], the convolution gives [{}]", support::quote(y.name),
                          fmt::join(y.shape, ", "), fmt::join(expect, ", ")));
  }
  p.rq = parse_requant(step.attrs["requant"], p.oc, at);
  int64_t scratch = 0;
  try {
    scratch = qconv_scratch(p).bytes;
  } catch (const UserError& e) {
    fail_here(e.what());
  }
  if (scratch > kMaxTensorBytes) {
    fail_here(fmt::format("the cpu convolution needs {} bytes of working memory, more than the "
                          "{}-byte limit (runtime::kMaxTensorBytes)",
                          scratch, kMaxTensorBytes));
  }
  return p;
}

namespace detail {

namespace {
/// The padded extent in + a + b, or -1 when it overflows int64.
int64_t padded_extent(int64_t in, int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(in, a, &r) || __builtin_add_overflow(r, b, &r)) return -1;
  return r;
}
}  // namespace

void check_qconv2d_params(const QConv2dParams& p) {
  const bool positive = p.n >= 1 && p.ic >= 1 && p.ih >= 1 && p.iw >= 1 && p.oc >= 1 && p.kh >= 1 &&
                        p.kw >= 1 && p.stride_h >= 1 && p.stride_w >= 1 && p.pad_top >= 0 &&
                        p.pad_left >= 0 && p.pad_bottom >= 0 && p.pad_right >= 0 && p.groups >= 1;
  if (!positive || p.ic % p.groups != 0 || p.oc % p.groups != 0 ||
      padded_extent(p.ih, p.pad_top, p.pad_bottom) < p.kh ||
      padded_extent(p.iw, p.pad_left, p.pad_right) < p.kw) {
    throw UserError(fmt::format(
        "qconv2d: invalid parameters n={} ic={} ih={} iw={} oc={} kh={} kw={} stride=[{}, {}] "
        "pads=[{}, {}, {}, {}] groups={}",
        p.n, p.ic, p.ih, p.iw, p.oc, p.kh, p.kw, p.stride_h, p.stride_w, p.pad_top, p.pad_left,
        p.pad_bottom, p.pad_right, p.groups));
  }
  if (const std::string problem = requant_problem(p.rq, p.oc); !problem.empty()) {
    throw UserError(fmt::format("qconv2d: {}", problem));
  }
  const int64_t bytes = qconv_scratch(p).bytes;
  if (bytes > kMaxTensorBytes) {
    throw UserError(fmt::format("qconv2d: working memory of {} bytes exceeds the {}-byte limit "
                                "(runtime::kMaxTensorBytes)",
                                bytes, kMaxTensorBytes));
  }
}

QConvScratch qconv_scratch(const QConv2dParams& p) {
  const char* what = "qconv2d: working memory";
  using support::checked_add;
  using support::checked_mul;
  auto ceil_div = [](int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); };
  auto round_up = [&](int64_t a, int64_t m) { return checked_mul(ceil_div(a, m), m, what); };
  QConvScratch s;
  const int64_t icg = p.ic / p.groups;
  const int64_t ph = checked_add(checked_add(p.ih, p.pad_top, what), p.pad_bottom, what);
  const int64_t pw = checked_add(checked_add(p.iw, p.pad_left, what), p.pad_right, what);
  s.ph2 = ceil_div(ph, p.stride_h);
  s.pw2 = ceil_div(pw, p.stride_w);
  s.plane = checked_mul(s.ph2, s.pw2, what);
  s.chan = checked_mul(checked_mul(s.plane, p.stride_h, what), p.stride_w, what);
  const int64_t oh = (ph - p.kh) / p.stride_h + 1;
  // Tile rows so that one channel's accumulators stay around kQConvTileElems.
  s.tile_rows = std::clamp<int64_t>(kQConvTileElems / s.pw2, 1, oh);
  s.tile = round_up(checked_mul(s.tile_rows, s.pw2, what), kQConvRunAlign);
  // Slack: rows stay inside a phase plane for every kept output, but the discarded columns
  // ((kw-1)/sw past a row) and the rounding of runs up to kQConvRunAlign may read past the end
  // of the last plane; those reads land in this zeroed tail.
  const int64_t slack = checked_add(checked_add(checked_mul(2, s.pw2, what), p.kw, what),
                                    2 * kQConvRunAlign, what);
  s.pad_elems = checked_add(checked_mul(icg, s.chan, what), slack, what);
  s.acc_elems = checked_mul(4, s.tile, what);
  s.taps = checked_mul(checked_mul(icg, p.kh, what), p.kw, what);
  s.weight_elems = checked_mul(p.oc, s.taps, what);
  int64_t b = checked_mul(s.pad_elems, 2, what);
  b = checked_add(b, checked_mul(s.acc_elems, 4, what), what);
  b = checked_add(b, checked_mul(s.weight_elems, 4, what), what);
  b = checked_add(b, checked_mul(s.taps, 8, what), what);
  s.bytes = b;
  return s;
}

}  // namespace detail

int64_t qconv2d_scratch_bytes(const QConv2dParams& p) { return detail::qconv_scratch(p).bytes; }

}  // namespace tessel::runtime::cpu
