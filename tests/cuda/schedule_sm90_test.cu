// tests/cuda/schedule_sm90_test.cu — the Hopper TMA schedule in the shapes the default GEMM config does not reach.
//
// The library's sm90 GEMM runs the schedule cooperatively (2 consumer
// warpgroups share a 128 × 256 unit, 3 stages, single blocks); the GEMM tests
// cover that. Here the same stage bodies (ops/gemm/kernel.hpp) run under
// other configurations of the schedule:
//   alternating: 128 × 128 units, each taken whole by one of 2 consumer
//     warpgroups in turn, 5 stages (the turn barriers; the ring skipping the
//     other consumer's steps);
//   cooperative with 2 stages: the ring wraps every other step;
//   4 stages with 16 KiB of epilogue staging per consumer (8 KiB rounds);
//   cluster pairs, 3 stages and 2 (odd unit counts, pairs that cannot share B,
//   B multicast by panels and by lines);
//   split units (Split), the library's 4 stages and 2, its 128 × 128 units
//   (6 stages) and its 64 × 128 units (one consumer, 8 stages): on shapes whose plan splits on this
//   device (checked): units in two, three, four, five and eight pieces, a
//   batch; each block of a unit adds the others' partials of its share of
//   the panels before alpha / beta and stores that share, or (a C no tensor
//   map describes) the finishing piece adds them all;
//   the plain-store kernel (the library's for alpha 1, beta 0 into a
//   TMA-storable C) launched directly, and its prepare() refusing a C no
//   tensor map describes (the dispatcher must never hand it one);
//   three consumer warpgroups on 192 × 256 units, which load their own
//   stages (the wide plain-store kernel, and its configuration with the
//   general epilogue).
// Shapes give every block several units with more steps than stages (the
// case a parity wait alone gets wrong), edges in M, N and K, batches, all four
// majorness combinations, and alpha/beta. C (poisoned) is checked on 2048
// sampled entries against float64, and whole against the portable path.
// Runs only where the sm90 policy would (policy_choice.hpp's use_sm90).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "device_buffer.hpp"
#include "seed.hpp"
#include "tessel/cuda/gemm_instance.hpp"
#include "tessel/cuda/policy_choice.hpp"
#include "tessel/tessel.hpp"

namespace tessel::test {
namespace {

struct sm90_alternating : cuda::sm90 {
  template <class TIn, class TOut = TIn>
  using gemm_config = cuda::sm90_tma_gemm_config<TIn, 128, 128, 64, 2, 5, true>;
};
struct sm90_two_stages : cuda::sm90 {
  template <class TIn, class TOut = TIn>
  using gemm_config = cuda::sm90_tma_gemm_config<TIn, 128, 256, 64, 2, 2>;
};
struct sm90_four_stages : cuda::sm90 {
  template <class TIn, class TOut = TIn>
  using gemm_config = cuda::sm90_tma_gemm_config<TIn, 128, 256, 64, 2, 4, false, 1, 16>;
};
struct sm90_cluster_pairs : cuda::sm90 {
  template <class TIn, class TOut = TIn>
  using gemm_config = cuda::sm90_tma_gemm_config<TIn, 128, 256, 64, 2, 3, false, 2>;
};
struct sm90_pairs_two_stages : cuda::sm90 {
  template <class TIn, class TOut = TIn>
  using gemm_config = cuda::sm90_tma_gemm_config<TIn, 128, 256, 64, 2, 2, false, 2>;
};
using sm90_split = cuda::sm90_split_units;  // the library's split configuration (4 stages)
struct sm90_split_two_stages : cuda::sm90 {
  template <class TIn, class TOut = TIn>
  using gemm_config = cuda::sm90_tma_gemm_config<TIn, 128, 256, 64, 2, 2, false, 1, 32, true>;
};
// The wide plain-store kernel's configuration with the general epilogue (alpha, beta).
struct sm90_three_consumers : cuda::sm90 {
  template <class TIn, class TOut = TIn>
  using gemm_config = cuda::sm90_tma_gemm_config<TIn, 192, 256, 64, 3, 3, false, 1, 16>;
};

struct shape_case {
  int m, n, k, batch;
  bool ta, tb;
  float alpha, beta;
};

std::string describe(const shape_case& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " batch " +
         std::to_string(s.batch) + (s.ta ? " ta" : "") + (s.tb ? " tb" : "") + " alpha " + std::to_string(s.alpha) +
         " beta " + std::to_string(s.beta);
}

template <class Policy> void expect_schedule(const shape_case& s, const std::string& what) {
  using T = bf16;
  if (!support::device_available()) GTEST_SKIP() << "no CUDA device";
  using probe = ops::gemm_kernel<Policy, T, T, true, true>;
  if (!cuda::use_sm90<probe, probe::warps * cuda::warp_lanes>())
    GTEST_SKIP() << "needs a device of compute capability 9.0 and this kernel built for sm_90a";
  const std::uint64_t seed = case_seed("schedule-sm90-" + what + describe(s));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  // Packed operands: A [batch, M, K] (or [batch, K, M] when ta), B [batch, K, N] (or [batch, N, K]).
  const std::int64_t sa = std::int64_t(s.m) * s.k, sb = std::int64_t(s.k) * s.n, sc = std::int64_t(s.m) * s.n;
  std::vector<T> a(sa * s.batch), b(sb * s.batch), c0(sc * s.batch);
  for (T& x : a) x = convert<T>(u(rng));
  for (T& x : b) x = convert<T>(u(rng));
  for (T& x : c0) x = convert<T>(u(rng));
  const device dev = device::cuda(0);
  support::device_buffer da(dev, a.size() * 2), db(dev, b.size() * 2), dc(dev, c0.size() * 2), dr(dev, c0.size() * 2);
  da.upload(a.data(), a.size() * 2);
  db.upload(b.data(), b.size() * 2);
  std::vector<T> poison(c0.size());
  for (T& x : poison) x = T::from_bits(0x7fc1);  // NaN: an unwritten element shows
  dc.upload(s.beta != 0.0f ? c0.data() : poison.data(), c0.size() * 2);
  dr.upload(s.beta != 0.0f ? c0.data() : poison.data(), c0.size() * 2);

  // The call as src/gemm.cpp reduces it (transposes folded into the strides).
  gemm_call call{};
  call.a = {da.data(), s.ta ? 1 : s.k, s.ta ? s.m : 1, sa};
  call.b = {db.data(), s.tb ? 1 : s.n, s.tb ? s.k : 1, sb};
  call.c = {dc.data(), s.n, 1, sc};
  call.in = call.out = dtype::bf16;
  call.m = s.m, call.n = s.n, call.k = s.k, call.batch = s.batch;
  call.alpha = s.alpha, call.beta = s.beta;
  bool fits = false;  // the kernel is launched directly: no aligned copy of what a tensor map cannot describe
  cuda::sm90_applies<T, T> check{fits};
  ops::gemm_typed<Policy, T, T>(call, check);
  ASSERT_TRUE(fits) << what << " " << describe(s)
                    << ": no tensor map describes these operands, so this shape cannot test the kernel";
  cuda::gemm_launcher launch{nullptr};
  ops::gemm_typed<Policy, T, T>(call, launch);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what << " " << describe(s);

  // The portable path on the same inputs, through the public API.
  const auto view = [&](void* p, std::int64_t r, std::int64_t cols) {
    return tensor_view::contiguous(p, dtype::bf16, {s.batch, r, cols}, dev);
  };
  gemm_options o;
  o.alpha = s.alpha, o.beta = s.beta, o.trans_a = s.ta, o.trans_b = s.tb, o.path = kernel_path::portable;
  gemm(view(da.data(), s.ta ? s.k : s.m, s.ta ? s.m : s.k), view(db.data(), s.tb ? s.n : s.k, s.tb ? s.k : s.n),
       view(dr.data(), s.m, s.n), o);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<T> got(c0.size()), portable(c0.size());
  dc.download(got.data(), got.size() * 2);
  dr.download(portable.data(), portable.size() * 2);

  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = to_float(got[i]), r = to_float(portable[i]);
    ASSERT_TRUE(std::isfinite(g)) << what << " " << describe(s) << ": C element " << i << " not written";
    num += (g - r) * (g - r);
    den += r * r;
  }
  EXPECT_LT(std::sqrt(num / den), 2 * 0.0078125) << what << " " << describe(s) << ": vs the portable path";

  std::uniform_int_distribution<std::int64_t> pick(0, std::int64_t(got.size()) - 1);
  double enum_ = 0, eden = 0;
  for (int t = 0; t < 2048; ++t) {
    const std::int64_t e = pick(rng), z = e / sc, i = (e % sc) / s.n, j = e % s.n;
    double ref = 0;
    for (int kk = 0; kk < s.k; ++kk) {
      const double av = to_float(a[z * sa + (s.ta ? std::int64_t(kk) * s.m + i : i * s.k + kk)]);
      const double bv = to_float(b[z * sb + (s.tb ? j * s.k + kk : std::int64_t(kk) * s.n + j)]);
      ref += av * bv;
    }
    ref = s.alpha * ref + (s.beta != 0.0f ? s.beta * double(to_float(c0[e])) : 0.0);
    const double g = to_float(got[e]);
    enum_ += (g - ref) * (g - ref);
    eden += ref * ref;
  }
  EXPECT_LT(std::sqrt(enum_ / eden), 0.0078125) << what << " " << describe(s) << ": vs float64 (seed " << seed << ")";
}

const shape_case shapes[] = {
    {2048, 2048, 1024, 1, false, false, 1.0f, 0.0f},  // 2 units per block at 128 × 128, 16 steps
    {1000, 1800, 1000, 1, false, true, 0.5f, 0.25f},  // edges in M, N and K; alpha, beta
    {640, 1152, 704, 3, true, false, 1.0f, 0.0f},     // a batch, A transposed
    {1536, 2304, 448, 2, true, true, 1.0f, 1.0f},     // both transposed, batched, beta
    // Cluster pairs at 128 × 256: 640 x 1152 has 5 x 5 tiles per layer, 75 in
    // all — an odd count (the last pair's second block a copy, not stored),
    // pairs across B columns (strips of 5 block-rows) and across layers, so
    // not multicast; the others pair within strips and multicast B, by panels
    // (B N-contiguous) or by halves of each panel's lines (B K-contiguous).
    {100, 200, 3000, 1, false, true, 1.0f, 0.0f},  // one unit: a pair whose second block only helps load
};

// Three consumer warpgroups at 192 × 256 (self-loading: thread 0 of the
// consumers issues the copies): several units per block, M not a multiple of
// 192 (the last row of units part padding), batches, every transpose. Every
// matrix's rows 16-byte aligned, as a tensor map needs (the dispatcher copies
// other matrices aligned first; these launch the kernel directly).
const shape_case wide_shapes[] = {
    {3072, 4096, 512, 1, false, false, 1.0f, 0.0f},  // 256 units: two per block on an H100
    {1496, 3000, 712, 2, true, true, 1.0f, 0.0f},    // edges in M, N and K; a batch; both transposed
    {2000, 1000, 1100, 1, true, false, 1.0f, 0.0f},  // 11 block-rows, the last of 80 rows
    {1500, 3000, 712, 2, false, true, 0.5f, 0.25f},  // alpha, beta (the general epilogue only)
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

// A plain-store kernel (C = A·B as it is) on those of `cases` with alpha 1 and
// beta 0; returns how many ran, so that a test can insist there were some.
template <class Policy, std::size_t N>
int expect_plain_cases(const shape_case (&cases)[N], const std::string& what) {
  int run = 0;
  for (const shape_case& s : cases)
    if (s.alpha == 1.0f && s.beta == 0.0f) {
      expect_schedule<Policy>(s, what);
      ++run;
    }
  return run;
}

// What a launcher of the plain-store kernel would do first: prepare its parameters.
struct prepare_only {
  template <class Tag, class Problem> void operator()(Tag, const Problem& problem) const {
    (void)Tag::type::prepare(problem);
  }
};

TEST(ScheduleSm90, PlainStore) {
  EXPECT_GE(expect_plain_cases<cuda::sm90_plain_store>(shapes, "plain store"), 3);
  if (!support::device_available()) GTEST_SKIP() << "no CUDA device";
  using probe = ops::gemm_kernel<cuda::sm90_plain_store, bf16, bf16, true, true>;
  if (!cuda::use_sm90<probe, probe::warps * cuda::warp_lanes>())
    GTEST_SKIP() << "needs a device of compute capability 9.0 and this kernel built for sm_90a";
  // C with 257 columns to a row of 257 elements: 514 bytes, no tensor map's row
  // stride (A and B, K-contiguous rows of 64, are fine).
  const int m = 128, n = 257, k = 64;
  const device dev = device::cuda(0);
  support::device_buffer da(dev, m * k * 2), db(dev, k * n * 2), dc(dev, m * n * 2);
  gemm_call call{};
  call.a = {da.data(), k, 1, 0};
  call.b = {db.data(), 1, k, 0};
  call.c = {dc.data(), n, 1, 0};
  call.in = call.out = dtype::bf16;
  call.m = m, call.n = n, call.k = k, call.batch = 1;
  call.alpha = 1.0f, call.beta = 0.0f;
  prepare_only prepare;
  try {
    ops::gemm_typed<cuda::sm90_plain_store, bf16, bf16>(call, prepare);
    ADD_FAILURE() << "the plain-store kernel prepared a C of row stride 257 (no tensor map describes it)";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("plain-store"), std::string::npos) << e.what();
  }
}

TEST(ScheduleSm90, AlternatingConsumers) {
  for (const shape_case& s : shapes) expect_schedule<sm90_alternating>(s, "alternating");
}
TEST(ScheduleSm90, CooperativeTwoStages) {
  for (const shape_case& s : shapes) expect_schedule<sm90_two_stages>(s, "two stages");
}
TEST(ScheduleSm90, FourStagesSmallEpilogue) {
  for (const shape_case& s : shapes) expect_schedule<sm90_four_stages>(s, "four stages, 16 KiB epilogue");
}
TEST(ScheduleSm90, ClusterPairs) {
  for (const shape_case& s : shapes) expect_schedule<sm90_cluster_pairs>(s, "cluster pairs");
}
TEST(ScheduleSm90, ClusterPairsTwoStages) {
  for (const shape_case& s : shapes) expect_schedule<sm90_pairs_two_stages>(s, "cluster pairs, two stages");
}
TEST(ScheduleSm90, SplitUnits) {
  for (const shape_case& s : split_shapes) expect_split<sm90_split>(s, "split");
  for (const shape_case& s : shapes) expect_schedule<sm90_split>(s, "split schedule, shapes it may not split");
}
TEST(ScheduleSm90, ThreeConsumers) {
  for (const shape_case& s : shapes) expect_schedule<sm90_three_consumers>(s, "three consumers");
  for (const shape_case& s : wide_shapes) expect_schedule<sm90_three_consumers>(s, "three consumers");
}
// The wide plain-store kernel, launched directly (the dispatcher's choice
// is the GEMM tests'), on the shapes with alpha 1 and beta 0.
TEST(ScheduleSm90, WideStore) {
  const int run = expect_plain_cases<cuda::sm90_wide_store>(shapes, "wide store");
  EXPECT_GE(run + expect_plain_cases<cuda::sm90_wide_store>(wide_shapes, "wide store"), 6);
}
// The dispatcher's choice between the 128 × 256 and the wide plain-store
// kernel on a 132-SM H100 (a host function: runs without a GPU too).
TEST(ScheduleSm90, WideTilePaysWhereItsWavesCostNoMore) {
  struct row {
    int m, n, batch;
    bool wide;
  };
  const row rows[] = {
      // The issue-8 shapes stay on 128 × 256: 192 rows would fill their waves worse.
      {4096, 4096, 1, false}, {8192, 8192, 1, false}, {4096, 14336, 1, false}, {1024, 8192, 1, false},
      {2048, 2048, 16, false},
      // Where the waves cost the same or less (measured faster: bench/notes/cuda_gemm.md, session 32).
      {6144, 4096, 1, true}, {3072, 4096, 1, true}, {1536, 2048, 16, true}, {1500, 3000, 1, true},
      // One wave either way: 192-row units would take longer.
      {1024, 1024, 1, false}, {128, 256, 1, false}, {1601, 1704, 1, false}};
  for (const row& r : rows)
    EXPECT_EQ(cuda::wide_tile_pays(r.m, r.n, r.batch, 132), r.wide) << r.m << " x " << r.n << " batch " << r.batch;
  EXPECT_FALSE(cuda::wide_tile_pays(6144, 4096, 1, 0)) << "no SM count: never the wide kernel";
}
// The plain-store kernel on 128 × 192 units, launched directly, on the
// shapes with alpha 1 and beta 0 (edges in M, N and K; batches; transposes).
TEST(ScheduleSm90, N192Store) {
  const int run = expect_plain_cases<cuda::sm90_n192_store>(shapes, "128 x 192 store");
  EXPECT_GE(run + expect_plain_cases<cuda::sm90_n192_store>(wide_shapes, "128 x 192 store"), 6);
}
// The forcing variables' parser (TESSEL_CUDA_SPLIT_TILE, TESSEL_CUDA_PLAIN_TILE):
// a named choice, nothing where unset or empty, an Error naming the choices else.
TEST(ScheduleSm90, EnvChoiceNamesTheChoices) {
  enum class pick { a, b, c };
  const std::pair<const char*, pick> names[] = {{"a1", pick::a}, {"b2", pick::b}, {"c3", pick::c}};
  const char* var = "TESSEL_TEST_ENV_CHOICE";
  ASSERT_EQ(unsetenv(var), 0);
  EXPECT_FALSE(cuda::env_choice(var, names).has_value());
  ASSERT_EQ(setenv(var, "", 1), 0);
  EXPECT_FALSE(cuda::env_choice(var, names).has_value());
  ASSERT_EQ(setenv(var, "b2", 1), 0);
  EXPECT_EQ(cuda::env_choice(var, names), pick::b);
  ASSERT_EQ(setenv(var, "b", 1), 0);
  try {
    (void)cuda::env_choice(var, names);
    ADD_FAILURE() << "a value no choice names was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("TESSEL_TEST_ENV_CHOICE must be a1, b2 or c3 (or unset), not 'b'"),
              std::string::npos)
        << e.what();
  }
  ASSERT_EQ(unsetenv(var), 0);
}
// The dispatcher's choice of smaller units whole over the unsplit kernel for
// calls of more than one wave of them (cheaper_whole_tile), on a 132-SM
// H100 / H200 (a host function: runs without a GPU too).
TEST(ScheduleSm90, WholeTileWhereItsWavesCostLess) {
  using cuda::whole_tile;
  struct row {
    int m, n, k, batch;
    whole_tile plain, general;  // for a plain-store call (128 × 192 allowed) and for another
  };
  const whole_tile un = whole_tile::unsplit, narrow = whole_tile::units_128x128, n192 = whole_tile::units_128x192;
  const row rows[] = {
      // Measured faster on 128 × 128 units (bench/notes/cuda_gemm.md, session 41: +4 to +22%) ...
      {2048, 5120, 5120, 1, narrow, narrow}, {4096, 3584, 4096, 1, narrow, narrow}, {2560, 4096, 4096, 1, narrow, narrow},
      {4608, 3072, 4096, 1, narrow, narrow},  // 128 × 192 measured level with them (session 42)
      // ... or on 128 × 192 ones (session 42: +14 to +24% over 128 × 128 and 128 × 256).
      {3072, 3072, 3072, 1, n192, narrow}, {1536, 1536, 1536, 1, n192, un},
      // Predicted cheaper on 128 × 192 units (not measured there).
      {1024, 6144, 4096, 1, n192, narrow}, {3072, 3072, 1024, 1, n192, narrow},
      // Measured slower or no faster on either (−1 to −12%).
      {5120, 5120, 5120, 1, un, un}, {3072, 4096, 4096, 1, un, un}, {2048, 2048, 2048, 1, un, un},
      {2560, 2560, 2560, 1, un, un}, {6144, 3072, 4096, 1, un, un}, {3072, 6144, 4096, 1, un, un},
      {2048, 6144, 4096, 1, un, un},
      // The issue-8 shapes: full waves of 128 × 256 units.
      {4096, 4096, 4096, 1, un, un}, {8192, 8192, 8192, 1, un, un}, {4096, 14336, 4096, 1, un, un},
      {4096, 4096, 14336, 1, un, un}, {1024, 8192, 8192, 1, un, un}, {2048, 2048, 2048, 16, un, un},
      // The GEMM cases that reach the unsplit kernels: 117 units of 128 × 192 in one wave against 91
      // of 128 × 256 in one; 130 of 128 × 256 in one against 182 of 128 × 192 in two; 192 × 256.
      {1601, 1704, 40, 1, n192, un}, {1601, 2500, 40, 1, un, un}, {1500, 3000, 70, 1, un, un}};
  for (const row& r : rows) {
    const bool wide = cuda::wide_tile_pays(r.m, r.n, r.batch, 132);
    EXPECT_EQ(cuda::cheaper_whole_tile(r.m, r.n, r.k, r.batch, 132, wide, true), r.plain)
        << r.m << " x " << r.n << " x " << r.k << " batch " << r.batch << ", plain store";
    EXPECT_EQ(cuda::cheaper_whole_tile(r.m, r.n, r.k, r.batch, 132, false, false), r.general)
        << r.m << " x " << r.n << " x " << r.k << " batch " << r.batch << ", general epilogue";
  }
  EXPECT_EQ(cuda::cheaper_whole_tile(3072, 3072, 3072, 1, 0, false, true), un) << "no SM count: the unsplit kernel";
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
