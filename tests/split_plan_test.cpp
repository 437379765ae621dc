// tests/split_plan_test.cpp — the stream-K plan (core/split_plan.hpp), on the host.
//
// For many (units, steps, grid), walking every block's pieces must cover each
// step of each unit exactly once; a block's pieces come in order, whole units
// first; a block contributes at most once, with its range's first piece; a
// unit's finishing piece is its block's last and names exactly the blocks
// whose contributing pieces cover the rest of the unit; where the plan
// splits, each block runs one piece at most, of the unit unit_blocks() says,
// and its busiest block (fixups counted) finishes before the unsplit
// schedule's. Where it must not split (whole waves, short units), it does not.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "seed.hpp"
#include "tessel/core/split_plan.hpp"

namespace tessel::test {
namespace {

constexpr int fixup = 4;

std::string describe(long long units, int steps, int grid) {
  return std::to_string(units) + " units of " + std::to_string(steps) + " steps on " + std::to_string(grid) + " blocks";
}

void check_plan(long long units, int steps, int grid) {
  const split_plan sp = split_plan::make(units, steps, grid, fixup);
  const std::string what = describe(units, steps, grid);
  std::vector<int> covered(std::size_t(units * steps), 0);
  std::vector<int> contributor_of(std::size_t(units * steps), -1);  // block whose contributing piece covers the step
  struct finish {
    long long unit;
    int block, k1, end;
  };
  std::vector<finish> finishes;
  long long busiest = 0;
  for (int b = 0; b < grid; ++b) {
    std::vector<split_piece> pieces;
    split_plan::cursor c = sp.first(b);  // the walk the device schedule makes
    for (split_piece pc{}; sp.next(c, pc);) pieces.push_back(pc);
    // A split block runs one piece (a schedule may let every block of a unit
    // wait for all the others, a reduce-scatter, without a cycle), of unit
    // b / p, whose blocks are b / p · p .. b / p · p + p − 1.
    if (sp.splits()) {
      EXPECT_LE(pieces.size(), 1u) << what << ": block " << b << " runs several pieces";
      const int p = sp.unit_blocks();
      EXPECT_EQ(sp.blocks % p, 0) << what;
      for (const split_piece& pc : pieces) {
        EXPECT_EQ(pc.unit, sp.whole + b / p) << what << ": block " << b << " is not in the unit unit_blocks() says";
        if (pc.role == split_piece::finishes) EXPECT_TRUE(b % p == 0 && pc.contributors_end == b + p) << what;
        if (pc.role == split_piece::contributes) EXPECT_NE(b % p, 0) << what;
      }
    }
    long long load = 0;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      const split_piece& pc = pieces[i];
      ASSERT_TRUE(pc.unit >= 0 && pc.unit < units && pc.k0 >= 0 && pc.k0 < pc.k1 && pc.k1 <= steps) << what;
      for (int k = pc.k0; k < pc.k1; ++k) ++covered[std::size_t(pc.unit * steps + k)];
      load += pc.k1 - pc.k0;
      if (i > 0) {
        const split_piece& prev = pieces[i - 1];
        EXPECT_TRUE(pc.unit > prev.unit) << what << ": block " << b << " runs its pieces out of order";
      }
      switch (pc.role) {
        case split_piece::whole:
          EXPECT_TRUE(pc.k0 == 0 && pc.k1 == steps) << what;
          break;
        case split_piece::contributes:
          EXPECT_GT(pc.k0, 0) << what;
          EXPECT_EQ(pc.unit, sp.whole + sp.begin(b) / steps) << what << ": block " << b << " contributes from a later piece";
          for (int k = pc.k0; k < pc.k1; ++k) contributor_of[std::size_t(pc.unit * steps + k)] = b;
          load += fixup / 2;
          break;
        case split_piece::finishes:
          EXPECT_TRUE(pc.k0 == 0 && pc.k1 < steps) << what;
          EXPECT_EQ(i, pieces.size() - 1) << what << ": block " << b << " finishes before its last piece";
          finishes.push_back({pc.unit, b, pc.k1, pc.contributors_end});
          load += fixup / 2 * (pc.contributors_end - b - 1);
          break;
      }
    }
    busiest = std::max(busiest, load);
  }
  for (long long i = 0; i < units * steps; ++i)
    ASSERT_EQ(covered[std::size_t(i)], 1) << what << ": step " << i % steps << " of unit " << i / steps;
  // Each finishing piece names exactly the contributors of the rest of its unit, in block order.
  int contributions = 0;
  for (long long i = 0; i < units * steps; ++i)
    if (contributor_of[std::size_t(i)] >= 0 && (i % steps == 0 || contributor_of[std::size_t(i - 1)] != contributor_of[std::size_t(i)]))
      ++contributions;
  int named = 0;
  for (const finish& f : finishes) {
    int next = f.block + 1;
    for (int k = f.k1; k < steps; ++k) {
      const int c = contributor_of[std::size_t(f.unit * steps + k)];
      ASSERT_GE(c, 0) << what << ": step " << k << " of unit " << f.unit << " is not contributed";
      if (k == f.k1 || c != contributor_of[std::size_t(f.unit * steps + k - 1)]) {
        EXPECT_EQ(c, next) << what << ": unit " << f.unit << "'s contributors are not the blocks after its finisher";
        ++next, ++named;
      }
    }
    EXPECT_EQ(next, f.end) << what << ": unit " << f.unit;
  }
  EXPECT_EQ(named, contributions) << what << ": a contributing piece no finishing piece adds";
  if (sp.splits()) {
    const long long unsplit = (units + grid - 1) / grid * (long long)steps;
    EXPECT_LT(busiest, unsplit) << what << ": the split plan is no faster by its own model";
  }
}

TEST(SplitPlan, CoversEveryStepOnce) {
  // 128 × 256 tiles on 132 SMs: the H100 GEMM rows (not split) and small grids (split).
  check_plan(512, 64, 132);    // 4096³
  check_plan(2048, 128, 132);  // 8192³
  check_plan(1792, 64, 132);   // 4096 × 14336 × 4096
  check_plan(512, 224, 132);   // 4096 × 4096 × 14336
  check_plan(256, 128, 132);   // 1024 × 8192 × 8192
  check_plan(2048, 32, 132);   // 16 × 2048³
  check_plan(1, 128, 132);     // one unit, split across blocks
  check_plan(7, 9, 132);
  check_plan(100, 64, 132);
  check_plan(32, 64, 132);
  check_plan(40, 32, 132);
  check_plan(64, 47, 132);
  std::mt19937_64 rng(case_seed("split-plan"));
  for (int t = 0; t < 400; ++t) {
    const int grid = std::uniform_int_distribution<int>(1, 160)(rng);
    const long long units = std::uniform_int_distribution<long long>(1, 700)(rng);
    const int steps = std::uniform_int_distribution<int>(1, 300)(rng);
    check_plan(units, steps, grid);
  }
}

TEST(SplitPlan, SplitsOnlyWhereItPays) {
  // Fewer units than half the blocks: each unit in p pieces, run at once.
  const split_plan four = split_plan::make(32, 64, 132, fixup);  // 1024 × 1024 × 4096 in 128 × 256 tiles
  EXPECT_TRUE(four.splits());
  EXPECT_EQ(four.blocks, 128) << "32 units in 4 pieces of 16 steps (16 + 3 fixups beats 22 + 2)";
  EXPECT_EQ(split_plan::make(64, 47, 132, fixup).blocks, 128) << "two pieces where three do not fit";
  EXPECT_EQ(split_plan::make(1, 128, 132, fixup).blocks, 8) << "one unit: 8 pieces (16 steps + 7 reads of 2) is the optimum";
  // Where every block has a unit, or units are too short for a fixup: whole.
  EXPECT_FALSE(split_plan::make(512, 64, 132, fixup).splits()) << "4096³: waves of whole units (stream-K measured slower)";
  EXPECT_FALSE(split_plan::make(100, 64, 132, fixup).splits()) << "more than half the blocks have a unit";
  EXPECT_FALSE(split_plan::make(528, 64, 132, fixup).splits());
  EXPECT_FALSE(split_plan::make(8, 4, 132, fixup).splits()) << "4 steps: a fixup costs what a split saves";
  EXPECT_FALSE(split_plan::make(8, 1, 132, fixup).splits());
  EXPECT_FALSE(split_plan::make(1, 64, 1, fixup).splits());
  EXPECT_FALSE(split_plan::unsplit(32, 64, 132).splits());
  // p pieces of a unit are p consecutive blocks, each unit's pieces starting at step 0 of block p·u.
  for (int b = 0; b < four.blocks; ++b) EXPECT_EQ(four.begin(b), 16LL * b);
}

}  // namespace
}  // namespace tessel::test
