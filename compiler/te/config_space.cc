#include "compiler/te/config_space.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include <nlohmann/json.hpp>

#include "support/error.h"
#include "support/json_text.h"

namespace tessel::te {

std::string_view to_string(KnobKind k) {
  switch (k) {
    case KnobKind::kSplit: return "split";
    case KnobKind::kKnob: return "knob";
    case KnobKind::kReorder: return "reorder";
  }
  return "?";
}

ConfigEntity::ConfigEntity(int64_t index, std::vector<std::pair<const SubSpace*, size_t>> choice)
    : index_(index), choice_(std::move(choice)) {}

const std::vector<int64_t>& ConfigEntity::value(const std::string& name, KnobKind kind) const {
  for (const auto& [sub, i] : choice_) {
    if (sub->name != name) continue;
    if (sub->kind != kind) {
      throw_user_error("config {}: {} is a {}, not a {}", index_, name, to_string(sub->kind), to_string(kind));
    }
    return sub->entities[i];
  }
  throw_user_error("config {}: no {} named {}", index_, to_string(kind), name);
}

bool ConfigEntity::has(const std::string& name) const {
  for (const auto& c : choice_) {
    if (c.first->name == name) return true;
  }
  return false;
}

const std::vector<int64_t>& ConfigEntity::split(const std::string& name) const { return value(name, KnobKind::kSplit); }
int64_t ConfigEntity::knob(const std::string& name) const { return value(name, KnobKind::kKnob)[0]; }
const std::vector<int64_t>& ConfigEntity::reorder(const std::string& name) const {
  return value(name, KnobKind::kReorder);
}

std::string ConfigEntity::to_json() const {
  nlohmann::ordered_json j;
  j["index"] = index_;
  nlohmann::ordered_json ents = nlohmann::ordered_json::array();
  for (const auto& [sub, i] : choice_) {
    nlohmann::ordered_json v = sub->kind == KnobKind::kKnob ? nlohmann::ordered_json(sub->entities[i][0])
                                                             : nlohmann::ordered_json(sub->entities[i]);
    ents.push_back(nlohmann::ordered_json::array({sub->name, std::string(to_string(sub->kind)), v}));
  }
  j["entities"] = ents;
  return support::dump_json(j, -1, "config entity");
}

namespace {

void factor_tuples(int64_t rest, int left, int64_t max_factor, std::vector<int64_t>& cur,
                   std::vector<std::vector<int64_t>>& out) {
  if (left == 0) {
    std::vector<int64_t> t{rest};
    t.insert(t.end(), cur.rbegin(), cur.rend());
    out.push_back(t);
    return;
  }
  for (int64_t d = 1; d <= rest; ++d) {
    if (rest % d != 0 || (max_factor > 0 && d > max_factor)) continue;
    cur.push_back(d);
    factor_tuples(rest / d, left - 1, max_factor, cur, out);
    cur.pop_back();
  }
}

void pow2_tuples(int64_t extent, int64_t prod, int left, int64_t max_factor, std::vector<int64_t>& cur,
                 std::vector<std::vector<int64_t>>& out) {
  if (left == 0) {
    std::vector<int64_t> t{(extent + prod - 1) / prod};
    t.insert(t.end(), cur.begin(), cur.end());
    out.push_back(t);
    return;
  }
  for (int64_t d = 1; prod * d <= extent && (max_factor == 0 || d <= max_factor); d *= 2) {
    cur.push_back(d);
    pow2_tuples(extent, prod * d, left - 1, max_factor, cur, out);
    cur.pop_back();
  }
}

/// kBalanced with two outputs: every distinct inner size ceil(extent / k), k = 1 .. extent,
/// with the outer size ceil(extent / inner).
void balanced_tuples(int64_t extent, int64_t max_factor, std::vector<std::vector<int64_t>>& out) {
  int64_t last = 0;
  for (int64_t k = extent; k >= 1; --k) {  // inner sizes ascending
    const int64_t inner = (extent + k - 1) / k;
    if (inner == last || (max_factor > 0 && inner > max_factor)) continue;
    last = inner;
    out.push_back({(extent + inner - 1) / inner, inner});
  }
}

}  // namespace

void ConfigSpace::add(SubSpace s) {
  for (const SubSpace& o : subs_) {
    if (o.name == s.name) throw_user_error("config space: {} is defined twice", s.name);
  }
  subs_.push_back(std::move(s));
}

void ConfigSpace::define_split(const std::string& name, int64_t extent, int num_outputs, SplitPolicy policy,
                               int64_t max_factor) {
  if (extent < 1) throw_user_error("config space: split {} of extent {}; it must be positive", name, extent);
  if (num_outputs < 1) throw_user_error("config space: split {} into {} parts; it must be at least 1", name, num_outputs);
  if (max_factor < 0) throw_user_error("config space: split {} with max_factor {}; it must be 0 (none) or positive", name, max_factor);
  SubSpace s{name, KnobKind::kSplit, {}};
  std::vector<int64_t> cur;
  if (policy == SplitPolicy::kBalanced && num_outputs != 2) {
    throw_user_error("config space: split {} into {} parts: the balanced policy splits into 2", name, num_outputs);
  }
  if (policy == SplitPolicy::kFactors) factor_tuples(extent, num_outputs - 1, max_factor, cur, s.entities);
  else if (policy == SplitPolicy::kBalanced) balanced_tuples(extent, max_factor, s.entities);
  else pow2_tuples(extent, 1, num_outputs - 1, max_factor, cur, s.entities);
  std::sort(s.entities.begin(), s.entities.end());
  add(std::move(s));
}

void ConfigSpace::define_knob(const std::string& name, std::vector<int64_t> values) {
  if (values.empty()) throw_user_error("config space: knob {} has no values", name);
  SubSpace s{name, KnobKind::kKnob, {}};
  for (int64_t v : values) s.entities.push_back({v});
  add(std::move(s));
}

void ConfigSpace::define_reorder(const std::string& name, int num_axes, ReorderPolicy policy,
                                 std::vector<std::vector<int64_t>> candidates) {
  if (num_axes < 1) throw_user_error("config space: reorder {} of {} axes; it must be at least 1", name, num_axes);
  if ((policy == ReorderPolicy::kCandidates) == candidates.empty()) {
    throw_user_error("config space: reorder {}: candidates go with the candidates policy, and it needs some", name);
  }
  SubSpace s{name, KnobKind::kReorder, {}};
  std::vector<int64_t> id(static_cast<size_t>(num_axes));
  std::iota(id.begin(), id.end(), 0);
  if (policy == ReorderPolicy::kIdentity) {
    s.entities.push_back(id);
  } else if (policy == ReorderPolicy::kAll) {
    do s.entities.push_back(id);
    while (std::next_permutation(id.begin(), id.end()));
  } else {
    for (const auto& c : candidates) {
      std::vector<int64_t> sorted = c;
      std::sort(sorted.begin(), sorted.end());
      if (sorted != id) {
        std::string text;
        for (int64_t v : c) text += (text.empty() ? "" : ", ") + std::to_string(v);
        throw_user_error("config space: reorder {}: candidate [{}] is not a permutation of 0..{}", name, text, num_axes - 1);
      }
      s.entities.push_back(c);
    }
  }
  add(std::move(s));
}

int64_t ConfigSpace::size() const {
  int64_t n = 1;
  for (const SubSpace& s : subs_) {
    if (__builtin_mul_overflow(n, static_cast<int64_t>(s.entities.size()), &n)) {
      throw_user_error("config space: more than {} points", std::numeric_limits<int64_t>::max());
    }
  }
  return n;
}

ConfigEntity ConfigSpace::get(int64_t index) const {
  int64_t n = size();
  if (index < 0 || index >= n) throw_user_error("config space: index {} outside [0, {})", index, n);
  std::vector<std::pair<const SubSpace*, size_t>> choice;
  int64_t t = index;
  for (const SubSpace& s : subs_) {
    int64_t k = static_cast<int64_t>(s.entities.size());
    choice.emplace_back(&s, static_cast<size_t>(t % k));
    t /= k;
  }
  return ConfigEntity(index, std::move(choice));
}

ConfigEntity ConfigSpace::from_json(std::string_view text) const {
  size();  // rejects a space too large to number
  nlohmann::json j = support::parse_json(text, "config entity");
  auto bad = [](const std::string& why) -> void { throw_user_error("config entity: {}", why); };
  if (!j.is_object() || !j.contains("index") || !j.contains("entities") || !j["index"].is_number_integer() ||
      !j["entities"].is_array()) {
    bad("expected an object with an integer \"index\" and an array \"entities\"");
  }
  const auto& ents = j["entities"];
  if (ents.size() != subs_.size()) bad(fmt::format("{} entities, the space has {} sub-spaces", ents.size(), subs_.size()));
  std::vector<std::pair<const SubSpace*, size_t>> choice;
  int64_t index = 0, radix = 1;
  for (size_t i = 0; i < subs_.size(); ++i) {
    const SubSpace& s = subs_[i];
    const auto& e = ents[i];
    if (!e.is_array() || e.size() != 3 || !e[0].is_string() || !e[1].is_string()) bad(fmt::format("entity {} is not [name, kind, value]", i));
    if (e[0].get<std::string>() != s.name || e[1].get<std::string>() != to_string(s.kind)) {
      bad(fmt::format("entity {} is {} {}, the space has {} {}", i, e[1].get<std::string>(), e[0].get<std::string>(),
                      to_string(s.kind), s.name));
    }
    std::vector<int64_t> v;
    if (s.kind == KnobKind::kKnob && e[2].is_number_integer()) {
      v.push_back(e[2].get<int64_t>());
    } else if (s.kind != KnobKind::kKnob && e[2].is_array() &&
               std::all_of(e[2].begin(), e[2].end(), [](const nlohmann::json& x) { return x.is_number_integer(); })) {
      for (const auto& x : e[2]) v.push_back(x.get<int64_t>());
    } else {
      bad(fmt::format("entity {} ({}) has a value of the wrong form", i, s.name));
    }
    auto it = std::find(s.entities.begin(), s.entities.end(), v);
    if (it == s.entities.end()) bad(fmt::format("{} {} is not a value of the space", s.name, e[2].dump()));
    size_t k = static_cast<size_t>(it - s.entities.begin());
    choice.emplace_back(&s, k);
    index += static_cast<int64_t>(k) * radix;
    radix *= static_cast<int64_t>(s.entities.size());
  }
  int64_t given = j["index"].get<int64_t>();
  if (given != index) bad(fmt::format("index {} does not match the values (index {})", given, index));
  return ConfigEntity(index, std::move(choice));
}

}  // namespace tessel::te
