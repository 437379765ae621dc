// tests/cuda/schedule_sm90_split_test.cu — the sm90 split kernels (Split) launched directly, and the
// dispatcher's choice between them (part of tessel_schedule_sm90_tests; schedule_sm90_test.cu says
// what the program covers).
#include "cuda/schedule_sm90_cases.hpp"

namespace tessel::test {
namespace {

using sm90_split = cuda::sm90_split_units;  // the library's split configuration (4 stages)
struct sm90_split_two_stages : cuda::sm90 {
  template <class TIn, class TOut = TIn>
  using gemm_config = cuda::sm90_tma_gemm_config<TIn, 128, 256, 64, 2, 2, false, 1, 32, true>;
};

// Shapes whose split plan splits on a 132-SM H100 (and on most devices: the
// test checks it on the one it runs on).
const shape_case split_shapes[] = {
    {1024, 1024, 4096, 1, false, false, 1.0f, 0.0f},  // 32 units of 64 steps, each in 4 pieces
    {1000, 1800, 3000, 1, false, true, 0.5f, 0.25f},  // 64 units of 47 steps in 2 (24 + 23); edges; alpha, beta
    {1280, 1024, 2048, 1, true, false, 1.0f, 0.0f},   // 40 units of 32 steps in 3 (10 + 11 + 11)
    {512, 512, 2048, 4, true, true, 1.0f, 1.0f},      // a batch of 8-unit layers, beta
    // Many contributors per finisher (piece counts under the library's cost model)
    {256, 512, 8192, 1, false, false, 1.0f, 0.0f},  // 4 units of 128 steps, each in 8 pieces
    {200, 704, 4096, 1, true, false, 0.5f, 0.25f},  // 6 units, edges in M and N, each in 5 pieces; alpha, beta
    // C rows of 2002 bytes, which no tensor map describes: the finishing block
    // adds every partial and stores through the policy's store (the others
    // reduce-scatter: each block of a unit stores a share of its panels).
    {256, 1001, 4096, 1, false, true, 0.5f, 0.25f},  // 8 units in 5 pieces; edge in N; alpha, beta
};

// Shapes whose plan on 128 × 128 units (sm90_split_narrow) splits on a 132-SM H100 / H200.
const shape_case split_narrow_shapes[] = {
    {1024, 1024, 4096, 1, false, false, 1.0f, 0.0f},  // 64 units of 64 steps, each in 2 pieces
    {640, 1024, 2048, 1, true, false, 1.0f, 0.0f},    // 40 units of 32 steps in 3 (10 + 11 + 11)
    {256, 256, 4096, 4, true, true, 1.0f, 1.0f},      // a batch of 4-unit layers in 5 pieces, beta
    {256, 512, 8192, 1, false, false, 1.0f, 0.0f},    // 8 units of 128 steps, each in 8 pieces
    {200, 704, 4096, 1, true, false, 0.5f, 0.25f},    // 12 units, edges in M and N, in 5 pieces; alpha, beta
    {100, 200, 4096, 1, false, true, 1.0f, 0.0f},     // 2 units in 5 pieces, a partial column tile
    // C rows of 2002 bytes (no tensor map): the finishing block adds every partial.
    {256, 1001, 4096, 1, false, true, 0.5f, 0.25f},  // 16 units in 5 pieces; edge in N; alpha, beta
};

// Shapes whose plan on 64 × 128 units (sm90_split_short) splits on a 132-SM H100 / H200.
const shape_case split_short_shapes[] = {
    {64, 1024, 4096, 1, false, false, 1.0f, 0.0f},  // 8 units of 64 steps, each in 5 pieces
    {56, 2048, 2048, 1, true, false, 1.0f, 0.0f},   // 16 units of 32 steps in 4; an M edge (Aᵀ rows: 112 B)
    {64, 256, 2048, 4, true, true, 1.0f, 1.0f},     // a batch of 2-unit layers in 4 pieces, beta
    {17, 200, 8192, 1, false, true, 0.5f, 0.25f},   // 2 units in 8 pieces; edges in M and N; alpha, beta
    {40, 1000, 3000, 1, true, true, 1.0f, 0.0f},    // 8 units of 47 steps in 4; edges in M, N and K
    // C rows of 2002 bytes (no tensor map): the finishing block adds every partial.
    {16, 1001, 4096, 1, false, true, 0.5f, 0.25f},  // 8 units in 5 pieces; alpha, beta
};

// What Policy's own split plan does with an m × n × k call (bf16, a batch of
// `batch`) on `sms` SMs, asked as the dispatcher asks it (split_option_of).
template <class Policy> cuda::split_option split_option_for(int m, int n, int k, int batch, int sms) {
  gemm_call call{};
  call.a = {nullptr, k, 1, (std::int64_t)m * k};
  call.b = {nullptr, n, 1, (std::int64_t)k * n};
  call.c = {nullptr, n, 1, (std::int64_t)m * n};
  call.in = call.out = dtype::bf16;
  call.m = m, call.n = n, call.k = k, call.batch = batch;
  call.alpha = 1.0f, call.beta = 0.0f;
  cuda::split_option o;
  cuda::split_option_of ask{o, sms};
  ops::gemm_typed<Policy, bf16, bf16>(call, ask);
  return o;
}

template <class Policy> void expect_split(const shape_case& s, const std::string& what) {
  if (!support::device_available()) GTEST_SKIP() << "no CUDA device";
  using probe = ops::gemm_kernel<Policy, bf16, bf16, true, true>;
  if (!cuda::use_sm90<probe, probe::warps * cuda::warp_lanes>())
    GTEST_SKIP() << "needs a device of compute capability 9.0 and this kernel built for sm_90a";
  int device = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
  EXPECT_TRUE(split_option_for<Policy>(s.m, s.n, s.k, s.batch, sms).splits)
      << what << " " << describe(s) << ": the plan does not split on " << sms << " SMs, so this tests nothing new";
  // The workspace the launcher takes from tessel's pool says the kernel ran split.
  cudaMemPool_t pool = cuda::workspace_pool(device);
  cuuint64_t zero = 0, used = 0;
  ASSERT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero), cudaSuccess);
  expect_schedule<Policy>(s, what);
  ASSERT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &used), cudaSuccess);
  EXPECT_GT(used, 0u) << what << " " << describe(s) << ": no workspace was taken, so the units ran whole";
}

TEST(ScheduleSm90, SplitUnits) {
  for (const shape_case& s : split_shapes) expect_split<sm90_split>(s, "split");
  for (const shape_case& s : shapes) expect_schedule<sm90_split>(s, "split schedule, shapes it may not split");
}
// The split kernel on 128 × 128 units (6 stages), launched directly.
TEST(ScheduleSm90, SplitNarrowUnits) {
  for (const shape_case& s : split_narrow_shapes) expect_split<cuda::sm90_split_narrow>(s, "split, 128 x 128 units");
  for (const shape_case& s : shapes)
    expect_schedule<cuda::sm90_split_narrow>(s, "split schedule on 128 x 128 units, shapes it may not split");
}
// The split kernel on 64 × 128 units (one consumer warpgroup, 8 stages), launched directly.
TEST(ScheduleSm90, SplitShortUnits) {
  for (const shape_case& s : split_short_shapes) expect_split<cuda::sm90_split_short>(s, "split, 64 x 128 units");
  for (const shape_case& s : shapes)
    expect_schedule<cuda::sm90_split_short>(s, "split schedule on 64 x 128 units, shapes it may not split");
}
// The dispatcher's choice between the split kernels, from what each plan
// does with a call (a host function: runs without a GPU too).
TEST(ScheduleSm90, SplitTileChoice) {
  using cuda::choose_split_tile;
  using cuda::split_option;
  using cuda::split_tile;
  struct row {
    int m, n, k;
    split_tile want;
  };
  // On a 132-SM H100 / H200, with the schedules' own plans.
  const row rows[] = {
      // At most 64 rows, where either 128-row plan splits: the 64 × 128 units.
      {16, 4096, 4096, split_tile::units_64x128},
      {64, 4096, 4096, split_tile::units_64x128},
      {16, 8192, 8192, split_tile::units_64x128},
      {16, 14336, 4096, split_tile::units_64x128},  // only the 128 × 256 plan splits
      {64, 100, 4096, split_tile::units_64x128},
      // 96-128 rows, where either 128-row plan splits: two rows of 64 × 128 units.
      {128, 4096, 4096, split_tile::units_64x128},
      {96, 4096, 4096, split_tile::units_64x128},
      {128, 8192, 8192, split_tile::units_64x128},
      {100, 200, 4096, split_tile::units_64x128},
      {128, 14336, 4096, split_tile::units_64x128},
      // 65-95 rows (one row of 128): the blocks times the B bytes each keeps in flight (96 KiB against 128).
      {80, 4096, 4096, split_tile::units_128x128},  // 32 units in 4 pieces (128 blocks) against 16 in 5 (80)
      {65, 2048, 2048, split_tile::units_128x128},  // 64 blocks against 32
      {95, 200, 4096, split_tile::units_128x128},   // 10 blocks against 5
      {80, 8192, 8192, split_tile::units_128x256},  // 128 blocks either way
      {90, 4096, 14336, split_tile::units_128x256}, // the same
      {80, 14336, 4096, split_tile::units_128x256}, // 112 units whole against 56 in 2 pieces
      {90, 100, 4096, split_tile::units_128x128},   // one unit either way; C of 100 columns
      {80, 300, 4096, split_tile::units_128x128},   // 15 blocks against 10: the GEMM case that reaches it
      // More rows: the 64 × 128 units where all of them run at once ...
      {129, 4096, 4096, split_tile::units_64x128},    // 96 units whole
      {256, 512, 16384, split_tile::units_64x128},    // 16 units in 8 pieces
      {1024, 1024, 4096, split_tile::units_64x128},   // 128 units whole
      {640, 1024, 2048, split_tile::units_64x128},    // 80 units whole
      // ... else the 128 × 128 units where they run on as many blocks or more.
      {512, 4096, 4096, split_tile::units_128x128},   // 128 units whole against 64 in 2 pieces (256 of 64 × 128)
      {256, 8192, 8192, split_tile::units_128x128},   // the same
      {1280, 1024, 2048, split_tile::units_128x256},  // 80 units whole against 40 in 3 pieces (120 blocks)
      // Neither plan splits: the units whole, on the smaller units where all of them run at once ...
      {1024, 1024, 1024, split_tile::units_64x128},   // 128 units against 32 of 128 × 256
      {768, 768, 768, split_tile::units_64x128},      // 72 against 18
      {64, 8192, 1024, split_tile::units_64x128},     // 64 against 32
      {2048, 1024, 1024, split_tile::units_128x128},  // 128 against 64 (256 of 64 × 128: two waves)
      {80, 4096, 1024, split_tile::units_128x128},    // one row of 128-row units: 32 against 16
      {8192, 128, 1024, split_tile::units_64x128},    // 128 against 64 of 128 × 256 (C of 128 columns)
      // ... or more waves of the 128 × 128 units where they cost less (cheaper_whole_tile) ...
      {2560, 4096, 4096, split_tile::units_128x128},  // 640 units in 5 waves against 224 of 192 × 256 in 2
      {4096, 3584, 4096, split_tile::units_128x128},  // 896 in 7 against 448 of 128 × 256 in 4
      // ... else the unsplit kernels (plain-store calls: on 128 × 192 units where they cost less).
      {3072, 3072, 3072, split_tile::none},  // 384 units of 128 × 192 in 3 waves against 576 of 128 × 128 in 5
      {1024, 6144, 4096, split_tile::none},  // 256 of 128 × 192 in 2 against 384 of 128 × 128 in 3
      {5120, 5120, 5120, split_tile::none},  // 1600 units in 13 waves against 800 of 128 × 256 in 7
      {1536, 1536, 1536, split_tile::none},  // 96 units of 128 × 192 in one wave; 144 of 128 × 128 in two
      {1601, 1704, 40, split_tile::none},    // 117 units of 128 × 192, 182 of 128 × 128: the GEMM case
      {4096, 4096, 4096, split_tile::none},
      {16, 32768, 4096, split_tile::none},  // 128 units of 128 × 256
  };
  for (const row& r : rows)
    EXPECT_EQ(choose_split_tile(split_option_for<cuda::sm90_split_units>(r.m, r.n, r.k, 1, 132),
                                split_option_for<cuda::sm90_split_narrow>(r.m, r.n, r.k, 1, 132),
                                split_option_for<cuda::sm90_split_short>(r.m, r.n, r.k, 1, 132), r.m, r.n,
                                cuda::cheaper_whole_tile(r.m, r.n, r.k, 1, 132, cuda::wide_tile_pays(r.m, r.n, 1, 132),
                                                         true) == cuda::whole_tile::units_128x128),
              r.want)
        << r.m << " x " << r.n << " x " << r.k;
  // Forced (TESSEL_CUDA_SPLIT_TILE): 128 × 256 where its own plan splits,
  // 128 × 128, 64 × 128 and none (the unsplit kernels) on any call; the
  // 128 × 128 units' cheaper waves count only where no plan splits and
  // nothing is forced.
  const split_option none{false, 132}, eighty{true, 80}, all{true, 128}, whole{false, 128, true};
  const std::optional<split_tile> unforced;
  struct forced_row {
    split_option wide, narrow, shorter;
    int m, n;
    bool cheaper;
    std::optional<split_tile> forced;
    split_tile want;
  };
  const forced_row forced_rows[] = {
      {eighty, all, all, 128, 4096, false, split_tile::units_128x256, split_tile::units_128x256},
      {none, all, all, 128, 100, false, split_tile::units_128x256, split_tile::none},
      {all, none, none, 16, 8192, false, split_tile::units_128x128, split_tile::units_128x128},
      {none, none, none, 1024, 1024, false, split_tile::units_128x128, split_tile::units_128x128},
      {eighty, all, all, 64, 4096, false, split_tile::units_64x128, split_tile::units_64x128},
      {eighty, all, all, 80, 4096, false, split_tile::units_64x128, split_tile::units_64x128},
      {eighty, all, all, 1024, 1024, false, split_tile::units_64x128, split_tile::units_64x128},
      {eighty, all, all, 64, 4096, false, split_tile::units_128x128, split_tile::units_128x128},
      {none, none, none, 1024, 1024, false, split_tile::units_64x128, split_tile::units_64x128},
      {none, none, none, 1024, 1024, false, split_tile::units_128x256, split_tile::none},
      {eighty, all, all, 64, 4096, false, split_tile::none, split_tile::none},
      {none, none, whole, 1024, 1024, false, unforced, split_tile::units_64x128},
      {none, none, whole, 1024, 1024, false, split_tile::none, split_tile::none},
      {none, none, none, 3072, 3072, true, unforced, split_tile::units_128x128},
      {none, none, none, 3072, 3072, true, split_tile::none, split_tile::none},
      {eighty, all, all, 64, 4096, true, unforced, split_tile::units_64x128},
  };
  for (const forced_row& r : forced_rows)
    EXPECT_EQ(choose_split_tile(r.wide, r.narrow, r.shorter, r.m, r.n, r.cheaper, r.forced), r.want)
        << "row " << (&r - forced_rows) << ": " << r.m << " x " << r.n;
}
// The split tests' shapes split on a 132-SM H100 / H200, as their comments
// say (a host check: the device tests assert it on the device's own SM count).
TEST(ScheduleSm90, SplitShapesSplitOn132Sms) {
  for (const shape_case& s : split_shapes) {
    EXPECT_TRUE((split_option_for<sm90_split>(s.m, s.n, s.k, s.batch, 132).splits)) << describe(s);
    EXPECT_TRUE((split_option_for<sm90_split_two_stages>(s.m, s.n, s.k, s.batch, 132).splits)) << describe(s);
  }
  for (const shape_case& s : split_narrow_shapes)
    EXPECT_TRUE((split_option_for<cuda::sm90_split_narrow>(s.m, s.n, s.k, s.batch, 132).splits)) << describe(s);
  for (const shape_case& s : split_short_shapes)
    EXPECT_TRUE((split_option_for<cuda::sm90_split_short>(s.m, s.n, s.k, s.batch, 132).splits)) << describe(s);
}
TEST(ScheduleSm90, SplitUnitsTwoStages) {
  for (const shape_case& s : split_shapes) expect_split<sm90_split_two_stages>(s, "split, two stages");
}

}  // namespace
}  // namespace tessel::test
