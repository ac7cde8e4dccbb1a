// Fuzz target: the tensor-file readers (support/npy.h: .npy and raw binaries, file-name specs,
// --shape text) and the command line's model-input matching (tools/inputs.h).
//
// Input layout: byte 0 holds flags, then up to two '\n'-terminated lines, then the file's bytes.
//   bit 0  the file is a raw binary whose name is line 1 (characters other than [A-Za-z0-9._-]
//          become '_'; an empty line gives "input.bin"); otherwise it is "input.npy"
//   bit 1  --nhwc
//   bit 2  the next line is --shape text (support::parse_shape)
//   bit 3  read as calibration samples (tools::load_calibration) instead of one run input
//   bits 4-6  the model input's shape, from kExpected below
// Properties: every read ends in a tensor or a named error; a tensor read from a .npy file has
// data.size() == num_elements(shape), and encode_npy_f32() of it decodes to the same shape and
// the same bits.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "support/npy.h"
#include "tools/inputs.h"

namespace {

const std::vector<int64_t> kExpected[8] = {
    {1, 1, 28, 28}, {1, 3, 32, 32}, {1, 1, 49, 10}, {1, 3, 2, 2},
    {2, 3},         {1},            {1, 2, 2, 3},   {4, 1, 2, 2},
};

// Takes one line (up to '\n', which is consumed) off the front of [p, end).
std::string take_line(const uint8_t*& p, const uint8_t* end) {
  const uint8_t* nl = static_cast<const uint8_t*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
  const uint8_t* stop = nl ? nl : end;
  std::string line(reinterpret_cast<const char*>(p), static_cast<size_t>(stop - p));
  p = nl ? nl + 1 : end;
  return line;
}

std::string file_name(std::string line) {
  if (line.size() > 96) line.resize(96);
  for (char& c : line) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (line.empty() || line == "." || line == "..") return "input.bin";
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  constexpr const char* kTarget = "inputs";
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const uint8_t* p = data + 1;
  const uint8_t* end = data + size;
  const bool raw = flags & 1, nhwc = flags & 2, has_shape = flags & 4, calibration = flags & 8;
  const std::vector<int64_t>& expected = kExpected[(flags >> 4) & 7];
  const std::string name = raw ? file_name(take_line(p, end)) : "input.npy";
  const std::string shape_text = has_shape ? take_line(p, end) : std::string();

  if (!raw) {
    const std::vector<uint8_t> bytes(p, end);
    support::FloatTensor t;
    if (fuzz::expect_clean(kTarget, [&] { t = support::decode_npy(bytes, "input.npy"); })) {
      support::FloatTensor back;
      const bool ok = fuzz::expect_clean(kTarget, [&] {
        if (support::num_elements(t.shape) != static_cast<int64_t>(t.data.size()))
          fuzz::fail(kTarget, "decode_npy gave a tensor whose data size differs from its shape");
        back = support::decode_npy(support::encode_npy_f32(t.shape, t.data), "re-encoded");
      });
      if (!ok) fuzz::fail(kTarget, "encode_npy_f32 of a decoded tensor does not decode");
      if (back.shape != t.shape || back.data.size() != t.data.size() ||
          (!t.data.empty() && std::memcmp(back.data.data(), t.data.data(), t.data.size() * 4) != 0))
        fuzz::fail(kTarget, "decode_npy(encode_npy_f32(t)) differs from t");
    }
  }

  const std::string path = fuzz::scratch_path(name);
  fuzz::write_scratch(kTarget, path, p, static_cast<size_t>(end - p));
  fuzz::expect_clean(kTarget, [&] {
    std::optional<std::vector<int64_t>> shape;
    if (has_shape) shape = support::parse_shape(shape_text);
    if (calibration) {
      (void)tools::load_calibration({path}, expected, "input", nhwc);
    } else {
      const runtime::HostTensor h = tools::load_input(path, shape, expected, "input", nhwc);
      if (h.bytes.size() != static_cast<size_t>(support::num_elements(expected)) * 4)
        fuzz::fail(kTarget, "load_input returned a tensor whose size differs from the model input's");
    }
  });
  std::remove(path.c_str());
  return 0;
}
