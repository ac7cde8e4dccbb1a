// Parsing and validation of qconv2d step attributes and parameters (the integer convolution
// itself is in qconv2d.cc).
#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/kernels.h"

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
      if (required) throw UserError(fmt::format("{}: requant is missing '{}'", where, key));
      return dflt;
    }
    if (!it->is_number_integer()) {
      throw UserError(fmt::format("{}: requant '{}' must be an integer, got {}", where, key,
                                  it->dump()));
    }
    return it->get<int64_t>();
  };
  auto get_list = [&](const char* key) -> std::vector<int32_t> {
    auto it = j.find(key);
    if (it == j.end()) throw UserError(fmt::format("{}: requant is missing '{}'", where, key));
    bool ok = it->is_array() && (it->size() == 1 || static_cast<int64_t>(it->size()) == oc);
    if (ok) {
      for (const auto& e : *it) {
        ok = ok && e.is_number_integer() && e.get<int64_t>() >= INT32_MIN &&
             e.get<int64_t>() <= INT32_MAX;
      }
    }
    if (!ok) {
      throw UserError(fmt::format("{}: requant '{}' must be a list of 1 or {} int32 values, got {}",
                                  where, key, oc, it->dump()));
    }
    std::vector<int32_t> v;
    for (const auto& e : *it) v.push_back(static_cast<int32_t>(e.get<int64_t>()));
    return v;
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
    fail_here(fmt::format("weights '{}' have {} input channels per group, expected {} ({} / {} "
                          "groups)",
                          w.name, w.shape[1], p.ic / p.groups, p.ic, p.groups));
  }
  if (p.ih + p.pad_top + p.pad_bottom < p.kh || p.iw + p.pad_left + p.pad_right < p.kw) {
    fail_here(fmt::format("kernel [{}, {}] is larger than the padded input [{}, {}]", p.kh, p.kw,
                          p.ih + p.pad_top + p.pad_bottom, p.iw + p.pad_left + p.pad_right));
  }
  const std::vector<int64_t> expect{p.n, p.oc, p.oh(), p.ow()};
  if (y.shape != expect) {
    fail_here(fmt::format("output '{}' has shape [{}], the convolution gives [{}]", y.name,
                          fmt::join(y.shape, ", "), fmt::join(expect, ", ")));
  }
  p.rq = parse_requant(step.attrs["requant"], p.oc, at);
  return p;
}

namespace detail {

void check_qconv2d_params(const QConv2dParams& p) {
  if (p.n < 1 || p.ic < 1 || p.ih < 1 || p.iw < 1 || p.oc < 1 || p.kh < 1 || p.kw < 1 ||
      p.stride_h < 1 || p.stride_w < 1 || p.pad_top < 0 || p.pad_left < 0 || p.pad_bottom < 0 ||
      p.pad_right < 0 || p.groups < 1 || p.ic % p.groups != 0 || p.oc % p.groups != 0 ||
      p.ih + p.pad_top + p.pad_bottom < p.kh || p.iw + p.pad_left + p.pad_right < p.kw) {
    throw UserError(fmt::format(
        "qconv2d: invalid parameters n={} ic={} ih={} iw={} oc={} kh={} kw={} stride=[{}, {}] "
        "pads=[{}, {}, {}, {}] groups={}",
        p.n, p.ic, p.ih, p.iw, p.oc, p.kh, p.kw, p.stride_h, p.stride_w, p.pad_top, p.pad_left,
        p.pad_bottom, p.pad_right, p.groups));
  }
  if (const std::string problem = requant_problem(p.rq, p.oc); !problem.empty()) {
    throw UserError(fmt::format("qconv2d: {}", problem));
  }
}

}  // namespace detail

}  // namespace tessel::runtime::cpu
