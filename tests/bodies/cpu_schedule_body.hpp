// tests/bodies/cpu_schedule_body.hpp — the CPU's packed_schedule (backends/cpu/schedule_packed.hpp)
// against the portable ring_schedule, on one CPU policy per program.
//
// Built once per CPU policy this machine can run (tests/CMakeLists.txt):
// TESSEL_SCHEDULE_TEST_POLICY is 0 (scalar: the generic tile ops, launched
// block by block through cpu::launch, i.e. packed_schedule::run), 1 (AVX2) or
// 2 (AVX-512) (simd_policy::launch: claims from a shared counter, run_range).
// Checked:
//   * attention (resident Q tiles, per-unit step counts under a causal mask):
//     bit-identical out and LSE from the two schedules;
//   * bit-identical C from the two schedules on the same policy, tuning and
//     inputs — edges, batches (B shared across the batch too), transposes,
//     fp32 / bf16 / fp16 in, fp32 / fp16 out, beta 0 over NaN and beta != 0,
//     K = 0, 1 and 3 threads;
//   * the raster: runs of block rows × block columns covering every tile once;
//   * the launcher's claims: within their group and segment, the tail's
//     pieces by the op's unit costs (by count without them); its arenas
//     (with_threads: the concurrency asked for, kept per thread and count);
//   * the SIMD policies' overwriting mma (every fragment written), and their
//     attention mma_skipping (the products a mask hides, in the SIMD vectors' blocks,
//     and no others: tests/cpu/mma_skipping_check.hpp);
//   * the reuse itself: the number of operand copies the packed schedule
//     makes on one thread equals, per run of the raster and step, one copy
//     of each A tile (block row) and of each B tile (block column) in it;
//     for attention, per group of query tiles and step, one Kᵀ and one V.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <tbb/task_arena.h>

#include "cpu/mma_skipping_check.hpp"
#include "param_name.hpp"
#include "seed.hpp"
#include "tessel/core/pipeline.hpp"
#include "tessel/cpu/launch.hpp"
#include "tessel/cpu/schedule_packed.hpp"
#include "tessel/ops/attention/kernel.hpp"
#include "tessel/ops/gemm/kernel.hpp"

#if TESSEL_SCHEDULE_TEST_POLICY == 0
#include "tessel/cpu/policy_scalar.hpp"
#elif TESSEL_SCHEDULE_TEST_POLICY == 1
#include "tessel/cpu/policy_avx2.hpp"
#else
#include "tessel/cpu/policy_avx512.hpp"
#endif

namespace tessel::test {
namespace {

#if TESSEL_SCHEDULE_TEST_POLICY == 0
// The scalar policy (its shipped config keeps the ring) with the packed
// schedule, launched block by block: packed_schedule::run, one unit a block.
struct packed_policy : cpu::scalar_policy {
  template <class TIn, class TOut = TIn> struct gemm_config : cpu::scalar_policy::gemm_config<TIn> {
    using schedule = cpu::packed_schedule<packed_policy, 8>;
  };
  template <class Kernel, class Params> static void launch(const launch_shape& s, const Params& p, int threads) {
    cpu::launch<Kernel>(s, p, threads);
  }
};
using base_policy = cpu::scalar_policy;
constexpr const char* policy_name = "scalar";
inline bool policy_available() { return true; }
#else
#if TESSEL_SCHEDULE_TEST_POLICY == 1
using packed_policy = cpu::avx2_policy;
constexpr const char* policy_name = "avx2";
inline bool policy_available() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
#else
using packed_policy = cpu::avx512_policy;
constexpr const char* policy_name = "avx512";
inline bool policy_available() { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"); }
#endif
using base_policy = packed_policy;
#endif
// The same policy, tuning and launcher with the portable ring schedule.
struct ring_policy : packed_policy {
  template <class TIn, class TOut = TIn> struct gemm_config : base_policy::gemm_config<TIn> {
    using schedule = ring_schedule<ring_policy, base_policy::gemm_config<TIn>::stages>;
  };
};
// Attention (an op with resident tiles and per-unit step counts) on each
// schedule (the SIMD policies ship the packed one, with groups of their own
// tuning; the test's has groups of 8, the scalar policy's base the ring).
struct attn_packed_policy : packed_policy {
  template <class T, int D> struct attention_config : base_policy::attention_config<T, D> {
    using schedule = cpu::packed_schedule<attn_packed_policy, 8>;
  };
};
struct attn_ring_policy : packed_policy {
  template <class T, int D> struct attention_config : base_policy::attention_config<T, D> {
    using schedule = ring_schedule<attn_ring_policy, base_policy::attention_config<T, D>::stages>;
  };
};

template <class S> struct is_packed_schedule : std::false_type {};
template <class P, int G> struct is_packed_schedule<cpu::packed_schedule<P, G>> : std::true_type {};
static_assert(is_packed_schedule<typename ops::gemm_stages<packed_policy, float, float, true, true>::config::schedule>::value,
              "the test's packed policy runs the packed schedule");
static_assert(std::is_same_v<typename ops::gemm_stages<ring_policy, float, float, true, true>::config::schedule,
                             ring_schedule<ring_policy, 2>>,
              "the test's ring policy runs the ring schedule");

struct sched_case {
  int m, n, k, batch = 1;
  bool trans_a = false, trans_b = false, shared_b = false;
  float alpha = 1.0f, beta = 0.0f;
  int threads = 1;
  std::string name() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + "_b" + std::to_string(batch) +
           (trans_a ? "_ta" : "") + (trans_b ? "_tb" : "") + (shared_b ? "_sharedb" : "") + "_alpha" +
           std::to_string(int(alpha * 100)) + "_beta" + std::to_string(int(beta * 100)) + "_t" +
           std::to_string(threads);
  }
};
void PrintTo(const sched_case& c, std::ostream* os) { *os << c.name(); }

template <class T> T from(float f) { return convert<T>(f); }

// C from policy P's GEMM kernel on the case's inputs (row-major buffers, views per trans).
template <class P, class TIn, class TOut>
std::vector<TOut> run_gemm(const sched_case& c, const std::vector<TIn>& a, const std::vector<TIn>& b,
                           const std::vector<TOut>& c0) {
  ops::gemm_problem<TIn, TOut> p;
  // op(A) is M × K: stored [M, K] (row-major) or [K, M] (trans_a, read column-major).
  p.a = {a.data(), c.m, c.k, c.trans_a ? 1 : std::int64_t(c.k), c.trans_a ? std::int64_t(c.m) : 1, false};
  p.b = {b.data(), c.k, c.n, c.trans_b ? 1 : std::int64_t(c.n), c.trans_b ? std::int64_t(c.k) : 1, false};
  std::vector<TOut> out = c0;
  p.c = {out.data(), c.m, c.n, c.n, 1, false};
  p.batch_a = std::int64_t(c.m) * c.k;
  p.batch_b = c.shared_b ? 0 : std::int64_t(c.k) * c.n;
  p.batch_c = std::int64_t(c.m) * c.n;
  p.batch = c.batch;
  p.alpha = c.alpha;
  p.beta = c.beta;
  auto launch = [&](auto ak, auto bn) {
    using K = ops::gemm_kernel<P, TIn, TOut, decltype(ak)::value, decltype(bn)::value>;
    P::template launch<K>(K::shape(p), K::prepare(p), c.threads);
  };
  using yes = std::true_type;
  using no = std::false_type;
  if (!c.trans_a && !c.trans_b) launch(yes{}, yes{});
  if (!c.trans_a && c.trans_b) launch(yes{}, no{});
  if (c.trans_a && !c.trans_b) launch(no{}, yes{});
  if (c.trans_a && c.trans_b) launch(no{}, no{});
  return out;
}

template <class TIn, class TOut> void expect_same_bits(const sched_case& c) {
  std::mt19937_64 rng(case_seed(std::string(policy_name) + c.name()));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<TIn> a(std::size_t(c.batch) * c.m * c.k), b(std::size_t(c.shared_b ? 1 : c.batch) * c.k * c.n);
  for (TIn& x : a) x = from<TIn>(dist(rng));
  for (TIn& x : b) x = from<TIn>(dist(rng));
  std::vector<TOut> c0(std::size_t(c.batch) * c.m * c.n);
  for (TOut& x : c0) x = c.beta == 0.0f ? from<TOut>(std::numeric_limits<float>::quiet_NaN()) : from<TOut>(dist(rng));
  const std::vector<TOut> ring = run_gemm<ring_policy, TIn, TOut>(c, a, b, c0);
  const std::vector<TOut> packed = run_gemm<packed_policy, TIn, TOut>(c, a, b, c0);
  ASSERT_EQ(ring.size(), packed.size());
  std::size_t differ = 0, first = 0;
  for (std::size_t i = 0; i < ring.size(); ++i)
    if (std::memcmp(&ring[i], &packed[i], sizeof(TOut)) != 0 && differ++ == 0) first = i;
  EXPECT_EQ(differ, 0u) << c.name() << ": " << differ << " of " << ring.size() << " elements differ, first at "
                        << first << " (seed " << support::run_seed() << ")";
  // Sanity: the result is not the untouched poison.
  if (c.m > 0 && c.n > 0 && c.k > 0) {
    float s = 0.0f;
    for (std::size_t i = 0; i < packed.size() && i < 64; ++i) s += std::fabs(to_float(packed[i]));
    EXPECT_TRUE(std::isfinite(s)) << c.name();
  }
}

std::vector<sched_case> cases() {
  using G = ops::gemm_stages<packed_policy, float, float, true, true>;
  const int bm = G::BM, bn = G::BN, bk = G::BK;
  std::vector<sched_case> out;
  auto add = [&](sched_case c) {
    for (int t : {1, 3}) {  // one worker; more workers than this 2-core CI machine has
      c.threads = t;
      out.push_back(c);
    }
  };
  add({1, 1, 1});
  add({bm - 1, bn + 1, bk + 1});
  add({bm + 1, bn - 1, bk - 1});
  add({8 * bm + 3, 2 * bn + 5, 2 * bk + 7});       // a full strip of 8 block rows and a partial one
  add({3 * bm, 5 * bn, bk});                         // groups spanning column strips (3 rows per strip)
  {
    constexpr int R = G::raster_rows, S = G::raster_cols;  // a whole run, partial ones both ways, two bands
    add({(R + 1) * bm + 1, (S + 1) * bn + 5, bk + 3});
  }
  add({2 * bm + 1, 3 * bn, 3 * bk, 3});              // batch
  add({2 * bm, 2 * bn + 9, bk + 5, 2, false, false, true, 0.5f, 0.25f});  // B shared by the batch, beta
  add({9 * bm + 1, bn + 3, 2 * bk + 1, 1, true, false, false, 1.0f, 0.0f});
  add({bm + 5, 3 * bn + 1, bk + 9, 1, false, true, false, -0.75f, 1.0f});
  add({5 * bm + 2, 2 * bn + 2, bk + 2, 2, true, true, false, 1.0f, 0.5f});
  add({3 * bm, 2 * bn, 0, 1, false, false, false, 1.0f, 0.5f});  // K = 0: C = beta C
  return out;
}

class Schedules : public ::testing::TestWithParam<sched_case> {};

TEST_P(Schedules, PackedMatchesRingBitForBit) {
  if (!policy_available()) GTEST_SKIP() << "this CPU cannot run the " << policy_name << " policy";
  const sched_case& c = GetParam();
  expect_same_bits<float, float>(c);
  expect_same_bits<bf16, float>(c);
  expect_same_bits<fp16, fp16>(c);
}

INSTANTIATE_TEST_SUITE_P(Cpu, Schedules, ::testing::ValuesIn(cases()), param_name<sched_case>);

// The GEMM's raster on this policy's config: every tile exactly once per layer,
// and runs (run_end) of at most R × S tiles that are rectangles of block rows ×
// block columns, taken row by row — what the packed schedule's reuse rests on.
TEST(PackedSchedule, RasterRunsAreRectanglesCoveringEveryTileOnce) {
  using Op = ops::gemm_stages<packed_policy, float, float, true, true>;
  constexpr int R = Op::raster_rows, S = Op::raster_cols;
  for (const int tiles_m : {1, R - 1, R, R + 1, 3 * R + 2})
    for (const int tiles_n : {1, S - 1, S, S + 1, 3 * S + 2}) {
      if (tiles_m < 1 || tiles_n < 1) continue;
      ops::gemm_problem<float, float> p{};
      p.c = {nullptr, tiles_m * Op::BM - 1, tiles_n * Op::BN - 3, 1, 1, false};  // partial edge tiles
      ASSERT_EQ(Op::tiles(p), tiles_m * tiles_n);
      std::vector<int> seen(std::size_t(tiles_m) * tiles_n, 0);
      for (int id = 0; id < Op::tiles(p);) {
        const int end = Op::run_end(p, id);
        ASSERT_GT(end, id) << tiles_m << "x" << tiles_n << " id " << id;
        ASSERT_LE(end - id, R * S);
        const auto w0 = Op::work_at(p, id, 0);
        int rows = 0, cols = 0;
        for (int t = id; t < end; ++t) {
          const auto w = Op::work_at(p, t, 0);
          ASSERT_TRUE(w.bm >= 0 && w.bm < tiles_m && w.bn >= 0 && w.bn < tiles_n);
          ++seen[std::size_t(w.bm) * tiles_n + w.bn];
          EXPECT_EQ(Op::run_end(p, t), end) << "tile " << t << " of the run [" << id << ", " << end << ")";
          rows = w.bm - w0.bm + 1 > rows ? w.bm - w0.bm + 1 : rows;
          cols = w.bn - w0.bn + 1 > cols ? w.bn - w0.bn + 1 : cols;
        }
        EXPECT_EQ(rows * cols, end - id) << tiles_m << "x" << tiles_n << ": run at " << id << " is no rectangle";
        for (int t = id; t < end; ++t) {
          const auto w = Op::work_at(p, t, 0);
          EXPECT_EQ(w.bm - w0.bm, (t - id) / cols);
          EXPECT_EQ(w.bn - w0.bn, (t - id) % cols);
        }
        id = end;
      }
      for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << tiles_m << "x" << tiles_n << " tile " << i;
    }
}

// The launcher's claims (packed_schedule::claim_end) and the work's costs
// (work_costs): the GEMM's unit costs are its C tiles' rows × columns; a
// claim never crosses its group's end or its segment's, holds at least one
// id, is the rest of the group while enough work remains, and in the tail
// costs at most the unclaimed work's share per worker (or is one id); an op
// without unit costs counts ids, in pieces of remaining / threads.
struct gemm_without_costs : ops::gemm_stages<packed_policy, float, float, true, true> {
  static void unit_cost() = delete;  // hides the GEMM's: the schedule counts ids
};
TEST(PackedSchedule, TailClaimsShareTheWorkByCost) {
  if (!policy_available()) GTEST_SKIP() << "this CPU cannot run the " << policy_name << " policy";
  using Op = ops::gemm_stages<packed_policy, float, float, true, true>;
  using S = typename Op::config::schedule;
  static_assert(unit_costs_of<Op>::value && !unit_costs_of<gemm_without_costs>::value);
  constexpr int R = Op::raster_rows, G = S::group;
  for (const int tiles_m : {1, R, 2 * R + 1})
    for (const int tiles_n : {1, 3, 6})
      for (const int layers : {1, 3}) {
        ops::gemm_problem<float, float> p{};
        p.c = {nullptr, tiles_m * Op::BM - Op::BM / 2, tiles_n * Op::BN - 2 * Op::BN / 3, 1, 1, false};  // narrow edges
        p.batch = layers;
        const long tiles = Op::tiles(p), blocks = tiles * layers;
        const std::string at = std::to_string(tiles_m) + "x" + std::to_string(tiles_n) + "x" + std::to_string(layers);
        const typename S::template work_costs<Op> costs(p);
        const typename S::template work_costs<gemm_without_costs> ids(p);
        long sum = 0, most = 0;
        for (long id = 0; id < blocks; ++id) {
          ASSERT_EQ(costs.before(id), sum) << at << " id " << id;
          ASSERT_EQ(ids.before(id), id) << at;
          const int x = int(id % tiles);
          const long c = Op::unit_cost(p, x);
          const auto w = Op::work_at(p, x, 0);
          const int rows = std::min(Op::BM, p.c.rows - w.bm * Op::BM), cols = std::min(Op::BN, p.c.cols - w.bn * Op::BN);
          ASSERT_EQ(c, long(rows) * cols) << at << " id " << id;
          sum += c;
          most = std::max(most, c);
        }
        ASSERT_EQ(costs.of(0, blocks), sum) << at;
        ASSERT_EQ(costs.most, most) << at;
        for (const int threads : {1, 2, 3, 8})
          for (long next = 0; next < blocks; ++next)
            for (const long last : {blocks, std::min(blocks, next + 3)})
              for (const long remaining : {costs.of(next, blocks), costs.of(next, blocks) / 2 + 1, most / 2 + 1}) {
                const long x = next % tiles, group_end = next - x + S::template group_end<Op>(p, int(x), int(tiles));
                const long bound = std::min(group_end, last);
                const long end = S::template claim_end<Op>(p, costs, next, last, threads, remaining);
                const std::string c = at + ", " + std::to_string(threads) + " threads, next " + std::to_string(next) +
                                      ", remaining " + std::to_string(remaining);
                ASSERT_GT(end, next) << c;
                ASSERT_LE(end, bound) << c;
                if (threads == 1 || remaining >= 2L * threads * G * most) {
                  EXPECT_EQ(end, bound) << c;
                } else {
                  const long budget = (remaining + threads - 1) / threads;
                  if (end - next > 1) EXPECT_LE(costs.of(next, end), budget) << c;
                  if (end < bound) EXPECT_GT(costs.of(next, end + 1), budget) << c;  // no smaller than it may be
                }
                // Counting ids: the rest of the group, or pieces of remaining / threads ids.
                const long id_end = S::template claim_end<gemm_without_costs>(p, ids, next, last, threads, remaining);
                const long len = threads > 1 && remaining < 2L * threads * G ? std::max(1L, (remaining + threads - 1) / threads)
                                                                            : bound - next;
                EXPECT_EQ(id_end, std::min(bound, next + len)) << c;
              }
      }
}

// One thread, run_range over every work id: within a step, each A tile is
// copied once per run of the raster (one copy for the run's S column blocks)
// and each B tile once per run (one for its R row blocks) — the reuse the
// schedule is for. Groups are the raster's runs (at most the schedule's Group).
TEST(PackedSchedule, CopiesEachSharedTileOncePerRunAndStep) {
  if (!policy_available()) GTEST_SKIP() << "this CPU cannot run the " << policy_name << " policy";
  using Op = ops::gemm_stages<packed_policy, float, float, true, true>;
  using S = typename Op::config::schedule;
  const int bm = Op::BM, bn = Op::BN, bk = Op::BK;
  struct shape {
    int m, n, k;
  };
  const int R = Op::raster_rows, C = Op::raster_cols;
  for (const shape s : {shape{2 * R * bm, 2 * C * bn, bk + 1}, shape{3 * bm + 1, (C + 1) * bn - 1, 2 * bk + 1},
                        shape{bm, bn, bk}, shape{(R + 2) * bm, (2 * C + 1) * bn, bk + 1}}) {
    std::mt19937_64 rng(case_seed("copies" + std::to_string(s.m) + "x" + std::to_string(s.n)));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> a(std::size_t(s.m) * s.k), b(std::size_t(s.k) * s.n);
    for (float& x : a) x = dist(rng);
    for (float& x : b) x = dist(rng);
    std::vector<float> c(std::size_t(s.m) * s.n, std::numeric_limits<float>::quiet_NaN());
    ops::gemm_problem<float, float> p;
    p.a = {a.data(), s.m, s.k, s.k, 1, false};
    p.b = {b.data(), s.k, s.n, s.n, 1, false};
    p.c = {c.data(), s.m, s.n, s.n, 1, false};
    p.batch_a = p.batch_b = p.batch_c = 0;
    p.batch = 1;
    p.alpha = 1.0f;
    p.beta = 0.0f;
    const launch_shape sh = S::template shape<Op>(p);
    std::vector<char> storage(std::size_t(sh.smem_bytes) + 4096);
    char* arena = storage.data() + (4096 - reinterpret_cast<std::uintptr_t>(storage.data()) % 4096) % 4096;
    cpu::context ctx{0, 1, 0, arena};
    long copies = 0;
    S::template run_range<Op>(ctx, p, 0, Op::tiles(p), &copies);
    const int steps = (s.k + bk - 1) / bk;
    // Expected: per run (a group) and step, one copy of each distinct A tile
    // (block row) and of each distinct B tile (block column) of the run.
    long expected = 0, units = 0;
    for (int g0 = 0; g0 < Op::tiles(p);) {
      const int g1 = Op::run_end(p, g0);
      std::vector<int> rows, cols;
      for (int id = g0; id < g1; ++id) {
        const auto w = Op::work_at(p, id, 0);
        if (std::find(rows.begin(), rows.end(), w.bm) == rows.end()) rows.push_back(w.bm);
        if (std::find(cols.begin(), cols.end(), w.bn) == cols.end()) cols.push_back(w.bn);
      }
      expected += long(rows.size() + cols.size()) * steps;
      units += g1 - g0;
      g0 = g1;
    }
    EXPECT_EQ(copies, expected) << s.m << "x" << s.n << "x" << s.k;
    if (R > 1 && C > 1 && s.m >= R * bm && s.n >= C * bn)
      EXPECT_LT(copies, units * steps) << "fewer copies than one A tile per unit and step: tiles were reused";
    // C against a float64 reference on a few entries (the copies skipped were the right ones).
    for (const std::size_t i : {std::size_t(0), c.size() / 3, c.size() / 2 + 7, c.size() - 1}) {
      const int r = int(i / s.n), col = int(i % s.n);
      double ref = 0;
      for (int kk = 0; kk < s.k; ++kk) ref += double(a[std::size_t(r) * s.k + kk]) * b[std::size_t(kk) * s.n + col];
      EXPECT_NEAR(c[i], ref, 1e-5 * s.k) << s.m << "x" << s.n << "x" << s.k << " at (" << r << ", " << col << ")";
    }
  }
}

// cpu::with_threads (launch.hpp): f runs inside an arena of the asked
// concurrency, the same count again reuses the calling thread's arena, a
// nested call with another count gets its own, and 0 leaves the caller's.
TEST(Launch, WithThreadsBoundsTheArena) {
  const int outside = tbb::this_task_arena::max_concurrency();
  for (int round = 0; round < 2; ++round)
    for (const int t : {1, 2, 3}) {
      int seen = 0, nested = 0;
      cpu::with_threads(t, [&] {
        seen = tbb::this_task_arena::max_concurrency();
        cpu::with_threads(t == 1 ? 2 : 1, [&] { nested = tbb::this_task_arena::max_concurrency(); });
      });
      EXPECT_EQ(seen, t) << "round " << round;
      EXPECT_EQ(nested, t == 1 ? 2 : 1) << "round " << round;
    }
  int seen = 0;
  cpu::with_threads(0, [&] { seen = tbb::this_task_arena::max_concurrency(); });
  EXPECT_EQ(seen, outside);
}

// The GEMM's overwriting mma (core/tile_ops.hpp, mma_overwrites; the SIMD
// policies have it, the scalar one not): mma(..., accumulate = false) over an
// accumulator of NaN gives, bit for bit, what zero() then the accumulating mma
// gives, in every fragment: on whole tiles, on tiles whose valid rows, columns
// and depth end inside the tile (micro-tiles of padding only are skipped by
// the product and must still be written), and on tiles of no valid depth.
template <class P> void expect_overwriting_mma() {
  using Op = ops::gemm_stages<P, float, float, true, true>;
  using acc_t = typename Op::acc_t;
  using tile_a = typename Op::tile_a;
  using tile_b = typename Op::tile_b;
  {
    const int bm = Op::BM, bn = Op::BN, bk = Op::BK;
    struct extent {
      int rows, cols, depth;
    };
    for (const extent e : {extent{bm, bn, bk}, extent{bm - 11, bn - 13, bk - 5}, extent{3, 5, 7}, extent{bm, bn, 0}}) {
      std::mt19937_64 rng(case_seed("overwrite" + std::to_string(e.rows) + "x" + std::to_string(e.cols) + "x" +
                                    std::to_string(e.depth)));
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      std::vector<float> a(std::size_t(e.rows) * (e.depth + 1)), b(std::size_t(e.depth + 1) * e.cols);
      for (float& x : a) x = dist(rng);
      for (float& x : b) x = dist(rng);
      const gmatrix<float> ga{a.data(), e.rows, e.depth, e.depth + 1, 1, false};
      const gmatrix<float> gb{b.data(), e.depth, e.cols, e.cols, 1, false};
      std::vector<char> storage(std::size_t(sizeof(float)) * (tile_a::layout::size + tile_b::layout::size) + 256);
      char* base = storage.data() + (128 - reinterpret_cast<std::uintptr_t>(storage.data()) % 128) % 128;
      float* pa = reinterpret_cast<float*>(base);
      const tile_a sa{pa};
      const tile_b sb{pa + (tile_a::layout::size + 31) / 32 * 32};
      cpu::context ctx{0, 1, 0, nullptr};
      P::load(ctx, sa, ga, 0, 0);
      P::load(ctx, sb, gb, 0, 0);
      auto expected = std::make_unique<acc_t>(), got = std::make_unique<acc_t>();
      P::zero(*expected);
      P::mma(ctx, *expected, sa, sb, 0, 0);
      for (int i = 0; i < acc_t::tiles_r; ++i)
        for (int j = 0; j < acc_t::tiles_c; ++j)
          std::fill(std::begin(got->frag[i][j]), std::end(got->frag[i][j]), std::numeric_limits<float>::quiet_NaN());
      P::mma(ctx, *got, sa, sb, 0, 0, false);
      long differ = 0;
      for (int i = 0; i < acc_t::tiles_r; ++i)
        for (int j = 0; j < acc_t::tiles_c; ++j)
          differ += std::memcmp(got->frag[i][j], expected->frag[i][j], sizeof got->frag[i][j]) != 0;
      EXPECT_EQ(differ, 0) << "fragments that differ from zero() + mma, of " << acc_t::tiles_r * acc_t::tiles_c
                           << "; valid extent " << e.rows << " x " << e.cols << " x " << e.depth;
    }
  }
}
TEST(PolicyMma, WithoutAccumulateOverwritesEveryFragment) {
  if (!policy_available()) GTEST_SKIP() << "this CPU cannot run the " << policy_name << " policy";
  using Op = ops::gemm_stages<packed_policy, float, float, true, true>;
  constexpr bool overwrites =
      mma_overwrites<packed_policy, cpu::context, typename Op::acc_t, typename Op::tile_a, typename Op::tile_b>::value;
  static_assert(overwrites == (TESSEL_SCHEDULE_TEST_POLICY != 0), "the SIMD policies' GEMM mma can overwrite");
  if constexpr (overwrites) expect_overwriting_mma<packed_policy>();
  else GTEST_SKIP() << "the " << policy_name << " policy's GEMM mma only accumulates";
}

// mma_skipping (core/tile_ops.hpp; the SIMD policies have it for attention's
// S = Q·Kᵀ and O += P·V, the scalar one not): tests/cpu/mma_skipping_check.hpp,
// with the SIMD path's granularity: S's W-row (a vector) × NB-column blocks,
// P's depth by keys.
TEST(PolicyMma, SkippingSkipsOnlyHiddenProducts) {
  if (!policy_available()) GTEST_SKIP() << "this CPU cannot run the " << policy_name << " policy";
  for (const bool hd64 : {false, true}) {
    auto run = [&](auto d) {
      constexpr int D = decltype(d)::value;
      using Op = ops::attention_stages<packed_policy, float, D>;
      constexpr bool has_s = mma_skipping_of<packed_policy, cpu::context, typename Op::s_tile, typename Op::tile_q,
                                             typename Op::tile_kt, masked_c<hide_keys>>::value;
      constexpr bool has_o = mma_skipping_of<packed_policy, cpu::context, typename Op::o_tile, typename Op::tile_p,
                                             typename Op::tile_v, masked_a<hide_keys>>::value;
      static_assert(has_s == (TESSEL_SCHEDULE_TEST_POLICY != 0) && has_o == has_s,
                    "the SIMD policies' attention mma skip hidden products (mma_skipping)");
      if constexpr (has_s) {
        expect_mma_skipping<packed_policy, Op, float>(D == 64 ? "hd 64" : "hd 128", Op::cfg::W, Op::cfg::NB, 1);
        return true;
      } else {
        return false;
      }
    };
    const bool ran = hd64 ? run(std::integral_constant<int, 64>{}) : run(std::integral_constant<int, 128>{});
    if (!ran) GTEST_SKIP() << "the " << policy_name << " policy's attention mma has no mma_skipping";
  }
}

// ---- attention: the same schedule on another op ----------------------------
struct attn_case {
  int batch, heads, kv_heads, q_len, kv_len;
  bool causal;
  int threads;
  std::string name() const {
    return "b" + std::to_string(batch) + "_h" + std::to_string(heads) + "_kv" + std::to_string(kv_heads) + "_q" +
           std::to_string(q_len) + "_k" + std::to_string(kv_len) + (causal ? "_causal" : "") + "_t" +
           std::to_string(threads);
  }
};
void PrintTo(const attn_case& c, std::ostream* os) { *os << c.name(); }

// The attention problem of case c on q, k, v, out and lse (layout [batch, seq, heads, D]).
template <class T, int D>
ops::attention_problem<T> attention_problem_of(const attn_case& c, const std::vector<T>& q, const std::vector<T>& k,
                                               const std::vector<T>& v, std::vector<T>& out, std::vector<float>& lse) {
  ops::attention_problem<T> p;
  p.q = q.data();
  p.k = k.data();
  p.v = v.data();
  p.out = out.data();
  p.q_ss = std::int64_t(c.heads) * D, p.q_hs = D, p.q_bs = p.q_ss * c.q_len;
  p.k_ss = std::int64_t(c.kv_heads) * D, p.k_hs = D, p.k_bs = p.k_ss * c.kv_len;
  p.v_ss = p.k_ss, p.v_hs = D, p.v_bs = p.k_bs;
  p.o_ss = p.q_ss, p.o_hs = D, p.o_bs = p.q_bs;
  p.lse = lse.data();
  p.l_ss = 1, p.l_hs = c.q_len, p.l_bs = std::int64_t(c.heads) * c.q_len;
  p.batch = c.batch, p.heads = c.heads, p.kv_heads = c.kv_heads, p.q_len = c.q_len, p.kv_len = c.kv_len;
  p.causal = c.causal;
  p.scale_log2 = 1.4426950408889634f / std::sqrt(float(D));
  return p;
}

// out and lse from policy P's attention kernel.
template <class P, class T, int D>
void run_attention(const attn_case& c, const std::vector<T>& q, const std::vector<T>& k, const std::vector<T>& v,
                   std::vector<T>& out, std::vector<float>& lse) {
  const ops::attention_problem<T> p = attention_problem_of<T, D>(c, q, k, v, out, lse);
  using K = ops::attention_kernel<P, T, D>;
  P::template launch<K>(K::shape(p), K::prepare(p), c.threads);
}

template <class T, int D> void expect_same_attention(const attn_case& c) {
  std::mt19937_64 rng(case_seed(std::string(policy_name) + "attention" + c.name() + std::to_string(D)));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<T> q(std::size_t(c.batch) * c.q_len * c.heads * D), k(std::size_t(c.batch) * c.kv_len * c.kv_heads * D),
      v(k.size());
  for (T& x : q) x = from<T>(dist(rng));
  for (T& x : k) x = from<T>(dist(rng));
  for (T& x : v) x = from<T>(dist(rng));
  const T poison = from<T>(std::numeric_limits<float>::quiet_NaN());
  std::vector<T> out_ring(q.size(), poison), out_packed(q.size(), poison);
  std::vector<float> lse_ring(std::size_t(c.batch) * c.heads * c.q_len, -1.0f), lse_packed(lse_ring);
  run_attention<attn_ring_policy, T, D>(c, q, k, v, out_ring, lse_ring);
  run_attention<attn_packed_policy, T, D>(c, q, k, v, out_packed, lse_packed);
  EXPECT_EQ(std::memcmp(out_ring.data(), out_packed.data(), out_ring.size() * sizeof(T)), 0) << c.name() << " D " << D;
  EXPECT_EQ(std::memcmp(lse_ring.data(), lse_packed.data(), lse_ring.size() * sizeof(float)), 0)
      << c.name() << " D " << D;
  std::size_t finite = 0;
  for (const T& x : out_packed) finite += std::isfinite(to_float(x));
  EXPECT_EQ(finite, out_packed.size()) << c.name() << ": poison left in the output";
}

// One thread, run_range over every work id of an attention call: per group
// (at most Group query tiles of the heads sharing one K/V head: the op's
// run_end) and step, one copy of the Kᵀ tile and one of V, however many of
// the group's units take that step (causal units take fewer); Q once per unit.
TEST(PackedSchedule, AttentionCopiesEachKvTileOncePerGroupAndStep) {
  if (!policy_available()) GTEST_SKIP() << "this CPU cannot run the " << policy_name << " policy";
  using T = bf16;
  constexpr int D = 64;
  using Op = ops::attention_stages<attn_packed_policy, T, D>;
  using S = typename Op::schedule;
  static_assert(is_packed_schedule<S>::value, "the test's attention policy runs the packed schedule");
  for (const attn_case c : {attn_case{1, 4, 2, 9 * Op::BQ + 5, 3 * Op::BKV + 1, false, 1},
                            attn_case{2, 3, 1, 5 * Op::BQ, 5 * Op::BQ, true, 1}}) {
    std::mt19937_64 rng(case_seed(std::string(policy_name) + "attention-copies" + c.name()));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<T> q(std::size_t(c.batch) * c.q_len * c.heads * D), k(std::size_t(c.batch) * c.kv_len * c.kv_heads * D),
        v(k.size());
    for (auto* t : {&q, &k, &v})
      for (T& x : *t) x = from<T>(dist(rng));
    std::vector<T> out(q.size(), from<T>(std::numeric_limits<float>::quiet_NaN())), out_ring(out);
    std::vector<float> lse(std::size_t(c.batch) * c.heads * c.q_len, -1.0f), lse_ring(lse);
    const ops::attention_problem<T> p = attention_problem_of<T, D>(c, q, k, v, out, lse);
    const launch_shape sh = S::template shape<Op>(p);
    std::vector<char> storage(std::size_t(sh.smem_bytes) + 4096);
    char* arena = storage.data() + (4096 - reinterpret_cast<std::uintptr_t>(storage.data()) % 4096) % 4096;
    cpu::context ctx{0, 1, 0, arena};
    long copies = 0;
    const int tiles = Op::tiles(p);
    S::template run_range<Op>(ctx, p, 0, long(tiles) * Op::layers(p), &copies);
    long expected = 0, per_unit = 0;
    for (int z = 0; z < Op::layers(p); ++z)
      for (int g0 = 0; g0 < tiles;) {
        const int g1 = int(S::template group_end<Op>(p, g0, tiles));
        int most = 0;
        for (int id = g0; id < g1; ++id) {
          const int n = Op::steps(p, Op::work_at(p, id, z));
          most = n > most ? n : most;
          per_unit += 1 + 2 * n;
        }
        expected += (g1 - g0) + 2 * most;
        g0 = g1;
      }
    EXPECT_EQ(copies, expected) << c.name();
    EXPECT_LT(copies, per_unit / 2) << c.name() << ": Kᵀ and V shared by the query tiles of a group";
    // The copies skipped were the right ones: the ring's bits.
    run_attention<attn_ring_policy, T, D>(c, q, k, v, out_ring, lse_ring);
    EXPECT_EQ(std::memcmp(out.data(), out_ring.data(), out.size() * sizeof(T)), 0) << c.name();
    EXPECT_EQ(std::memcmp(lse.data(), lse_ring.data(), lse.size() * sizeof(float)), 0) << c.name();
  }
}

class AttentionSchedules : public ::testing::TestWithParam<attn_case> {};

TEST_P(AttentionSchedules, PackedMatchesRingBitForBit) {
  if (!policy_available()) GTEST_SKIP() << "this CPU cannot run the " << policy_name << " policy";
  const attn_case& c = GetParam();
  if constexpr (packed_policy::attention_fp32) expect_same_attention<float, 64>(c);
  expect_same_attention<bf16, 64>(c);
  expect_same_attention<fp16, 128>(c);
}

std::vector<attn_case> attn_cases() {
  std::vector<attn_case> out;
  for (int t : {1, 3}) {
    out.push_back({2, 4, 2, 300, 300, false, t});
    out.push_back({2, 4, 2, 300, 300, true, t});   // units with different step counts in one group
    out.push_back({1, 3, 1, 129, 517, true, t});   // kv longer than q, GQA 3:1
    out.push_back({1, 2, 2, 1000, 64, false, t});  // many query tiles per head, one step
  }
  return out;
}
INSTANTIATE_TEST_SUITE_P(Cpu, AttentionSchedules, ::testing::ValuesIn(attn_cases()),
                         [](const ::testing::TestParamInfo<attn_case>& i) { return i.param.name(); });

}  // namespace
}  // namespace tessel::test
