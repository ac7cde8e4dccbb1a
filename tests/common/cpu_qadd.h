// The test oracle of the residual add: runtime/cpu's qadd kernel (runtime/qnn.h semantics) run on
// two int8 tensors. Header-only; tests that use it link tessel_runtime_core (runtime::cpu).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/cpu/kernels.h"
#include "support/error.h"

namespace tessel::testing {

/// y = qadd(a, b) by the CPU kernel, element by element: a, b and y are int8 tensors of `shape`
/// (any layout, the same for all three: the operation is element-wise), quantised with (scale,
/// zero point) qa, qb and qy; `relu` clips y at its zero point. Throws InternalError when a or
/// b does not hold product(shape) elements, and whatever the kernel throws.
inline std::vector<int8_t> cpu_qadd(const std::vector<int64_t>& shape, runtime::QuantParams qa, runtime::QuantParams qb,
                                    runtime::QuantParams qy, bool relu, const std::vector<int8_t>& a,
                                    const std::vector<int8_t>& b) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  TESSEL_CHECK(a.size() == static_cast<size_t>(n) && b.size() == static_cast<size_t>(n),
               "cpu_qadd: operands of {} and {} elements for a shape of {}", a.size(), b.size(), n);
  runtime::TensorDesc da, db, dy;
  da.name = "a";
  db.name = "b";
  dy.name = "y";
  for (runtime::TensorDesc* d : {&da, &db, &dy}) {
    d->dtype = runtime::DType::kI8;
    d->shape = shape;
    d->quantized = true;
  }
  da.quant = qa;
  db.quant = qb;
  dy.quant = qy;
  runtime::Step step;
  step.name = "residual";
  step.op = "qadd";
  if (relu) step.attrs["relu"] = true;
  std::vector<int8_t> y(static_cast<size_t>(n));
  runtime::cpu::KernelCall call;
  call.step = &step;
  call.inputs = {{&da, reinterpret_cast<const uint8_t*>(a.data())}, {&db, reinterpret_cast<const uint8_t*>(b.data())}};
  call.outputs = {{&dy, reinterpret_cast<uint8_t*>(y.data())}};
  runtime::cpu::run_kernel(call);
  return y;
}

}  // namespace tessel::testing
