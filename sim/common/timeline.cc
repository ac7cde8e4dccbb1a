#include "sim/common/timeline.h"

#include <algorithm>

#include <fmt/format.h>

namespace tessel::sim {

void sort_by_index(std::vector<InsnTiming>& timeline) {
  std::stable_sort(timeline.begin(), timeline.end(),
                   [](const InsnTiming& x, const InsnTiming& y) { return x.index < y.index; });
}

namespace {

const char* module_str(isa::Module m) {
  switch (m) {
    case isa::Module::kLoad: return "load";
    case isa::Module::kCompute: return "compute";
    case isa::Module::kStore: return "store";
  }
  return "?";
}

const char* opcode_str(isa::Opcode op) {
  switch (op) {
    case isa::Opcode::kLoad: return "LOAD";
    case isa::Opcode::kStore: return "STORE";
    case isa::Opcode::kGemm: return "GEMM";
    case isa::Opcode::kFinish: return "FINISH";
    case isa::Opcode::kAlu: return "ALU";
  }
  return "?";
}

}  // namespace

std::optional<TimelineDivergence> compare_timelines(std::vector<InsnTiming> a,
                                                    std::vector<InsnTiming> b,
                                                    const std::string& a_name,
                                                    const std::string& b_name) {
  sort_by_index(a);
  sort_by_index(b);
  std::optional<TimelineDivergence> best;
  auto consider = [&](TimelineDivergence d) {
    if (!best || d.cycle < best->cycle || (d.cycle == best->cycle && d.index < best->index)) {
      best = std::move(d);
    }
  };
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].index < b[j].index)) {
      const InsnTiming& t = a[i++];
      consider({t.index, "missing", t.dispatch,
                fmt::format("instruction {} ({} {}) ran on {} (dispatch {}, start {}, end {}) but "
                            "not on {}",
                            t.index, module_str(t.module), opcode_str(t.opcode), a_name, t.dispatch,
                            t.start, t.end, b_name)});
      continue;
    }
    if (i == a.size() || b[j].index < a[i].index) {
      const InsnTiming& t = b[j++];
      consider({t.index, "missing", t.dispatch,
                fmt::format("instruction {} ({} {}) ran on {} (dispatch {}, start {}, end {}) but "
                            "not on {}",
                            t.index, module_str(t.module), opcode_str(t.opcode), b_name, t.dispatch,
                            t.start, t.end, a_name)});
      continue;
    }
    const InsnTiming& x = a[i++];
    const InsnTiming& y = b[j++];
    auto head = [&] {
      return fmt::format("instruction {} ({} {})", x.index, module_str(x.module),
                         opcode_str(x.opcode));
    };
    if (x.module != y.module || x.opcode != y.opcode) {
      consider({x.index, x.module != y.module ? "module" : "opcode", std::min(x.dispatch, y.dispatch),
                fmt::format("{}: {} says {} {}, {} says {} {}", head(), a_name, module_str(x.module),
                            opcode_str(x.opcode), b_name, module_str(y.module),
                            opcode_str(y.opcode))});
      continue;
    }
    auto field = [&](const char* what, uint64_t u, uint64_t v) {
      if (u == v) return false;
      consider({x.index, what, std::min(u, v),
                fmt::format("{}: {} cycle {} on {}, {} on {} ({:+})", head(), what, u, a_name, v,
                            b_name, int64_t(v) - int64_t(u))});
      return true;
    };
    if (field("dispatch", x.dispatch, y.dispatch)) continue;
    if (field("start", x.start, y.start)) continue;
    field("end", x.end, y.end);
  }
  return best;
}

}  // namespace tessel::sim
