#include "sim/common/systemc_models.h"

#include <pthread.h>

#include <cstddef>
#include <cstring>
#include <map>
#include <string>

#include "support/error.h"

#if defined(__SANITIZE_ADDRESS__)
#define TESSEL_HAS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSEL_HAS_ASAN 1
#endif
#endif
#if defined(TESSEL_HAS_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif

namespace tessel::sim {

namespace {

struct Registry {
  std::map<std::string, void (*)()> models;  // ordered by name: deterministic construction
  bool elaborated = false;
};

Registry& registry() {
  static Registry r;  // constructed on first use, so registrations from any TU are safe
  return r;
}

}  // namespace

std::mutex& systemc_kernel_mutex() {
  static std::mutex m;
  return m;
}

SystemcModelRegistration::SystemcModelRegistration(const char* name, void (*elaborate)()) {
  Registry& r = registry();
  if (r.elaborated) {
    throw_internal_error("SystemC model '{}' registered after the kernel was elaborated", name);
  }
  if (!r.models.emplace(name, elaborate).second) {
    throw_internal_error("SystemC model '{}' registered twice", name);
  }
}

void elaborate_systemc_models(void (*start_kernel)()) {
  Registry& r = registry();
  if (r.elaborated) return;
  r.elaborated = true;
  for (const auto& [name, elaborate] : r.models) elaborate();
  start_kernel();
}

bool systemc_models_elaborated() { return registry().elaborated; }

void restore_sanitizer_stack_bounds() noexcept {
#if defined(TESSEL_HAS_ASAN)
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* bottom = nullptr;
  size_t size = 0;
  const int rc = pthread_attr_getstack(&attr, &bottom, &size);
  pthread_attr_destroy(&attr);
  if (rc != 0 || bottom == nullptr || size == 0) return;
  // A "switch" from this stack to itself: ASan takes the announced bounds as the thread's stack.
  __sanitizer_start_switch_fiber(nullptr, bottom, size);
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
}

}  // namespace tessel::sim
