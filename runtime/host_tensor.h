// A tensor on the host, as the graph executor takes and returns it and as the compiler's float
// reference and calibration inputs hold it. Part of the runtime's core (no device, no simulator).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/executable.h"

namespace tessel::runtime {

/// A host tensor: raw little-endian bytes in the TensorDesc's dtype and layout (bytes.size() =
/// product(shape) * dtype_bytes(dtype) for a well-formed tensor; nothing here checks it).
struct HostTensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  /// The bytes as float32 values (meaningful only when dtype is kF32).
  const float* f32() const { return reinterpret_cast<const float*>(bytes.data()); }
};

}  // namespace tessel::runtime
