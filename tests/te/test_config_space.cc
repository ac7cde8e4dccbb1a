// compiler/te config spaces: sub-space sizes and entity order, the mixed-radix numbering
// (first-defined fastest), JSON text both ways and the UserErrors.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "compiler/te/config_space.h"
#include "tests/te/te_test_util.h"

namespace tessel::te {
namespace {

using testing::user_error_of;
using V = std::vector<int64_t>;

TEST(TeConfigSpace, SplitFactorsCountsAndOrder) {
  ConfigSpace cs;
  cs.define_split("tile", 12, 2);
  ASSERT_EQ(cs.size(), 6);  // divisors of 12
  const auto& e = cs.subspaces()[0].entities;
  EXPECT_EQ(e, (std::vector<V>{{1, 12}, {2, 6}, {3, 4}, {4, 3}, {6, 2}, {12, 1}}));
  ConfigSpace three;
  three.define_split("t3", 8, 3);
  EXPECT_EQ(three.size(), 10);  // ordered factorisations of 2^3 into 3 parts: C(5, 2)
  EXPECT_EQ(three.subspaces()[0].entities.front(), (V{1, 1, 8}));
  EXPECT_EQ(three.subspaces()[0].entities.back(), (V{8, 1, 1}));
  ConfigSpace capped;
  capped.define_split("t", 16, 2, SplitPolicy::kFactors, 4);
  EXPECT_EQ(capped.subspaces()[0].entities, (std::vector<V>{{4, 4}, {8, 2}, {16, 1}}));
}

TEST(TeConfigSpace, SplitPowerOfTwo) {
  ConfigSpace cs;
  cs.define_split("t", 10, 2, SplitPolicy::kPowerOfTwo);
  EXPECT_EQ(cs.subspaces()[0].entities, (std::vector<V>{{2, 8}, {3, 4}, {5, 2}, {10, 1}}));
}

// kBalanced: the divisors and every size that cuts the extent into k tiles with a smaller
// last one (each distinct ceil(extent / k)), outer = ceil(extent / inner); two outputs only.
TEST(TeConfigSpace, SplitBalanced) {
  ConfigSpace cs;
  cs.define_split("t", 10, 2, SplitPolicy::kBalanced);
  EXPECT_EQ(cs.subspaces()[0].entities, (std::vector<V>{{1, 10}, {2, 5}, {3, 4}, {4, 3}, {5, 2}, {10, 1}}));
  cs.define_split("u", 112, 2, SplitPolicy::kBalanced);
  std::vector<int64_t> inner;
  for (const V& e : cs.subspaces()[1].entities) {
    inner.push_back(e[1]);
    EXPECT_EQ(e[0], (112 + e[1] - 1) / e[1]);
  }
  std::sort(inner.begin(), inner.end());
  EXPECT_EQ(inner, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 19, 23, 28, 38, 56, 112}));
  cs.define_split("v", 10, 2, SplitPolicy::kBalanced, 4);  // max_factor bounds the inner size
  EXPECT_EQ(cs.subspaces()[2].entities, (std::vector<V>{{3, 4}, {4, 3}, {5, 2}, {10, 1}}));
  EXPECT_THROW(cs.define_split("w", 10, 3, SplitPolicy::kBalanced), UserError);
}

TEST(TeConfigSpace, KnobsReordersAndNumbering) {
  ConfigSpace cs;
  cs.define_split("tile_x", 4, 2);                              // 3 entities
  cs.define_knob("unroll", {0, 16, 64});                        // 3
  cs.define_reorder("order", 3);                                // 6
  cs.define_reorder("pick", 2, ReorderPolicy::kCandidates, {{1, 0}});  // 1
  cs.define_reorder("same", 4, ReorderPolicy::kIdentity);       // 1
  EXPECT_EQ(cs.size(), 3 * 3 * 6);
  ConfigEntity c0 = cs.get(0);
  EXPECT_EQ(c0.split("tile_x"), (V{1, 4}));
  EXPECT_EQ(c0.knob("unroll"), 0);
  EXPECT_EQ(c0.reorder("order"), (V{0, 1, 2}));
  EXPECT_TRUE(c0.has("tile_x"));
  EXPECT_TRUE(c0.has("unroll"));
  EXPECT_TRUE(c0.has("same"));
  EXPECT_FALSE(c0.has("tile_y"));
  ConfigEntity c1 = cs.get(1);  // first-defined varies fastest
  EXPECT_EQ(c1.split("tile_x"), (V{2, 2}));
  EXPECT_EQ(c1.knob("unroll"), 0);
  ConfigEntity c = cs.get(2 + 3 * 1 + 9 * 5);
  EXPECT_EQ(c.split("tile_x"), (V{4, 1}));
  EXPECT_EQ(c.knob("unroll"), 16);
  EXPECT_EQ(c.reorder("order"), (V{2, 1, 0}));
  EXPECT_EQ(c.reorder("pick"), (V{1, 0}));
  EXPECT_EQ(c.reorder("same"), (V{0, 1, 2, 3}));
  EXPECT_EQ(c.to_json(),
            "{\"index\":50,\"entities\":[[\"tile_x\",\"split\",[4,1]],[\"unroll\",\"knob\",16],[\"order\",\"reorder\","
            "[2,1,0]],[\"pick\",\"reorder\",[1,0]],[\"same\",\"reorder\",[0,1,2,3]]]}");
  // every index round-trips through JSON, and enumeration visits every point once
  std::set<std::string> seen;
  for (int64_t i = 0; i < cs.size(); ++i) {
    ConfigEntity e = cs.get(i);
    std::string text = e.to_json();
    EXPECT_EQ(cs.from_json(text).index(), i);
    EXPECT_EQ(cs.from_json(text).to_json(), text);
    seen.insert(text);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(cs.size()));
  ConfigSpace empty;
  EXPECT_EQ(empty.size(), 1);
  EXPECT_EQ(empty.get(0).to_json(), "{\"index\":0,\"entities\":[]}");
}

TEST(TeConfigSpace, Errors) {
  ConfigSpace cs;
  cs.define_split("tile", 8);
  cs.define_knob("unroll", {1, 2});
  EXPECT_EQ(user_error_of([&] { cs.define_knob("tile", {1}); }), "config space: tile is defined twice");
  EXPECT_EQ(user_error_of([&] { cs.define_knob("k", {}); }), "config space: knob k has no values");
  EXPECT_EQ(user_error_of([&] { cs.define_split("s", 0); }), "config space: split s of extent 0; it must be positive");
  EXPECT_EQ(user_error_of([&] { cs.define_reorder("r", 3, ReorderPolicy::kCandidates, {{0, 0, 1}}); }),
            "config space: reorder r: candidate [0, 0, 1] is not a permutation of 0..2");
  EXPECT_EQ(user_error_of([&] { cs.get(8); }), "config space: index 8 outside [0, 8)");
  ConfigEntity e = cs.get(3);
  EXPECT_EQ(user_error_of([&] { e.knob("tile"); }), "config 3: tile is a split, not a knob");
  EXPECT_EQ(user_error_of([&] { e.split("tile_y"); }), "config 3: no split named tile_y");
  EXPECT_EQ(user_error_of([&] { cs.from_json("{\"index\":0,\"entities\":[[\"tile\",\"split\",[3,3]],[\"unroll\",\"knob\",1]]}"); }),
            "config entity: tile [3,3] is not a value of the space");
  EXPECT_EQ(user_error_of([&] { cs.from_json("{\"index\":1,\"entities\":[[\"tile\",\"split\",[1,8]],[\"unroll\",\"knob\",1]]}"); }),
            "config entity: index 1 does not match the values (index 0)");
  EXPECT_EQ(user_error_of([&] { cs.from_json("{\"index\":0,\"entities\":[[\"unroll\",\"knob\",1],[\"tile\",\"split\",[1,8]]]}"); }),
            "config entity: entity 0 is knob unroll, the space has split tile");
  EXPECT_EQ(user_error_of([&] { cs.from_json("[1]"); }),
            "config entity: expected an object with an integer \"index\" and an array \"entities\"");
  ConfigSpace huge;
  for (int i = 0; i < 8; ++i) huge.define_knob("k" + std::to_string(i), V(300, 1));
  EXPECT_EQ(user_error_of([&] { huge.size(); }), "config space: more than 9223372036854775807 points");
}

}  // namespace
}  // namespace tessel::te
