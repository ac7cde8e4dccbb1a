// Fuzz target: the executable loader (runtime/executable.h, the .tsx format). Input: the bytes of
// an executable file. Properties: Executable::deserialize ends in a named error or an
// Executable; one that loads serialises to bytes that load and serialise to the same bytes; its
// tensors' sizes are computable (TensorDesc::size_bytes) and its Programs pass through the
// verifier and (bounded) fsim contracts of fuzz_util.h.
// Every section of a .tsx carries a CRC-32, so almost every mutation stops at the first checksum.
// Each input is therefore also tried "resealed": its checksums recomputed (reseal() below), so
// that mutations of the JSON header, tensor data and Program blobs reach the code behind the
// checks, as a crafted file with valid checksums would.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_util.h"
#include "runtime/executable.h"

namespace {

constexpr size_t kPreamble = 24;  // magic 8, header length 8, version 4, header CRC-32 4

uint32_t crc_of(const uint8_t* p, size_t n, uint32_t crc = 0) {
  return static_cast<uint32_t>(::crc32_z(crc, p, n));
}

// The bytes with every checksum recomputed: each tensor's data_crc32 and each program's crc32
// over the blob its offset and size name (when they lie in the blob area), the header
// re-serialised, then the header length and the preamble CRC. Empty when the framing or the
// header JSON does not parse (the raw bytes are tried anyway).
std::vector<uint8_t> reseal(const std::vector<uint8_t>& in) {
  if (in.size() < kPreamble) return {};
  uint64_t hlen = 0;
  for (int i = 0; i < 8; ++i) hlen |= uint64_t{in[8 + static_cast<size_t>(i)]} << (8 * i);
  if (hlen > in.size() - kPreamble) return {};
  nlohmann::json h = nlohmann::json::parse(in.begin() + kPreamble, in.begin() + static_cast<std::ptrdiff_t>(kPreamble + hlen),
                                           nullptr, /*allow_exceptions=*/false);
  if (h.is_discarded() || !h.is_object()) return {};
  const uint8_t* blobs = in.data() + kPreamble + hlen;
  const uint64_t blob_size = in.size() - kPreamble - hlen;
  auto fix = [&](nlohmann::json& e, const char* off_key, const char* size_key, const char* crc_key) {
    if (!e.is_object() || !e.contains(off_key) || !e.contains(size_key)) return;
    const nlohmann::json &o = e[off_key], &z = e[size_key];
    if (!o.is_number_unsigned() || !z.is_number_unsigned()) return;
    const uint64_t off = o.get<uint64_t>(), size = z.get<uint64_t>();
    if (off > blob_size || size > blob_size - off) return;
    e[crc_key] = crc_of(blobs + off, size);
  };
  for (const char* list : {"tensors", "programs"}) {
    if (!h.contains(list) || !h[list].is_array()) continue;
    for (nlohmann::json& e : h[list]) {
      if (std::string(list) == "tensors") {
        fix(e, "data_offset", "data_size", "data_crc32");
      } else {
        fix(e, "offset", "size", "crc32");
      }
    }
  }
  std::string text;
  try {
    text = h.dump();
  } catch (const nlohmann::json::exception&) {
    return {};  // a string that is not UTF-8: the loader rejects the raw bytes the same way
  }
  std::vector<uint8_t> out(in.begin(), in.begin() + 20);
  for (int i = 0; i < 8; ++i) out[8 + static_cast<size_t>(i)] = static_cast<uint8_t>(uint64_t{text.size()} >> (8 * i));
  out.resize(kPreamble);
  out.insert(out.end(), text.begin(), text.end());
  const uint32_t hcrc = crc_of(out.data() + kPreamble, text.size(), crc_of(out.data(), 20));
  for (int i = 0; i < 4; ++i) out[20 + static_cast<size_t>(i)] = static_cast<uint8_t>(hcrc >> (8 * i));
  out.insert(out.end(), blobs, blobs + blob_size);
  return out;
}

void check(const std::vector<uint8_t>& bytes) {
  using namespace tessel;
  constexpr const char* kTarget = "tsx";
  runtime::Executable exe;
  if (!fuzz::expect_clean(kTarget, [&] { exe = runtime::Executable::deserialize(bytes); })) return;
  std::vector<uint8_t> once, twice;
  const bool round_trip = fuzz::expect_clean(kTarget, [&] {
    once = exe.serialize();
    twice = runtime::Executable::deserialize(once).serialize();
  });
  if (!round_trip) fuzz::fail(kTarget, "a loaded executable does not serialise and load again");
  if (once != twice) fuzz::fail(kTarget, "serialize(deserialize(serialize(e))) != serialize(e)");
  for (const runtime::TensorDesc& t : exe.tensors)
    if (!fuzz::expect_clean(kTarget, [&] { (void)t.size_bytes(); }))
      fuzz::fail(kTarget, "a loaded executable holds a tensor whose size is not computable");
  for (const isa::Program& p : exe.programs) fuzz::verify_and_run(kTarget, p);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  check(bytes);
  const std::vector<uint8_t> sealed = reseal(bytes);
  if (!sealed.empty() && sealed != bytes) check(sealed);
  return 0;
}
