#include "tools/inputs.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "support/error.h"
#include "support/file_read.h"
#include "support/text.h"

namespace tessel::tools {
namespace {

std::vector<int64_t> squeeze(const std::vector<int64_t>& s) {
  std::vector<int64_t> out;
  for (int64_t d : s) {
    if (d != 1) out.push_back(d);
  }
  return out;
}

std::vector<float> nhwc_to_nchw(const std::vector<float>& in, const std::vector<int64_t>& nhwc) {
  const int64_t n = nhwc[0], h = nhwc[1], w = nhwc[2], c = nhwc[3];
  std::vector<float> out(in.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t ch = 0; ch < c; ++ch)
          out[((b * c + ch) * h + y) * w + x] = in[((b * h + y) * w + x) * c + ch];
  return out;
}

bool is_nhwc_of(const std::vector<int64_t>& file, const std::vector<int64_t>& nchw) {
  return file.size() == 4 && nchw.size() == 4 && file[0] == nchw[0] && file[1] == nchw[2] &&
         file[2] == nchw[3] && file[3] == nchw[1];
}

// Rejects NaN and infinite values: they would propagate silently through quantisation.
void check_finite(const support::FloatTensor& t, const std::string& path, const char* what) {
  int64_t count = 0, first = -1;
  for (size_t i = 0; i < t.data.size(); ++i) {
    if (!std::isfinite(t.data[i])) {
      if (first < 0) first = static_cast<int64_t>(i);
      ++count;
    }
  }
  if (count > 0) {
    throw_user_error("{} {} holds {} non-finite value(s) (NaN or infinity); the first is element {} ({})", what,
                     support::quote(path), count, first, t.data[static_cast<size_t>(first)]);
  }
}

}  // namespace

bool same_squeezed(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  return squeeze(a) == squeeze(b);
}

runtime::HostTensor make_f32_tensor(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  TESSEL_CHECK(static_cast<int64_t>(values.size()) == support::num_elements(shape),
               "{} values for shape {}", values.size(), support::shape_to_string(shape));
  runtime::HostTensor t;
  t.dtype = runtime::DType::kF32;
  t.shape = shape;
  t.bytes.resize(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

std::vector<float> tensor_values(const runtime::HostTensor& t) {
  const size_t n = static_cast<size_t>(support::num_elements(t.shape));
  std::vector<float> v(n);
  const size_t eb = runtime::dtype_bytes(t.dtype);
  TESSEL_CHECK(t.bytes.size() == n * eb, "tensor of shape {} holds {} bytes, expected {}",
               support::shape_to_string(t.shape), t.bytes.size(), n * eb);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = t.bytes.data() + i * eb;
    switch (t.dtype) {
      case runtime::DType::kF32: {
        float f;
        std::memcpy(&f, p, 4);
        v[i] = f;
        break;
      }
      case runtime::DType::kI8: v[i] = static_cast<float>(static_cast<int8_t>(p[0])); break;
      case runtime::DType::kI32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        v[i] = static_cast<float>(x);
        break;
      }
      case runtime::DType::kI64: {
        int64_t x;
        std::memcpy(&x, p, 8);
        v[i] = static_cast<float>(x);
        break;
      }
    }
  }
  return v;
}

runtime::HostTensor to_model_input(const support::FloatTensor& t, const std::vector<int64_t>& expected,
                                   const std::string& input_name, const std::string& path, bool nhwc) {
  using support::num_elements;
  using support::shape_to_string;
  if (nhwc) {
    if (!is_nhwc_of(t.shape, expected)) {
      std::string want;
      if (expected.size() == 4) {
        want = fmt::format(": expected {} (N, H, W, C)",
                           shape_to_string({expected[0], expected[2], expected[3], expected[1]}));
      }
      throw_user_error("{} has shape {} which is not the NHWC form of input {} {} (--nhwc given){}",
                       support::quote(path), shape_to_string(t.shape), support::quote(input_name), shape_to_string(expected), want);
    }
    return make_f32_tensor(expected, nhwc_to_nchw(t.data, t.shape));
  }
  if (t.shape == expected || same_squeezed(t.shape, expected)) return make_f32_tensor(expected, t.data);
  if (is_nhwc_of(t.shape, expected)) {
    throw_user_error("{} has shape {} but input {} expects {} (NCHW); pass --nhwc to transpose "
                     "NHWC data",
                     support::quote(path), shape_to_string(t.shape), support::quote(input_name), shape_to_string(expected));
  }
  throw_user_error("{} has shape {} ({} elements) but input {} expects {} ({} elements)", support::quote(path),
                   shape_to_string(t.shape), num_elements(t.shape), support::quote(input_name),
                   shape_to_string(expected), num_elements(expected));
}

runtime::HostTensor load_input(const std::string& path, const std::optional<std::vector<int64_t>>& shape,
                               const std::vector<int64_t>& expected, const std::string& input_name,
                               bool nhwc) {
  const bool raw_unshaped = path.size() < 4 || path.compare(path.size() - 4, 4, ".npy") != 0;
  if (!shape && raw_unshaped && !support::spec_from_file_name(path)) {
    if (nhwc) {
      throw_user_error("{} is a raw binary without a shape, so --nhwc cannot tell its layout: pass --shape "
                       "N,H,W,C (e.g. --shape {}) or name it like x_f32_NxHxWxC.bin",
                       support::quote(path), expected.size() == 4 ? fmt::format("{},{},{},{}", expected[0], expected[2],
                                                                expected[3], expected[1])
                                                  : std::string("1,224,224,3"));
    }
    const support::FloatTensor t = support::read_raw(path, support::FileDType::kF32, expected);
    check_finite(t, path, "input");
    return to_model_input(t, expected, input_name, path, nhwc);
  }
  const support::FloatTensor t = support::read_tensor_file(path, shape);
  check_finite(t, path, "input");
  return to_model_input(t, expected, input_name, path, nhwc);
}

std::vector<std::vector<runtime::HostTensor>> load_calibration(const std::vector<std::string>& files,
                                                               const std::vector<int64_t>& expected,
                                                               const std::string& input_name,
                                                               bool nhwc) {
  using support::num_elements;
  using support::shape_to_string;
  std::vector<std::vector<runtime::HostTensor>> sets;
  const int64_t per = num_elements(expected);
  for (const std::string& path : files) {
    support::FloatTensor t;
    const bool npy = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    if (!npy && !support::spec_from_file_name(path)) {
      // Raw float32 without a shape: any whole number of samples.
      const std::vector<uint8_t> bytes = support::read_file_bounded(path, support::kMaxTensorFileBytes, "a calibration file");
      const int64_t per_bytes = per * 4;
      if (per_bytes == 0 || bytes.empty() || bytes.size() % per_bytes != 0) {
        throw_user_error("calibration file {} holds {} bytes, not a positive multiple of the {} bytes "
                         "of one float32 {} input",
                         path, bytes.size(), per_bytes, shape_to_string(expected));
      }
      std::vector<int64_t> s = expected;
      s[0] *= static_cast<int64_t>(bytes.size()) / per_bytes;
      t = support::read_raw(path, support::FileDType::kF32, s);
    } else {
      t = support::read_tensor_file(path);
    }
    check_finite(t, path, "calibration file");
    const int64_t have = static_cast<int64_t>(t.data.size());
    if (per == 0 || have == 0 || have % per != 0) {
      throw_user_error("calibration file {} has shape {} ({} elements), not a positive multiple of "
                       "input {} {} ({} elements)",
                       path, shape_to_string(t.shape), have, support::quote(input_name), shape_to_string(expected), per);
    }
    const int64_t k = have / per;
    if (k == 1) {
      sets.push_back({to_model_input(t, expected, input_name, path, nhwc)});
      continue;
    }
    // Split along the first dimension into k samples of the model's batch.
    if (t.shape.empty() || expected.empty() || t.shape[0] != k * expected[0]) {
      throw_user_error("calibration file {} has shape {}: {} elements are {} samples of {}, so its "
                       "first dimension must be {}",
                       path, shape_to_string(t.shape), have, k, shape_to_string(expected),
                       k * (expected.empty() ? 1 : expected[0]));
    }
    support::FloatTensor one;
    one.shape = t.shape;
    one.shape[0] = expected[0];
    one.source_dtype = t.source_dtype;
    for (int64_t i = 0; i < k; ++i) {
      one.data.assign(t.data.begin() + i * per, t.data.begin() + (i + 1) * per);
      sets.push_back({to_model_input(one, expected, input_name, path, nhwc)});
    }
  }
  return sets;
}

}  // namespace tessel::tools
