// Process-wide coordination of the SystemC models (the cycle model in sim/cycle and the RTL
// wrapper in sim/rtl). SystemC has one kernel per process and elaborates once: every module must
// be constructed before the first sc_start(), whichever model runs first. Each SystemC model
// therefore registers a function that constructs its (configuration-agnostic) modules, and the
// first run of any model constructs all registered ones before starting the kernel. Every use of
// the kernel (elaboration and sc_start) is serialised by one mutex.
//
// This header and its source do not include SystemC: the registry only stores and calls plain
// functions, so it lives in tessel_sim and each SystemC library supplies its own code.
#pragma once

#include <mutex>

namespace tessel::sim {

/// The mutex that serialises every use of the process's SystemC kernel by any model (hold it
/// around elaborate_systemc_models() and every sc_start()).
std::mutex& systemc_kernel_mutex();

/// Registers a SystemC model at static-initialisation time: define one namespace-scope object per
/// model library, in a source file that is always linked with it (e.g. next to its factory):
///   const SystemcModelRegistration kRegistration("rtl", &construct_rtl_modules);
/// `name` orders the construction (ascending, so the hierarchy does not depend on link order) and
/// must be unique; `elaborate` constructs the model's modules (with `new`; SystemC objects must
/// outlive the kernel) and must not call sc_start().
/// Throws tessel::InternalError for a duplicate name or a registration after elaboration.
class SystemcModelRegistration {
 public:
  SystemcModelRegistration(const char* name, void (*elaborate)());
};

/// Constructs every registered model's modules, once per process, then calls `start_kernel`
/// (which must run SystemC's initialisation phase: sc_core::sc_start(sc_core::SC_ZERO_TIME)).
/// Later calls do nothing. The caller holds systemc_kernel_mutex(). A model whose first use
/// finds the kernel elaborated by a model that did not register this way cannot add modules any
/// more; SystemC reports that as an error when the module is constructed.
void elaborate_systemc_models(void (*start_kernel)());

/// True once elaborate_systemc_models() has run.
bool systemc_models_elaborated();

/// Tells AddressSanitizer again where the calling thread's stack is (its bounds from
/// pthread_getattr_np), when the build has ASan; otherwise does nothing. Why: Debian's libsystemc
/// annotates its QuickThreads coroutine switches for ASan (__sanitizer_start/finish_switch_fiber),
/// but after sc_start() returns to the caller ASan still holds the bounds of the last coroutine's
/// 256 KiB stack. The next C++ exception on that thread then makes ASan's unwinding hook
/// (__asan_handle_no_return) skip unpoisoning the real stack ("ASan is ignoring requested
/// __asan_handle_no_return") and report a false stack-buffer-overflow inside its own sigaltstack
/// call. Measured on 2026-12-04 with clang-16: ASan held a 262,144-byte coroutine stack instead of
/// the 8 MiB main stack after one sc_start(). Never throws.
void restore_sanitizer_stack_bounds() noexcept;

/// Calls restore_sanitizer_stack_bounds() when it goes out of scope; construct one right before
/// every sc_start(), so the bounds are right whether sc_start() returns or throws.
class SanitizerStackRestore {
 public:
  SanitizerStackRestore() = default;
  SanitizerStackRestore(const SanitizerStackRestore&) = delete;
  SanitizerStackRestore& operator=(const SanitizerStackRestore&) = delete;
  ~SanitizerStackRestore() { restore_sanitizer_stack_bounds(); }
};

}  // namespace tessel::sim
