// tests/split_plan_test.cpp — the stream-K plan (core/split_plan.hpp), on the host.
//
// For many (units, steps, grid), walking every block's pieces must cover each
// step of each unit exactly once; a block's pieces come in order, whole units
// first; a block contributes at most once, with its range's first piece; a
// unit's finishing piece is its block's last and names exactly the blocks
// whose contributing pieces cover the rest of the unit; and where the plan
// splits, its busiest block (fixups counted) finishes before the unsplit
// schedule's. Where it must not split (whole waves, short units), it does not.
// A tail launch's plan (split_plan::tail) does the same for the units of the
// partial last wave alone, and runs no other unit.
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

// Walks every block of `sp` (a plan for units sp.start .. units − 1) and checks
// the pieces; `busiest`: the busiest block's steps, fixups counted.
void check_walk(const split_plan& sp, long long units, int steps, int grid, const std::string& what,
                long long& busiest) {
  std::vector<int> covered(std::size_t(units * steps), 0);
  std::vector<int> contributor_of(std::size_t(units * steps), -1);  // block whose contributing piece covers the step
  struct finish {
    long long unit;
    int block, k1, end;
  };
  std::vector<finish> finishes;
  busiest = 0;
  for (int b = 0; b < grid; ++b) {
    std::vector<split_piece> pieces;
    split_plan::cursor c = sp.first(b);  // the walk the device schedule makes
    for (split_piece pc{}; sp.next(c, pc);) pieces.push_back(pc);
    long long load = 0;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      const split_piece& pc = pieces[i];
      ASSERT_TRUE(pc.unit >= sp.start && pc.unit < units && pc.k0 >= 0 && pc.k0 < pc.k1 && pc.k1 <= steps) << what;
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
  for (long long i = sp.start * steps; i < units * steps; ++i)
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
}

void check_plan(long long units, int steps, int grid) {
  const split_plan sp = split_plan::make(units, steps, grid, fixup);
  const std::string what = describe(units, steps, grid);
  long long busiest = 0;
  check_walk(sp, units, steps, grid, what, busiest);
  if (sp.splits()) {
    const long long unsplit = (units + grid - 1) / grid * (long long)steps;
    EXPECT_LT(busiest, unsplit) << what << ": the split plan is no faster by its own model";
  }
}

// The tail launch of (units, steps, grid) from `first` on: every step of
// units first .. units − 1 once; where tail_start() chose `first`, the tail's
// busiest block (fixups counted) beats one unit's steps.
void check_tail(long long units, long long first, int steps, int grid) {
  const std::string what = describe(units, steps, grid) + ", tail from unit " + std::to_string(first);
  const split_plan sp = split_plan::tail(units, first, steps, grid);
  EXPECT_EQ(sp.start, first) << what;
  long long busiest = 0;
  check_walk(sp, units, steps, grid, what, busiest);
  if (first == split_plan::tail_start(units, steps, grid, fixup, 0) && first < units) EXPECT_LT(busiest, steps) << what;
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

TEST(SplitPlan, TailCoversThePartialWaveOnce) {
  // The H100 GEMM rows with a partial last wave (128 × 256 tiles, 132 SMs).
  check_tail(2048, 1980, 128, 132);  // 8192³
  check_tail(2048, 1980, 32, 132);   // 16 × 2048³
  check_tail(1792, 1716, 64, 132);   // 4096 × 14336 × 4096
  check_tail(512, 396, 224, 132);    // 4096 × 4096 × 14336
  check_tail(300, 264, 7, 132);      // a range shorter than a unit's pieces
  check_tail(140, 132, 3, 132);      // most blocks without a step
  std::mt19937_64 rng(case_seed("split-plan-tail"));
  for (int t = 0; t < 400; ++t) {
    const int grid = std::uniform_int_distribution<int>(1, 160)(rng);
    const long long units = std::uniform_int_distribution<long long>(grid, 900)(rng);
    const int steps = std::uniform_int_distribution<int>(1, 300)(rng);
    const long long first = std::uniform_int_distribution<long long>(0, units)(rng);
    check_tail(units, first, steps, grid);
    check_tail(units, units / grid * grid, steps, grid);
  }
}

TEST(SplitPlan, TailOnlyWhereItPays) {
  constexpr int fixed = 4;
  // Half a wave left over: its units shared out (~S/2 steps a block) beat S.
  EXPECT_EQ(split_plan::tail_start(2048, 128, 132, fixup, fixed), 1980) << "8192³";
  EXPECT_EQ(split_plan::tail_start(2048, 32, 132, fixup, fixed), 1980) << "16 × 2048³";
  EXPECT_EQ(split_plan::tail_start(1792, 64, 132, fixup, fixed), 1716) << "4096 × 14336 × 4096";
  // Nearly a whole wave left (116 of 132 units): a range of 57 of 64 steps plus fixups does not.
  EXPECT_EQ(split_plan::tail_start(512, 64, 132, fixup, fixed), 512) << "4096³";
  EXPECT_EQ(split_plan::tail_start(256, 128, 132, fixup, fixed), 256) << "1024 × 8192 × 8192";
  // Whole waves, fewer units than blocks (make()'s case), units too short.
  EXPECT_EQ(split_plan::tail_start(528, 64, 132, fixup, fixed), 528);
  EXPECT_EQ(split_plan::tail_start(100, 64, 132, fixup, fixed), 100);
  EXPECT_EQ(split_plan::tail_start(140, 8, 132, fixup, fixed), 140) << "8 steps: the fixups cost what the tail saves";
  EXPECT_EQ(split_plan::tail_start(140, 1, 132, fixup, fixed), 140);
  EXPECT_EQ(split_plan::tail_start(5, 64, 0, fixup, fixed), 5);
  // A tail plan runs no whole unit and starts every block in the tail.
  const split_plan t = split_plan::tail(2048, 1980, 128, 132);
  EXPECT_TRUE(t.splits());
  for (int b = 0; b < 132; ++b) {
    split_plan::cursor c = t.first(b);
    split_piece pc{};
    ASSERT_TRUE(t.next(c, pc));
    EXPECT_NE(pc.role, split_piece::whole) << "block " << b;
    EXPECT_EQ(pc.unit, 1980 + t.begin(b) / 128) << "block " << b;
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
