#include "sim/common/systemc_models.h"

#include <cstring>
#include <map>
#include <string>

#include "support/error.h"

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

}  // namespace tessel::sim
