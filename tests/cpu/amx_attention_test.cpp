// tests/cpu/amx_attention_test.cpp — the AMX attention path (backends/cpu/attention_amx.hpp, policy_amx.hpp):
// on emulated tiles everywhere, on the tile registers where this machine has them.
//
// Built with amx_test.cpp (the AVX2 policy's SIMD side, and the AVX-512 one
// where TESSEL_AMX_TEST_AVX512). Checked, bf16 in and out:
//   * the shared attention op on the AMX policy with amx_emulated tiles
//     (arch/amx.hpp), default, small and wide (128 keys a step) blocks, against float64
//     (support::reference_attention): out's relative Frobenius error within the
//     suite's bf16 tolerance (P is rounded to bf16 for P·V, as on the GPUs),
//     LSE within 1e-3; every element of out written, nothing around it touched;
//     a NaN in q makes its row's out and LSE NaN and no other row's. Shapes:
//     one key, odd q_len / kv_len, causal with q_len < kv_len and q_len > kv_len
//     (rows without keys), GQA and MQA, padded rows, more steps than stages,
//     1 and 3 threads, scaled scores ~±300 apart (P in and below the subnormal
//     range: its flush is invisible in out, tdpbf16ps reads subnormals as 0);
//   * P's exp2 (degree 4) within its bound of exp2, special values kept; the
//     softmax's weight forms (degrees 4 and 6): exp2's bits above −125, +0
//     below, without raising underflow;
//   * the mask's vector path bit for bit equal to the generic map;
//   * the policy's packed_schedule (groups of query tiles sharing each step's
//     Kᵀ and V panels) bit for bit equal to the ring schedule in out and LSE;
//   * the tile configuration loaded once per worker task of a packed launch
//     (the ring: once per mma), and the tiles released after it;
//   * in the AVX-512 build: the emulated policy on AVX2 and on AVX-512 vectors
//     bit for bit equal in out and LSE (the softmax's sums add in the same
//     order; P's subnormals, flushed by vcvtneps2bf16 on 16 lanes and kept on
//     8, are read as zero by tdpbf16ps either way);
//   * where the CPU and OS give AMX (cpu isa "amx"): the library's attention
//     (the tile registers, the AVX-512 softmax) bit for bit equal to the
//     emulated policy's of the same blocks (amx_wide_attention_pays) on the
//     same inputs, but any NaN for a NaN (the tile instruction rounds as the
//     atom says: amx_test.cpp's hardware test, bench/amx_rounding_probe.cpp).
#include <gtest/gtest.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "reference_attention.hpp"
#include "seed.hpp"
#include "cpu/amx_test_policies.hpp"
#include "cpu/mma_skipping_check.hpp"
#include "tessel/ops/attention/dispatch.hpp"
#include "tessel/tessel.hpp"

namespace tessel::test {
namespace {

using emulated = amx_emulated_policy;
// 32 query rows × 32 keys, three stages, groups of 3 query tiles: more blocks,
// steps and group cuts on small shapes.
using emulated_small =
    cpu::amx_policy<amx_simd_base, cpu::amx_emulated, cpu::amx_default_tuning, cpu::amx_attention_tuning<32, 32, 3, 3>>;
// 128 keys a step: the library's choice where amx_wide_attention_pays.
using emulated_wide =
    cpu::amx_policy<amx_simd_base, cpu::amx_emulated, cpu::amx_default_tuning, cpu::amx_wide_attention_tuning>;
// Policy Base with its bf16 attention on the portable ring schedule instead of
// its packed_schedule (one unit at a time, every tile packed for every unit).
template <class Base> struct on_ring : Base {
  template <class T, int D> struct attention_config : Base::template attention_config<T, D> {
    using schedule = ring_schedule<on_ring, Base::template attention_config<T, D>::stages>;
  };
};

struct att_case {
  int batch, q_len, kv_len, heads, kv_heads, head_dim;
  bool causal;
  int pad;      // elements after each row
  int threads;
  int nan_row;  // a query row (of batch 0, head 0) with a NaN in q, or -1
  float q_scale = 1;  // q's values from [-2, 2] times this (large: P below 2^-126, flushed)
  std::string name() const {
    return "b" + std::to_string(batch) + "_q" + std::to_string(q_len) + "_kv" + std::to_string(kv_len) + "_h" +
           std::to_string(heads) + "x" + std::to_string(kv_heads) + "_d" + std::to_string(head_dim) +
           (causal ? "_causal" : "") + "_pad" + std::to_string(pad) + "_t" + std::to_string(threads) +
           (nan_row >= 0 ? "_nan" + std::to_string(nan_row) : "") +
           (q_scale != 1 ? "_qx" + std::to_string(int(q_scale)) : "");
  }
};

const att_case cases[] = {
    {1, 1, 1, 1, 1, 64, false, 0, 1, -1},
    {2, 17, 200, 4, 2, 64, true, 0, 3, -1},     // GQA, causal, q < kv
    {1, 200, 17, 2, 2, 128, true, 0, 1, -1},    // causal q > kv: rows without keys
    {1, 130, 300, 2, 1, 128, false, 8, 3, -1},  // MQA, padded rows, edges in rows and keys
    {2, 64, 64, 1, 1, 64, true, 0, 1, -1},      // whole tiles, the diagonal
    {1, 96, 520, 2, 2, 128, false, 0, 1, 37},   // more steps than stages; a NaN row
    {1, 80, 150, 1, 1, 64, false, 0, 1, -1, 64},  // scaled scores ~±300 apart: P down to 0
};

constexpr std::uint16_t poison = 0x7fc1;  // a NaN: an unwritten element shows

struct inputs {
  att_case c;
  std::int64_t row, q_ss, q_bs, kv_ss, kv_bs;  // [b, s, h, d]: d contiguous, rows `row` apart
  std::vector<bf16> q, k, v;
  inputs(const att_case& cs, std::uint64_t seed) : c(cs) {
    row = cs.head_dim + cs.pad;
    q_ss = cs.heads * row, q_bs = cs.q_len * q_ss;
    kv_ss = cs.kv_heads * row, kv_bs = cs.kv_len * kv_ss;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    q.resize(std::size_t(cs.batch * q_bs));
    k.resize(std::size_t(cs.batch * kv_bs));
    v.resize(k.size());
    for (auto* t : {&q, &k, &v})
      for (bf16& x : *t) x = convert<bf16>(u(rng) * (t == &q ? cs.q_scale : 1.0f));
    if (cs.nan_row >= 0) q[std::size_t(cs.nan_row * q_ss + 3)] = bf16::from_bits(0x7fc0);
  }
  tensor_view view(const std::vector<bf16>& t, int seq, int h, std::int64_t ss, std::int64_t bs) const {
    return tensor_view::strided(const_cast<bf16*>(t.data()), dtype::bf16, {c.batch, seq, h, c.head_dim},
                                {bs, ss, row, 1}, device::host());
  }
};

struct result {
  std::vector<std::uint16_t> out;  // [b, s, h, d] as q, with a guard of `guard` elements on each side
  std::vector<float> lse;          // [b, h, s]
};
constexpr std::size_t guard = 37;

template <class Policy> result run_emulated(const inputs& in) {
  const att_case& c = in.c;
  result r{std::vector<std::uint16_t>(in.q.size() + 2 * guard, poison),
           std::vector<float>(std::size_t(c.batch) * c.heads * c.q_len, std::nanf(""))};
  attention_call call{};
  call.q = {in.q.data(), in.q_bs, in.q_ss, in.row};
  call.k = {in.k.data(), in.kv_bs, in.kv_ss, in.row};
  call.v = {in.v.data(), in.kv_bs, in.kv_ss, in.row};
  call.out = {r.out.data() + guard, in.q_bs, in.q_ss, in.row};
  call.lse = r.lse.data();
  call.lse_batch_stride = std::int64_t(c.heads) * c.q_len, call.lse_head_stride = c.q_len, call.lse_seq_stride = 1;
  call.type = dtype::bf16;
  call.batch = c.batch, call.heads = c.heads, call.kv_heads = c.kv_heads, call.q_len = c.q_len;
  call.kv_len = c.kv_len, call.head_dim = c.head_dim, call.causal = c.causal;
  call.scale = float(1.0 / std::sqrt(double(c.head_dim)));
  auto launch = [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    Policy::template launch<K>(K::shape(problem), problem, c.threads);
  };
  ops::attention_typed<Policy, bf16>(call, launch);
  return r;
}

// Whether out element (b, s, h, d) lies inside the view (else: padding).
bool inside_row(const inputs& in, std::size_t i) { return std::int64_t(i) % in.row < in.c.head_dim; }

void expect_matches_float64(const inputs& in, const result& got, const std::string& what) {
  const att_case& c = in.c;
  const support::attention_reference ref =
      support::reference_attention(in.view(in.q, c.q_len, c.heads, in.q_ss, in.q_bs),
                                   in.view(in.k, c.kv_len, c.kv_heads, in.kv_ss, in.kv_bs),
                                   in.view(in.v, c.kv_len, c.kv_heads, in.kv_ss, in.kv_bs), c.causal,
                                   1.0 / std::sqrt(double(c.head_dim)));
  for (std::size_t i = 0; i < guard; ++i) {
    EXPECT_EQ(got.out[i], poison) << what << ": written before out";
    EXPECT_EQ(got.out[got.out.size() - 1 - i], poison) << what << ": written after out";
  }
  double num = 0, den = 0, lse_err = 0;
  long unwritten = 0, padding_touched = 0, nan_wrong = 0;
  std::size_t n = 0;
  for (int b = 0; b < c.batch; ++b)
    for (int s = 0; s < c.q_len; ++s)
      for (int h = 0; h < c.heads; ++h)
        for (int d = 0; d < c.head_dim; ++d, ++n) {
          const std::uint16_t bits = got.out[guard + std::size_t(b * in.q_bs + s * in.q_ss + h * in.row + d)];
          const double g = to_float(bf16::from_bits(bits)), r = ref.out[n];
          if (std::isnan(r) != std::isnan(g) || (std::isnan(g) && bits == poison)) {
            (std::isnan(r) ? nan_wrong : unwritten) += 1;
            continue;
          }
          if (std::isnan(r)) continue;
          num += (g - r) * (g - r);
          den += r * r;
        }
  for (std::size_t i = 0; i < in.q.size(); ++i)
    if (!inside_row(in, i) && got.out[guard + i] != poison) ++padding_touched;
  for (std::size_t i = 0; i < ref.lse.size(); ++i) {
    const double r = ref.lse[i], g = got.lse[i];
    if (std::isnan(r) || std::isinf(r)) {
      EXPECT_TRUE(std::isnan(r) ? std::isnan(g) : (std::isinf(g) && g < 0)) << what << ": LSE " << i << " = " << g;
      continue;
    }
    lse_err = std::max(lse_err, std::fabs(g - r));
  }
  EXPECT_EQ(unwritten, 0) << what << ": out elements not written or NaN";
  EXPECT_EQ(nan_wrong, 0) << what << ": out elements whose NaN-ness differs from float64's";
  EXPECT_EQ(padding_touched, 0) << what << ": padding between rows written";
  EXPECT_LT(std::sqrt(num / (den > 0 ? den : 1)), 1e-2) << what << ": out against float64";
  EXPECT_LT(lse_err, 1e-3) << what << ": LSE against float64";
}

TEST(AmxAttentionEmulated, MatchesFloat64) {
  for (const att_case& c : cases) {
    const inputs in(c, case_seed("amx-attention-" + c.name()));
    expect_matches_float64(in, run_emulated<emulated>(in), c.name() + " (default blocks)");
    expect_matches_float64(in, run_emulated<emulated_small>(in), c.name() + " (small blocks)");
    expect_matches_float64(in, run_emulated<emulated_wide>(in), c.name() + " (128 keys a step)");
  }
}

// P's exp2 (arch/exp2.hpp's exp2_batch_for_bf16, degree 4): within 3e-6 of
// exp2 relative where the result is normal, and below bf16's rounding (2^-9)
// by far; never rising as x falls; the special values as exp2_batch's.
TEST(AmxAttentionEmulated, PsExp2IsWithinItsBound) {
  using vec = amx_simd_base::vec;
  constexpr int W = int(vec::size);
  double worst = 0;
  long nonmonotone = 0;
  float last = 0;
  alignas(64) float x[W], y[W];
  for (int step = 0; step <= 151 * 4096; step += W) {
    for (int l = 0; l < W; ++l) x[l] = -float(step + l) / 4096.0f;  // [−151, 0] in steps of 2^-12
    cpu::exp2_batch_for_bf16<vec::arch_type>(vec::load_aligned(x)).store_aligned(y);
    for (int l = 0; l < W; ++l) {
      const double want = std::exp2(double(x[l]));
      if (want >= 0x1p-126) worst = std::max(worst, std::fabs(double(y[l]) / want - 1.0));
      if (step + l > 0 && y[l] > last) ++nonmonotone;
      last = y[l];
    }
  }
  EXPECT_LT(worst, 3e-6) << "relative error over [-126, 0]";
  EXPECT_GT(worst, 1e-7) << "the degree-4 polynomial (the test would not see a swap for the degree-6 one)";
  EXPECT_EQ(nonmonotone, 0) << "exp2 rose as x fell";
  const float specials[] = {-std::numeric_limits<float>::infinity(), -200.0f, 0.0f, 200.0f,
                            std::numeric_limits<float>::infinity(), std::nanf("")};
  for (float s : specials) {
    cpu::exp2_batch_for_bf16<vec::arch_type>(vec(s)).store_aligned(y);
    if (std::isnan(s)) EXPECT_TRUE(std::isnan(y[0]));
    else if (s < -151) EXPECT_EQ(float_bits(y[0]), 0u) << s;
    else if (s > 128) EXPECT_TRUE(std::isinf(y[0]) && y[0] > 0) << s;
    else EXPECT_EQ(y[0], 1.0f);
  }
}

// The softmax's weight forms of exp2 (exp2_weight_batch, _for_bf16): the plain
// form's bits for x >= −125, +0 below (−inf included), NaN kept, and no
// underflow raised (MXCSR.UE stays clear, where the plain forms raise it on
// the same inputs: a masked score must not take an underflow assist).
template <bool Bf16, class vec> void expect_weight_form_of_exp2() {
  constexpr int W = int(vec::size);
  using A = typename vec::arch_type;
  const auto plain = [](vec x) { return Bf16 ? cpu::exp2_batch_for_bf16<A>(x) : cpu::exp2_batch<A>(x); };
  const auto weight = [](vec x) { return Bf16 ? cpu::exp2_weight_batch_for_bf16<A>(x) : cpu::exp2_weight_batch<A>(x); };
  alignas(64) float x[W], y[W], z[W];
  long differ = 0, nonzero_below = 0;
  for (int step = 0; step <= 160 * 1024; step += W) {
    for (int l = 0; l < W; ++l) x[l] = -float(step + l) / 1024.0f;  // [−160, 0] in steps of 2^-10
    plain(vec::load_aligned(x)).store_aligned(y);
    weight(vec::load_aligned(x)).store_aligned(z);
    for (int l = 0; l < W; ++l) {
      if (x[l] >= -125.0f) differ += float_bits(y[l]) != float_bits(z[l]);
      else nonzero_below += float_bits(z[l]) != 0u;
    }
  }
  EXPECT_EQ(differ, 0) << "weight form differs from exp2 at x >= -125";
  EXPECT_EQ(nonzero_below, 0) << "weight form not +0 below -125";
  const float specials[] = {-std::numeric_limits<float>::infinity(), -125.0f, -125.5f, 200.0f,
                            std::numeric_limits<float>::infinity(), std::nanf("")};
  for (float s : specials) {
    weight(vec(s)).store_aligned(z);
    plain(vec(s)).store_aligned(y);
    if (std::isnan(s)) EXPECT_TRUE(std::isnan(z[0]));
    else if (s < -125) EXPECT_EQ(float_bits(z[0]), 0u) << s;
    else EXPECT_EQ(float_bits(z[0]), float_bits(y[0])) << s;
  }
  // The underflow flag: inputs hidden from the compiler (constant inputs fold
  // at compile time, where nothing underflows at run time).
  for (int l = 0; l < W; ++l) x[l] = l % 2 ? -std::numeric_limits<float>::infinity() : -140.0f - float(l);
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved & ~0x8040u & ~0x3fu);  // FTZ, DAZ clear; flags clear
  asm volatile("" : : "r"(x) : "memory");
  weight(vec::load_aligned(x)).store_aligned(z);
  asm volatile("" : : "r"(z) : "memory");
  const unsigned after_weight = _mm_getcsr();
  _mm_setcsr(saved & ~0x8040u & ~0x3fu);
  asm volatile("" : : "r"(x) : "memory");
  plain(vec::load_aligned(x)).store_aligned(y);
  asm volatile("" : : "r"(y) : "memory");
  const unsigned after_plain = _mm_getcsr();
  _mm_setcsr(saved);
  EXPECT_EQ(after_weight & 0x10u, 0u) << "the weight form raised underflow";
  EXPECT_NE(after_plain & 0x10u, 0u) << "the plain form raised no underflow (the flag check would not see one)";
  for (int l = 0; l < W; ++l) EXPECT_EQ(float_bits(z[l]), 0u) << x[l];
}
TEST(AmxAttentionEmulated, WeightExp2IsExp2OrZeroWithoutUnderflow) {
  expect_weight_form_of_exp2<true, amx_simd_base::vec>();
  expect_weight_form_of_exp2<false, amx_simd_base::vec>();
}

// The packed schedule (groups of a head's query tiles step-major, each step's
// Kᵀ and V packed once for the group) gives the ring's bits: each unit sees the
// same tiles in the same order.
TEST(AmxAttentionEmulated, PackedScheduleGivesTheRingsBits) {
  static_assert(!std::is_same_v<ops::attention_stages<emulated, bf16, 64>::schedule,
                                ops::attention_stages<on_ring<emulated>, bf16, 64>::schedule>,
                "the library's AMX attention runs another schedule than the ring");
  for (const att_case& c : cases) {
    const inputs in(c, case_seed("amx-attention-ring-" + c.name()));
    const result a = run_emulated<emulated>(in), b = run_emulated<on_ring<emulated>>(in);
    EXPECT_EQ(std::memcmp(a.out.data(), b.out.data(), a.out.size() * 2), 0) << c.name() << ": out (default blocks)";
    EXPECT_EQ(std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * 4), 0) << c.name() << ": LSE (default blocks)";
    const result x = run_emulated<emulated_small>(in), y = run_emulated<on_ring<emulated_small>>(in);
    EXPECT_EQ(std::memcmp(x.out.data(), y.out.data(), x.out.size() * 2), 0) << c.name() << ": out (small blocks)";
    EXPECT_EQ(std::memcmp(x.lse.data(), y.lse.data(), x.lse.size() * 4), 0) << c.name() << ": LSE (small blocks)";
  }
}

// The mask's fast path (attention_amx.hpp, map over hide_keys: vector selects
// from each row's first hidden column) against the generic map, bit for bit,
// on a 64 × 128 score tile with a NaN in it: every row hidden from anywhere in
// [-3, 131], kept whole, hidden whole; causal and not.
TEST(AmxAttentionEmulated, MaskMatchesTheGenericMap) {
  using tile = rt<cpu::amx_atom, operand::c, 4, 8>;
  std::mt19937_64 rng(case_seed("amx-attention-mask"));
  std::uniform_real_distribution<float> u(-50.0f, 50.0f);
  tile in;
  for (auto& f : in.frag)
    for (auto& g : f)
      for (float& x : g) x = u(rng);
  in.frag[1][2][37] = std::nanf("");
  cpu::context ctx{0, 1, 0, nullptr};
  const hide_keys masks[] = {{128, 128}, {127, 127}, {0, 0},   {-5, -5},  {200, 200}, {57, 57},  {128, -3},
                             {128, 1},   {128, 64},  {97, 30}, {33, 17}, {128, 70},  {5, -100}, {300, 68}};
  for (const hide_keys& m : masks) {
    tile a = in, b = in;
    emulated::map(ctx, a, m);
    generic_tile_ops::map(ctx, b, m);
    EXPECT_EQ(std::memcmp(&a, &b, sizeof(tile)), 0) << "visible " << m.visible << ", diagonal " << m.diagonal;
    long kept = 0;
    for (int r = 0; r < 64; ++r) kept += std::clamp(m.hidden_from(r), 0, 128);
    long finite = 0;
    for (auto& f : a.frag)
      for (auto& g : f)
        for (float x : g) finite += !(std::isinf(x) && x < 0);
    EXPECT_EQ(finite, kept) << "visible " << m.visible << ", diagonal " << m.diagonal;
  }
}

// mma_skipping on the AMX tiles (policy_amx.hpp: 32 × 32 micro-blocks of S,
// 32-deep slices of P·V): tests/cpu/mma_skipping_check.hpp, on 64 and 128 keys
// a step and hd 64 / 128, the tile instructions emulated.
TEST(AmxAttentionEmulated, SkippingSkipsOnlyHiddenProducts) {
  expect_mma_skipping<emulated, ops::attention_stages<emulated, bf16, 64>, bf16>("64 keys, hd 64", 32, 32, 32);
  expect_mma_skipping<emulated, ops::attention_stages<emulated, bf16, 128>, bf16>("64 keys, hd 128", 32, 32, 32);
  expect_mma_skipping<emulated_wide, ops::attention_stages<emulated_wide, bf16, 64>, bf16>("128 keys, hd 64", 32, 32,
                                                                                          32);
  expect_mma_skipping<emulated_wide, ops::attention_stages<emulated_wide, bf16, 128>, bf16>("128 keys, hd 128", 32,
                                                                                            32, 32);
}

// The tile configuration's lifetime (policy_amx.hpp, task_scope): a launch on
// the packed schedule loads it once per worker task, not once per mma (the
// ring's per-block launch does, two per step), and releases the tiles when the
// task ends: a tile instruction after the launch faults (throws, emulated).
// With the hold gone, every mma would throw (amx_emulated needs a configuration).
TEST(AmxAttentionEmulated, PackedLaunchLoadsTheTileConfigurationOncePerTask) {
  att_case c = cases[5];  // 2 heads of 96 query rows, 520 keys: 4 query tiles × 9 steps
  ASSERT_EQ(c.threads, 1);
  const std::uint64_t seed = case_seed("amx-attention-config-" + c.name());
  const inputs in(c, seed);
  auto& configurations = cpu::amx_emulated::configurations();
  const long before = configurations.load();
  const result packed = run_emulated<emulated>(in);
  const long packed_loads = configurations.load() - before;
  const result ring = run_emulated<on_ring<emulated>>(in);
  const long ring_loads = configurations.load() - before - packed_loads;
  EXPECT_EQ(packed_loads, 1) << "one worker task";
  EXPECT_EQ(ring_loads, 4 * 9 * 2) << "the ring: S's and O's mma per query tile and step";
  EXPECT_EQ(std::memcmp(packed.out.data(), ring.out.data(), packed.out.size() * 2), 0);
  EXPECT_FALSE(cpu::amx_tiles_held<cpu::amx_emulated>()) << "the hold outlived the launch";
  EXPECT_THROW(cpu::amx_emulated::zero<0>(), std::logic_error) << "the tiles were not released";
  c.threads = 3;
  const long before3 = configurations.load();
  const result three = run_emulated<emulated>(inputs(c, seed));
  const long three_loads = configurations.load() - before3;
  EXPECT_GE(three_loads, 1);
  EXPECT_LE(three_loads, 3) << "at most one per worker task";
  EXPECT_EQ(std::memcmp(packed.out.data(), three.out.data(), packed.out.size() * 2), 0);
}

#if TESSEL_AMX_TEST_AVX512
// The softmax on 8-lane (AVX2) and 16-lane (AVX-512) vectors: the same bits, so
// that either build's emulation is the hardware test's reference.
TEST(AmxAttentionEmulated, AvxWidthsGiveTheSameBits) {
  using emulated_avx2 = cpu::amx_policy<cpu::avx2_policy, cpu::amx_emulated, cpu::amx_default_tuning>;
  for (const att_case& c : cases) {
    const inputs in(c, case_seed("amx-attention-widths-" + c.name()));
    const result a = run_emulated<emulated>(in), b = run_emulated<emulated_avx2>(in);
    EXPECT_EQ(std::memcmp(a.out.data(), b.out.data(), a.out.size() * 2), 0) << c.name() << ": out";
    EXPECT_EQ(std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * 4), 0) << c.name() << ": LSE";
  }
}
#endif

// The library's attention on the tile registers, where this machine has them.
TEST(AmxAttentionHardware, LibraryPathMatchesTheEmulationBitForBit) {
  const amx_isa_scope amx;
  if (!amx.available()) GTEST_SKIP() << "this CPU or OS gives no AMX (cpu isa " << amx.before() << ")";
  for (const att_case& c : cases) {
    const inputs in(c, case_seed("amx-attention-hw-" + c.name()));
    // the emulation of the blocks the library takes for this call
    const result want = cpu::amx_wide_attention_pays(c.kv_len) ? run_emulated<emulated_wide>(in)
                                                                          : run_emulated<emulated>(in);
    result got{std::vector<std::uint16_t>(want.out.size(), poison), std::vector<float>(want.lse.size(), std::nanf(""))};
    attention_options o;
    o.causal = c.causal;
    o.scale = float(1.0 / std::sqrt(double(c.head_dim)));
    o.lse = tensor_view::contiguous(got.lse.data(), dtype::f32, {c.batch, c.heads, c.q_len});
    const tensor_view out = tensor_view::strided(reinterpret_cast<bf16*>(got.out.data() + guard), dtype::bf16,
                                                 {c.batch, c.q_len, c.heads, c.head_dim}, {in.q_bs, in.q_ss, in.row, 1},
                                                 device::host());
    attention(in.view(in.q, c.q_len, c.heads, in.q_ss, in.q_bs), in.view(in.k, c.kv_len, c.kv_heads, in.kv_ss, in.kv_bs),
              in.view(in.v, c.kv_len, c.kv_heads, in.kv_ss, in.kv_bs), out, o, stream::cpu(c.threads));
    // Bit for bit, but any NaN for a NaN (the tile unit's NaN payloads are its own).
    long differ = 0;
    for (std::size_t i = 0; i < got.out.size(); ++i) {
      const bool nans = std::isnan(to_float(bf16::from_bits(got.out[i]))) && std::isnan(to_float(bf16::from_bits(want.out[i])));
      differ += !nans && got.out[i] != want.out[i];
    }
    for (std::size_t i = 0; i < got.lse.size(); ++i)
      differ += !(std::isnan(got.lse[i]) && std::isnan(want.lse[i])) && float_bits(got.lse[i]) != float_bits(want.lse[i]);
    EXPECT_EQ(differ, 0) << c.name() << ": out and LSE elements that differ from the emulation's";
  }
}

}  // namespace
}  // namespace tessel::test
