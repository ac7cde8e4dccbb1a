// Unit tests of the command line's building blocks: tensor files (support/npy.h), input matching,
// calibration splitting, labels, and the report arithmetic and JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "support/error.h"
#include "support/file_read.h"
#include "support/npy.h"
#include "tools/commands.h"
#include "tools/inputs.h"
#include "tools/labels.h"
#include "tools/report.h"

namespace tessel::tools {
namespace {

namespace fs = std::filesystem;
using support::FileDType;

std::string temp_path(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "tessel_tools_unit";
  fs::create_directories(dir);
  return (dir / name).string();
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  support::write_file_bytes(path, bytes);
}

std::vector<uint8_t> npy_with_header(const std::string& header_dict, const std::vector<uint8_t>& data) {
  std::string h = header_dict;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(h.size() & 0xff);
  bytes += static_cast<char>(h.size() >> 8);
  bytes += h;
  bytes.append(data.begin(), data.end());
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

template <typename Fn>
std::string user_error_of(Fn fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no UserError>";
}

TEST(Npy, EncodesTheFormatHeader) {
  const std::vector<uint8_t> b = support::encode_npy_f32({2, 3}, {1, 2, 3, 4, 5, 6});
  // 10-byte prefix + 59-byte dict + padding + '\n' = 128 (the next multiple of 64), then 24 data
  // bytes; the same bytes np.save writes for np.arange(1, 7, dtype=np.float32).reshape(2, 3).
  ASSERT_EQ(b.size(), 128u + 24u);
  EXPECT_EQ(b[8], 118);  // header length, little-endian
  EXPECT_EQ(b[9], 0);
  const std::string header(b.begin() + 10, b.begin() + 128);
  EXPECT_EQ(header.substr(0, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(header.find_first_not_of(' ', 59), 117u);
  EXPECT_EQ(header.back(), '\n');
  float f;
  std::memcpy(&f, b.data() + 128 + 4 * 5, 4);
  EXPECT_EQ(f, 6.0f);
}

TEST(Npy, OneDimensionalShapeIsAOneTuple) {
  const std::vector<uint8_t> b = support::encode_npy_f32({5}, {0, 0, 0, 0, 0});
  ASSERT_EQ(b.size(), 128u + 20u);  // 64-aligned header, then 5 floats
  const std::string header(b.begin() + 10, b.begin() + 128);
  EXPECT_NE(header.find("'shape': (5,), }"), std::string::npos);
}

TEST(Npy, RoundTrip) {
  const std::vector<float> v = {-1.5f, 0.0f, 3.25f, 1e-7f, 65504.0f, -0.0f};
  const support::FloatTensor t = support::decode_npy(support::encode_npy_f32({1, 2, 3}, v), "mem");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(t.data, v);
  EXPECT_EQ(t.source_dtype, FileDType::kF32);
}

TEST(Npy, ConvertsUint8AndInt8ByValue) {
  const auto u8 = support::decode_npy(
      npy_with_header("{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", {0, 128, 255}), "u8");
  EXPECT_EQ(u8.data, (std::vector<float>{0, 128, 255}));
  const auto i8 = support::decode_npy(
      npy_with_header("{'descr': '|i1', 'fortran_order': False, 'shape': (1, 3), }", {0, 128, 255}), "i8");
  EXPECT_EQ(i8.data, (std::vector<float>{0, -128, -1}));
  EXPECT_EQ(i8.shape, (std::vector<int64_t>{1, 3}));
}

TEST(Npy, BigEndianFloat) {
  const auto t = support::decode_npy(
      npy_with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", {0x3f, 0x80, 0, 0}), "be");
  EXPECT_EQ(t.data, (std::vector<float>{1.0f}));
}

TEST(Npy, ReadsTheBundledMlperfSample) {
  const support::FloatTensor t =
      support::read_npy(std::string(TESSEL_SOURCE_DIR) + "/data/mlperf-tiny/keyword_spotting_int8_6.npy");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 49, 10, 1}));
  EXPECT_EQ(t.source_dtype, FileDType::kI8);
  // The reference input is (int8 - 83) * 0.5847029 (data/reference/README.md).
  const support::FloatTensor ref = support::read_tensor_file(
      std::string(TESSEL_SOURCE_DIR) + "/data/reference/inputs/kws_sample6_f32_1x1x49x10.bin");
  ASSERT_EQ(ref.data.size(), t.data.size());
  for (size_t i = 0; i < t.data.size(); ++i) {
    EXPECT_NEAR(ref.data[i], (t.data[i] - 83.0f) * 0.5847029f, 1e-4f) << i;
  }
}

// Hostile review 3: a descr without the byte-order character is read as NumPy reads it, a finite
// float64 beyond float32's range is named as such (not as "non-finite"), and an element count
// that overflows names the file.
TEST(NpyErrors, DescrWithoutOrderRangeAndHugeShapes) {
  const auto u1 = support::decode_npy(npy_with_header("{'descr': 'u1', 'fortran_order': False, 'shape': (2,), }", {7, 250}),
                                      "u1.npy");
  EXPECT_EQ(u1.data, (std::vector<float>{7.0f, 250.0f}));
  std::vector<uint8_t> f64(16, 0);
  const double big = 1e300, one = 1.0;
  std::memcpy(f64.data(), &one, 8);
  std::memcpy(f64.data() + 8, &big, 8);
  EXPECT_EQ(user_error_of([&] {
              support::decode_npy(npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", f64),
                                  "big.npy");
            }),
            "'big.npy' element 1 is 1e+300, beyond float32's range (+-3.40282e+38); the model's tensors are float32");
  EXPECT_EQ(user_error_of([] {
              support::decode_npy(
                  npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", {}),
                  "huge.npy");
            }),
            "malformed .npy file 'huge.npy': shape [99999999999, 99999999999] has too many elements");
}

TEST(NpyErrors, MalformedFiles) {
  EXPECT_NE(user_error_of([] { support::decode_npy({1, 2, 3}, "x.npy"); }).find("malformed .npy file 'x.npy': missing"),
            std::string::npos);
  EXPECT_NE(user_error_of([] {
              support::decode_npy(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                                                  {0, 0, 0, 0}),
                                  "short.npy");
            }).find("shape [2] of <f4 needs 8 data bytes but the file has 4"),
            std::string::npos);
  EXPECT_NE(user_error_of([] {
              support::decode_npy(npy_with_header("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }",
                                                  {0, 0, 0, 0}),
                                  "i4.npy");
            }).find("unsupported .npy dtype '<i4'"),
            std::string::npos);
  EXPECT_NE(user_error_of([] {
              support::decode_npy(npy_with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }",
                                                  {0, 0, 0, 0}),
                                  "f.npy");
            }).find("fortran_order is True"),
            std::string::npos);
  EXPECT_NE(user_error_of([] {
              support::decode_npy(npy_with_header("{'descr': '<f4', 'shape': (1,), }", {0, 0, 0, 0}), "k.npy");
            }).find("lacks one of"),
            std::string::npos);
  EXPECT_NE(user_error_of([] {
              support::decode_npy(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1, x), }",
                                                  {0, 0, 0, 0}),
                                  "t.npy");
            }).find("expected a dimension"),
            std::string::npos);
}

// Issue 7 F9: the header is an ASCII Python literal padded with spaces and ended by one '\n',
// as NumPy's format specification says; NumPy rejects anything else, and so does Tessel.
TEST(NpyErrors, HeaderBytesFollowTheSpecification) {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
  const std::vector<uint8_t> data = {0, 0, 128, 63};
  EXPECT_EQ(support::decode_npy(npy_with_header(dict, data), "ok.npy").data, std::vector<float>{1.0f});
  // A NUL (or another control byte, or a non-ASCII byte) in the padding or inside the dict.
  for (const auto& [at, byte] : std::vector<std::pair<size_t, uint8_t>>{{62, 0x00}, {20, 0x00}, {62, 0x01},
                                                                         {63, 0x7f}, {62, 0xe9}, {62, '\t'}}) {
    std::vector<uint8_t> b = npy_with_header(dict, data);
    b[10 + at] = byte;
    EXPECT_NE(user_error_of([&] { support::decode_npy(b, "bad.npy"); })
                  .find(fmt::format("malformed .npy file 'bad.npy': header byte {} is 0x{:02x}, not printable ASCII",
                                    at, byte)),
              std::string::npos)
        << at << " " << int{byte};
  }
  // Not ended by a newline.
  std::vector<uint8_t> b = npy_with_header(dict, data);
  b[10 + 117] = ' ';  // the header's last byte (118 bytes: 57 of dict, spaces, newline)
  EXPECT_NE(user_error_of([&] { support::decode_npy(b, "nl.npy"); }).find("does not end with a newline"),
            std::string::npos);
  // Anything but spaces after the dict.
  EXPECT_NE(user_error_of([&] { support::decode_npy(npy_with_header(dict + " x", data), "tail.npy"); })
                .find("header byte 58 after the dict is 'x', not the space padding"),
            std::string::npos);
}

TEST(RawFiles, ShapeFromFileName) {
  auto s = support::spec_from_file_name("data/reference/inputs/imagenet_cat_f32_1x3x224x224.bin");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->dtype, FileDType::kF32);
  EXPECT_EQ(s->shape, (std::vector<int64_t>{1, 3, 224, 224}));
  s = support::spec_from_file_name("t10k_first16_u8_16x28x28.bin");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->dtype, FileDType::kU8);
  EXPECT_EQ(s->shape, (std::vector<int64_t>{16, 28, 28}));
  EXPECT_FALSE(support::spec_from_file_name("plain.bin"));
  EXPECT_FALSE(support::spec_from_file_name("x_f32_1x3.npy"));
  EXPECT_FALSE(support::spec_from_file_name("sample_v2_3.bin"));    // 'v2' is not dtype-like
  EXPECT_FALSE(support::spec_from_file_name("x_f32_final.bin"));    // no shape token
  // The pattern, malformed: an error, not a silent fallback to the model's shape.
  for (const char* bad : {"x_q7_1x3.bin", "x_f32_1x0.bin", "x_f32_0x28.bin", "x_f32_1xx28.bin",
                          "x_q7_1x1x28x28.bin", "x_f32_.bin"}) {
    EXPECT_THROW(support::spec_from_file_name(bad), UserError) << bad;
  }
  // Issue 7 F8: a sign, or anything but digits and 'x' after a known dtype, is malformed too.
  for (const char* bad : {"x_f32_-1x28x28.bin", "x_f32_+1x1x28x28.bin", "x_f32_1x-28.bin", "x_u8_1,2.bin",
                          "x_f32_1x28x28-.bin", "x_i8_2x+2.bin", "x_f32_1x28x28y.bin"}) {
    EXPECT_NE(user_error_of([&] { support::spec_from_file_name(bad); }).find("has no valid shape"), std::string::npos)
        << bad;
  }
}

TEST(RawFiles, ParseShape) {
  EXPECT_EQ(support::parse_shape("1,3,224,224"), (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(support::parse_shape("16x28x28"), (std::vector<int64_t>{16, 28, 28}));
  EXPECT_NE(user_error_of([] { support::parse_shape("1,,3"); }).find("bad shape '1,,3'"), std::string::npos);
  EXPECT_NE(user_error_of([] { support::parse_shape("1,-3"); }).find("'-3' is not a positive integer"),
            std::string::npos);
  EXPECT_NE(user_error_of([] { support::parse_shape("0,3"); }).find("dimension 0 is not positive"),
            std::string::npos);
}

// Issue 7 F3: a raw tensor is read only up to the bytes its shape needs: an endless file is an
// error after one byte too many, not a read until memory runs out.
TEST(RawFiles, EndlessFilesStopAtTheShapesSize) {
  EXPECT_NE(user_error_of([] { support::read_raw("/dev/zero", FileDType::kF32, {1, 1, 28, 28}); })
                .find("'/dev/zero' holds more than 3136 bytes, the limit for shape [1, 1, 28, 28] of f32"),
            std::string::npos);
  // A character device is read, not measured: /dev/null holds 0 bytes.
  EXPECT_NE(user_error_of([] { support::read_raw("/dev/null", FileDType::kU8, {4}); })
                .find("'/dev/null' holds 0 bytes but shape [4] of u8 needs 4 bytes"),
            std::string::npos);
  const std::string p = temp_path("long_f32_1x2.bin");
  write_bytes(p, std::vector<uint8_t>(12, 0));
  EXPECT_NE(user_error_of([&] { support::read_tensor_file(p); })
                .find("holds 12 bytes, more than 8 bytes, the limit for shape [1, 2] of f32"),
            std::string::npos);
}

TEST(RawFiles, SizeMismatchNamesBothSizes) {
  const std::string p = temp_path("bad_f32_1x1x28x28.bin");
  write_bytes(p, std::vector<uint8_t>(100, 0));
  EXPECT_NE(user_error_of([&] { support::read_tensor_file(p); })
                .find("holds 100 bytes but shape [1, 1, 28, 28] of f32 needs 3136 bytes"),
            std::string::npos);
  const std::string q = temp_path("noshape.bin");
  write_bytes(q, std::vector<uint8_t>(16, 0));
  EXPECT_NE(user_error_of([&] { support::read_tensor_file(q); }).find("raw binary without a shape"),
            std::string::npos);
  EXPECT_EQ(support::read_tensor_file(q, std::vector<int64_t>{2, 2}).data.size(), 4u);
}

TEST(Inputs, SqueezedShapesMatchAndNhwcIsTransposed) {
  support::FloatTensor t;
  t.shape = {1, 2, 2, 3};  // NHWC
  for (int i = 0; i < 12; ++i) t.data.push_back(static_cast<float>(i));
  const runtime::HostTensor h = to_model_input(t, {1, 3, 2, 2}, "x", "f.npy", /*nhwc=*/true);
  const std::vector<float> v = tensor_values(h);
  // NCHW[c][y][x] = NHWC[y][x][c] = (y*2 + x)*3 + c
  const std::vector<float> want = {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11};
  EXPECT_EQ(v, want);
  EXPECT_NE(user_error_of([&] { to_model_input(t, {1, 3, 2, 2}, "x", "f.npy", false); }).find("pass --nhwc"),
            std::string::npos);
  support::FloatTensor k;
  k.shape = {1, 49, 10, 1};
  k.data.assign(490, 0.5f);
  EXPECT_EQ(to_model_input(k, {1, 1, 49, 10}, "x", "k.npy", false).shape, (std::vector<int64_t>{1, 1, 49, 10}));
  EXPECT_NE(user_error_of([&] { to_model_input(k, {1, 1, 28, 28}, "Input3", "k.npy", false); })
                .find("'k.npy' has shape [1, 49, 10, 1] (490 elements) but input 'Input3' expects [1, 1, 28, 28] "
                      "(784 elements)"),
            std::string::npos);
}

TEST(Inputs, CalibrationFileIsSplitIntoSamples) {
  const auto sets = load_calibration(
      {std::string(TESSEL_SOURCE_DIR) + "/data/mnist/t10k_first16_u8_16x28x28.bin"}, {1, 1, 28, 28}, "Input3",
      false);
  ASSERT_EQ(sets.size(), 16u);
  for (const auto& s : sets) {
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].shape, (std::vector<int64_t>{1, 1, 28, 28}));
  }
  // Sample 1 must equal the staged float32 reference input of test image 1 (raw pixels 0..255).
  const support::FloatTensor ref = support::read_tensor_file(
      std::string(TESSEL_SOURCE_DIR) + "/data/reference/inputs/mnist_t10k_00001_f32_1x1x28x28.bin");
  EXPECT_EQ(tensor_values(sets[1][0]), ref.data);
  const std::string odd = temp_path("odd_u8_10x10.bin");
  write_bytes(odd, std::vector<uint8_t>(100, 1));
  EXPECT_NE(user_error_of([&] { load_calibration({odd}, {1, 1, 28, 28}, "Input3", false); })
                .find("not a positive multiple of input 'Input3' [1, 1, 28, 28] (784 elements)"),
            std::string::npos);
}

TEST(Labels, Defaults) {
  EXPECT_EQ(default_labels(10, {1, 1, 28, 28}, {})[7], "7");
  EXPECT_EQ(default_labels(10, {1, 3, 32, 32}, {})[8], "ship");
  EXPECT_EQ(default_labels(12, {1, 1, 49, 10}, {})[6], "right");
  EXPECT_EQ(default_labels(12, {1, 1, 49, 10}, {}).size(), 12u);
  EXPECT_TRUE(default_labels(10, {1, 5}, {}).empty());
  const auto imagenet = default_labels(1000, {1, 3, 224, 224},
                                       {"/nonexistent/x.txt",
                                        std::string(TESSEL_SOURCE_DIR) + "/data/imagenet/imagenet_classes.txt"});
  ASSERT_EQ(imagenet.size(), 1000u);
  EXPECT_EQ(imagenet[282], "tiger cat");
  EXPECT_EQ(imagenet[258], "Samoyed");
  EXPECT_TRUE(default_labels(1000, {1, 3, 224, 224}, {"/nonexistent/x.txt"}).empty());
}

// Issue 7 F11: the text report never prints inf, nan or a 300-digit number.
TEST(Report, NumbersAreFiniteAndShort) {
  EXPECT_EQ(report_number(12.345, 1), "12.3");
  EXPECT_EQ(report_number(0.5, 2), "0.50");
  EXPECT_EQ(report_number(std::numeric_limits<double>::infinity(), 1), "-");
  EXPECT_EQ(report_number(-std::numeric_limits<double>::infinity(), 2), "-");
  EXPECT_EQ(report_number(std::nan(""), 1), "-");
  EXPECT_EQ(report_number(1e300, 1), "1e+300");
  EXPECT_EQ(report_number(1.234567e15, 1), "1.23457e+15");
  EXPECT_EQ(report_number(999999999999.0, 1), "999999999999.0");
}

TEST(Report, TopKAndError) {
  const std::vector<float> v = {0.1f, 0.9f, 0.3f, 0.9f, -1.0f, 0.5f};
  EXPECT_EQ(top_k(v.data(), 6, 3), (std::vector<int64_t>{1, 3, 5}));
  EXPECT_EQ(top_k(v.data(), 6, 10).size(), 6u);
  // out - ref = {0, 1, -1}: noise 2, signal 1+4+9 = 14 -> 10*log10(7) = 8.4510 dB.
  const ErrorStats e = compute_error({1, 3, 2}, {1, 2, 3}, 3);
  EXPECT_DOUBLE_EQ(e.max_abs_error, 1.0);
  ASSERT_TRUE(e.snr_db);
  EXPECT_NEAR(*e.snr_db, 8.45098, 1e-4);
  EXPECT_FALSE(e.top1_agree);
  EXPECT_EQ(e.reference_top1, 2);
  const ErrorStats same = compute_error({1, 2, 3}, {1, 2, 3}, 3);
  EXPECT_FALSE(same.snr_db);
  EXPECT_TRUE(same.top1_agree);
}

// A NaN or infinity on either side makes the error NaN, never 0 / "identical".
TEST(Report, NonFiniteValuesGiveNanErrors) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const ErrorStats e = compute_error({1, nan, 3}, {1, 2, 3}, 3);
  EXPECT_TRUE(std::isnan(e.max_abs_error));
  ASSERT_TRUE(e.snr_db);
  EXPECT_TRUE(std::isnan(*e.snr_db));
  EXPECT_EQ(e.non_finite, 1);
  const ErrorStats r = compute_error({1, 2, 3}, {std::numeric_limits<float>::infinity(), nan, 3}, 3);
  EXPECT_EQ(r.non_finite, 2);
  EXPECT_TRUE(std::isnan(r.max_abs_error));
  // NaN ranks last in top-k.
  const std::vector<float> v = {nan, 0.5f, nan, 0.7f};
  EXPECT_EQ(top_k(v.data(), 4, 2), (std::vector<int64_t>{3, 1}));
  RunReport rep;
  rep.outputs.push_back(OutputReport{"y", {1, 3}, true, {}, e});
  const nlohmann::ordered_json j = to_json(rep);
  EXPECT_TRUE(j["outputs"][0]["error_vs_reference"]["max_abs_error"].is_null());
  EXPECT_EQ(j["outputs"][0]["error_vs_reference"]["non_finite"], 1);
  EXPECT_NE(render_text(rep).find("max abs error nan, SNR nan"), std::string::npos) << render_text(rep);
}

// On fsim, figures that need cycles are null, not 0 (docs/usage.md "Report JSON").
TEST(Report, FsimJsonHasNullCycles) {
  RunReport r;
  r.simulator = "fsim";
  LayerRow a;
  a.placement = "accel";
  r.layers = {a};
  nlohmann::ordered_json j = to_json(r);
  EXPECT_TRUE(j["layers"][0]["cycles"].is_null());
  EXPECT_TRUE(j["totals"]["cycles"].is_null());
  EXPECT_TRUE(j["totals"]["accel_us"].is_null());
  EXPECT_TRUE(j["sim_speed"]["cycles"].is_null());
  EXPECT_TRUE(j["outputs_match_fsim"].is_null());
  r.simulator = "cycle";
  r.layers[0].cycles = 12;
  j = to_json(r);
  EXPECT_EQ(j["layers"][0]["cycles"], 12);
  EXPECT_EQ(j["totals"]["cycles"], 0);
  EXPECT_EQ(j["outputs_match_fsim"], true);
}

TEST(Report, UtilisationSpeedupAndTotals) {
  // 256 MACs/uop: 1,024,000 MACs in 8,000 cycles = 50 %.
  EXPECT_DOUBLE_EQ(*gemm_utilisation(1024000, 8000, 256), 0.5);
  EXPECT_FALSE(gemm_utilisation(100, 0, 256));
  // 8,000 cycles at 100 MHz = 80 us; a 200 us CPU layer -> 2.5x.
  EXPECT_DOUBLE_EQ(*speedup(200e-6, 8000, 100.0), 2.5);
  RunReport r;
  r.clock_mhz = 100;
  r.macs_per_uop = 256;
  LayerRow a;
  a.placement = "accel";
  a.cycles = 8000;
  a.macs = 1024000;
  a.cpu_us = 200;
  a.dram_bytes = 10;
  LayerRow c;
  c.placement = "cpu";
  c.macs = 7;
  c.cpu_us = 5;
  r.layers = {a, c};
  r.totals.other_steps_us = 3;
  compute_totals(r);
  EXPECT_EQ(r.totals.accel_layers, 1);
  EXPECT_EQ(r.totals.cpu_layers, 1);
  EXPECT_EQ(r.totals.macs, 1024007);
  EXPECT_EQ(r.totals.dram_bytes, 10u);
  EXPECT_DOUBLE_EQ(*r.totals.speedup, 2.5);
  EXPECT_DOUBLE_EQ(r.totals.accel_us, 80.0);
  EXPECT_DOUBLE_EQ(r.totals.cpu_layers_us, 5.0);
  EXPECT_DOUBLE_EQ(r.totals.other_steps_us, 3.0);
}

TEST(Report, UserGivenStringsCannotBreakTheTextReport) {
  // ONNX output and layer names, labels and file names are the user's bytes: control bytes, NULs
  // and broken UTF-8 are escaped in the text report (hostile review, issue 7), never printed raw.
  RunReport r;
  r.simulator = "fsim";
  r.model = std::string("m\x1b[31m.onnx", 11);
  r.inputs = {std::string("in\0put.bin", 10)};
  r.outputs.push_back(OutputReport{std::string("\x01\x1b[31mRED\nfake line", 19), {1, 3}, true,
                                   {{2, 0.5f, "\x1b[31mL7\x07"}}, compute_error({1, 2, 3}, {1, 2, 3}, 3)});
  LayerRow l;
  l.placement = "cpu";
  l.name = std::string("a\0b\xff", 4);
  l.op = "conv\r";
  r.layers.push_back(l);
  const std::string text = render_text(r);
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(c == '\n' || (u >= 0x20 && u != 0x7f && u < 0x80)) << "raw byte " << int(u) << " in:\n" << text;
  }
  EXPECT_NE(text.find("model      m\\x1b[31m.onnx\n"), std::string::npos) << text;
  EXPECT_NE(text.find("input      in\\x00put.bin\n"), std::string::npos) << text;
  EXPECT_NE(text.find("output '\\x01\\x1b[31mRED\\x0afake line' 1x3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\\x1b[31mL7\\x07\n"), std::string::npos) << text;
  EXPECT_NE(text.find("a\\x00b\\xff"), std::string::npos) << text;
  EXPECT_NE(text.find("conv\\x0d"), std::string::npos) << text;
  EXPECT_EQ(text.find("fake line\n"), std::string::npos) << text;
}

TEST(Report, JsonKeysInDocumentedOrder) {
  RunReport r;
  r.model = "m.onnx";
  r.outputs.push_back(OutputReport{"y", {1, 3}, true, {{2, 0.5f, "c"}}, compute_error({1, 2, 3}, {1, 2, 3}, 3)});
  LayerRow l;
  l.placement = "cpu";
  r.layers.push_back(l);
  const nlohmann::ordered_json j = to_json(r);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"tessel_report_version", "model", "inputs", "simulator", "config",
                                            "clock_mhz", "macs_per_uop", "offload", "quantized_by_tessel", "requant_mode",
                                            "calibration", "executable", "reference_model", "compile_ms", "outputs_match_fsim", "cpu_cycles_source", "outputs",
                                            "layers", "totals", "sim_speed"}));
  EXPECT_TRUE(j["outputs"][0]["error_vs_reference"]["snr_db"].is_null());
  EXPECT_EQ(j["outputs"][0]["top"][0]["label"], "c");
  EXPECT_TRUE(j["layers"][0]["speedup"].is_null());
  EXPECT_EQ(j.dump(), to_json(r).dump());
}

TEST(Devices, DramSizeCoversEveryLoadedProgram) {
  isa::Program small;
  small.image.resize(5000);  // 8192 bytes once aligned
  small.insns.resize(3);     // 48 bytes of stream -> 4096
  // 8192 + 4096 + 64 KiB = 77,824 bytes -> rounded up to 1 MiB.
  EXPECT_EQ(dram_bytes_for({small}), uint64_t{1} << 20);
  isa::Program big;
  big.image.resize(150 * 4096);
  big.insns.resize(256);  // 4096 bytes exactly
  // 2 * (614,400 + 4,096) + 65,536 = 1,302,528 bytes -> 2 MiB.
  EXPECT_EQ(dram_bytes_for({big, big}), uint64_t{2} << 20);
  EXPECT_EQ(dram_bytes_for({}), uint64_t{1} << 20);
}

// The run-time settings (DRAM_LATENCY, CLOCK_MHZ, queue depths) do not change the hardware; every
// other key does (isa::HwConfig::same_hardware, used by the tools and the runtime).
TEST(HwConfigIdentity, RunTimeSettingsAreNotPartOfTheHardware) {
  const isa::HwConfig a;
  isa::HwConfig run = a;
  run.dram_latency = 0;
  run.clock_mhz = 250;
  run.cmd_queue_depth = 4;
  run.token_queue_depth = 2;
  EXPECT_TRUE(a.same_hardware(run));
  EXPECT_TRUE(run.same_hardware(a));
  const isa::HwConfig merged = a.with_run_settings(run);
  EXPECT_EQ(merged, run);
  EXPECT_EQ(merged.dram_latency, 0);
  EXPECT_EQ(merged.clock_mhz, 250);
  EXPECT_EQ(merged.cmd_queue_depth, 4);
  EXPECT_EQ(merged.token_queue_depth, 2);
  isa::HwConfig bus = run;
  bus.log_bus_width = 7;
  EXPECT_FALSE(a.same_hardware(bus));
  EXPECT_EQ(a.with_run_settings(bus).log_bus_width, 6);  // hardware keys stay a's
  isa::HwConfig batch = a;
  batch.log_batch = 1;
  EXPECT_FALSE(a.same_hardware(batch));
  isa::HwConfig acc = a;
  acc.log_acc_buff_size = 16;
  EXPECT_FALSE(a.same_hardware(acc));
}

// A simulator this build lacks says how to build it; an unknown name lists the built ones.
TEST(SimAvailability, MissingRtlSaysHowToEnableIt) {
  const std::vector<std::string> no_rtl = {"cycle", "fsim"};
  EXPECT_EQ(user_error_of([&] { check_sim_available("fsim", no_rtl); }), "<no UserError>");
  EXPECT_EQ(user_error_of([&] { check_sim_available("rtl", no_rtl); }),
            "simulator 'rtl' is not available in this build (it has cycle, fsim): the RTL simulator needs "
            "Verilator; install it (scripts/install-deps.sh) and configure with -DTESSEL_WITH_RTL=ON");
  EXPECT_NE(user_error_of([&] { check_sim_available("cycle", {"fsim"}); }).find("needs SystemC"),
            std::string::npos);
  EXPECT_EQ(user_error_of([&] { check_sim_available("tsim", no_rtl); }),
            "unknown simulator 'tsim' (this build has cycle, fsim)");
  EXPECT_EQ(user_error_of([&] { check_sim_available("rtl", {"cycle", "fsim", "rtl"}); }), "<no UserError>");
}

}  // namespace
}  // namespace tessel::tools
