// Configuration spaces of schedule templates (AutoTVM's ConfigSpace): the knobs an operator's
// schedule reads and the auto-tuner searches. A space is a list of named sub-spaces, each a list
// of entities:
//  - split(name, extent, num_outputs, policy): the sizes of a multi-level split of an axis of
//    `extent`, outermost first. kFactors: every tuple of positive divisors whose product is the
//    extent; kPowerOfTwo: inner sizes powers of two with product <= extent, the outer size
//    ceil(extent / product); kBalanced (two outputs only): every distinct inner size
//    ceil(extent / k) for k = 1 .. extent (the divisors and the sizes that cut the extent into
//    k tiles, the last one smaller: 112 gives 1, 2, ..., 10, 11, 12, 13, 14, 16, 19, 23, 28,
//    38, 56, 112), the outer size ceil(extent / inner). `max_factor` (> 0) bounds the inner
//    sizes. Entities in lexicographic order of the tuple.
//  - knob(name, values): one of the given integers, in the given order.
//  - reorder(name, num_axes, policy): a permutation of 0..num_axes-1: all of them in
//    lexicographic order, the identity only, or the given candidates in order.
// The space's points are the product of the sub-spaces, numbered 0..size()-1 as a mixed-radix
// number whose first-defined sub-space varies fastest (AutoTVM's numbering): enumeration is
// deterministic. A point is a ConfigEntity; its JSON text is
//   {"index":5,"entities":[["tile_x","split",[4,16]],["unroll","knob",2],["order","reorder",[1,0]]]}
// (compact, in definition order), and ConfigSpace::from_json reads it back against the space.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::te {

enum class SplitPolicy : uint8_t { kFactors, kPowerOfTwo, kBalanced };
enum class ReorderPolicy : uint8_t { kAll, kIdentity, kCandidates };
enum class KnobKind : uint8_t { kSplit, kKnob, kReorder };
/// "split", "knob", "reorder".
std::string_view to_string(KnobKind k);

/// One named sub-space and its entities (a split's sizes, a knob's value as a one-element list,
/// a reorder's permutation).
struct SubSpace {
  std::string name;
  KnobKind kind = KnobKind::kKnob;
  std::vector<std::vector<int64_t>> entities;
};

/// One point of a space: a value for every sub-space.
class ConfigEntity {
 public:
  ConfigEntity() = default;
  ConfigEntity(int64_t index, std::vector<std::pair<const SubSpace*, size_t>> choice);
  /// The point's number in its space.
  int64_t index() const { return index_; }
  /// The sizes of split `name`, outermost first. UserError when there is no split of that name.
  const std::vector<int64_t>& split(const std::string& name) const;
  /// The value of knob `name`. UserError when there is no knob of that name.
  int64_t knob(const std::string& name) const;
  /// The permutation of reorder `name`. UserError when there is no reorder of that name.
  const std::vector<int64_t>& reorder(const std::string& name) const;
  /// Whether the point has a sub-space (split, knob or reorder) named `name`.
  bool has(const std::string& name) const;
  /// The JSON text of the file comment.
  std::string to_json() const;

 private:
  const std::vector<int64_t>& value(const std::string& name, KnobKind kind) const;
  int64_t index_ = 0;
  std::vector<std::pair<const SubSpace*, size_t>> choice_;  ///< sub-space and entity index
};

/// A space of configurations. Entities refer to the space's sub-spaces: keep it alive, and define
/// no more sub-spaces, while they are used.
class ConfigSpace {
 public:
  ConfigSpace() = default;
  ConfigSpace(const ConfigSpace&) = delete;  // entities point into the sub-spaces
  ConfigSpace& operator=(const ConfigSpace&) = delete;

  /// See the file comment. UserError when the name is taken, extent < 1, num_outputs < 1,
  /// max_factor < 0, or kBalanced with num_outputs other than 2.
  void define_split(const std::string& name, int64_t extent, int num_outputs = 2,
                    SplitPolicy policy = SplitPolicy::kFactors, int64_t max_factor = 0);
  /// UserError when the name is taken or `values` is empty.
  void define_knob(const std::string& name, std::vector<int64_t> values);
  /// UserError when the name is taken, num_axes < 1, a candidate is not a permutation of
  /// 0..num_axes-1, or kCandidates comes with no candidates (or another policy with some).
  void define_reorder(const std::string& name, int num_axes, ReorderPolicy policy = ReorderPolicy::kAll,
                      std::vector<std::vector<int64_t>> candidates = {});

  /// Number of points (1 for an empty space). UserError when it exceeds INT64_MAX.
  int64_t size() const;
  /// Point `index`. UserError when index is outside [0, size()).
  ConfigEntity get(int64_t index) const;
  const std::vector<SubSpace>& subspaces() const { return subs_; }
  /// Reads an entity's JSON text back. UserError naming the problem when the text is not JSON
  /// of that form, names sub-spaces other than this space's (in order), holds a value that is
  /// not one of the sub-space's entities, or an index that does not match the values.
  ConfigEntity from_json(std::string_view text) const;

 private:
  void add(SubSpace s);
  std::vector<SubSpace> subs_;
};

}  // namespace tessel::te
