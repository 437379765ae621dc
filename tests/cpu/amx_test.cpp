// tests/cpu/amx_test.cpp — the AMX GEMM policy (backends/cpu/policy_amx.hpp): on emulated tiles everywhere,
// on the tile registers where this machine has them.
//
// Built where the machine has AVX2 (the emulated policy's SIMD side is the
// AVX2 policy), and once more where it has AVX-512 with TESSEL_AMX_TEST_AVX512
// (the AVX-512 policy's side: its 16-lane transposes in the packs). Checked:
//   * the policy on amx_emulated (arch/amx.hpp), through the one GEMM op and
//     the packed schedule, bit for bit against a host loop that accumulates
//     each C element in fp32 as the AMX atom defines (per 32-deep slice the
//     even and odd products apart, then their sum): edges, all four majornesses, row- and
//     column-major C, fp32 and bf16 C, alpha / beta (beta = 0 over NaN),
//     batches with a shared B, K = 0, 1 and 3 threads, two block shapes;
//   * where the CPU and OS give AMX (cpu_isa "amx"): the library's own path
//     (amx_hw) on the same inputs, within the fp32 accumulation bound of the
//     loop's result, and bit for bit equal to it (the atom's order is the one
//     measured on an Intel Xeon: bench/amx_rounding_probe.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "param_name.hpp"
#include "seed.hpp"
#include "cpu/amx_test_policies.hpp"
#include "tessel/ops/gemm/dispatch.hpp"
#include "tessel/tessel.hpp"

namespace tessel::test {
namespace {

using simd_base = amx_simd_base;
using emulated = amx_emulated_policy;
// Small blocks: many blocks, runs and steps on small shapes.
using emulated_small = cpu::amx_policy<simd_base, cpu::amx_emulated, cpu::amx_tuning<64, 32, 64, 2, 2, 2>>;

struct amx_case {
  int m, n, k, batch;
  bool a_k_contiguous, b_n_contiguous, c_row_major, shared_b;
  dtype out;
  float alpha, beta;
  int threads;
  std::string name() const {
    char s[160];
    std::snprintf(s, sizeof s, "%dx%dx%d_b%d_%c%c%c%s_%s_a%g_b%g_t%d", m, n, k, batch, a_k_contiguous ? 'n' : 't',
                  b_n_contiguous ? 'n' : 't', c_row_major ? 'r' : 'c', shared_b ? "_sharedB" : "", dtype_name(out),
                  double(alpha), double(beta), threads);
    return s;
  }
};

// The operands of one case, in its layouts (elements of op(A) M × K, op(B) K × N, C M × N).
struct operands {
  amx_case c;
  std::vector<bf16> a, b;
  std::vector<float> c32;
  std::vector<bf16> c16;
  std::int64_t a_rs, a_cs, a_bs, b_rs, b_cs, b_bs, c_rs, c_cs, c_bs;

  explicit operands(const amx_case& cs, std::uint64_t seed) : c(cs) {
    a_rs = cs.a_k_contiguous ? cs.k : 1;
    a_cs = cs.a_k_contiguous ? 1 : cs.m;
    a_bs = std::int64_t(cs.m) * cs.k;
    b_rs = cs.b_n_contiguous ? cs.n : 1;
    b_cs = cs.b_n_contiguous ? 1 : cs.k;
    b_bs = cs.shared_b ? 0 : std::int64_t(cs.k) * cs.n;
    c_rs = cs.c_row_major ? cs.n : 1;
    c_cs = cs.c_row_major ? 1 : cs.m;
    c_bs = std::int64_t(cs.m) * cs.n;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    a.resize(std::size_t(a_bs) * cs.batch + 1);
    b.resize(std::size_t(std::int64_t(cs.k) * cs.n) * (cs.shared_b ? 1 : cs.batch) + 1);
    for (bf16& x : a) x = to_bf16(u(rng));
    for (bf16& x : b) x = to_bf16(u(rng));
    const std::size_t cn = std::size_t(c_bs) * cs.batch + 1;
    // beta = 0 never reads C: poison it with NaN.
    c32.assign(cn, std::numeric_limits<float>::quiet_NaN());
    c16.assign(cn, bf16::from_bits(0x7fc0));
    if (cs.beta != 0.0f)
      for (std::size_t i = 0; i < cn; ++i) {
        c32[i] = u(rng);
        c16[i] = to_bf16(u(rng));
      }
  }
  float a_at(int l, int i, int kk) const { return to_float(a[l * a_bs + i * a_rs + kk * a_cs]); }
  float b_at(int l, int kk, int j) const { return to_float(b[l * b_bs + kk * b_rs + j * b_cs]); }
  std::int64_t c_index(int l, int i, int j) const { return l * c_bs + i * c_rs + j * c_cs; }
  void* c_data() { return c.out == dtype::f32 ? static_cast<void*>(c32.data()) : static_cast<void*>(c16.data()); }
  float c_at(int l, int i, int j) const {
    const std::int64_t x = c_index(l, i, j);
    return c.out == dtype::f32 ? c32[x] : to_float(c16[x]);
  }

  gemm_call call() {
    gemm_call g{};
    g.a = {a.data(), a_rs, a_cs, a_bs};
    g.b = {b.data(), b_rs, b_cs, b_bs};
    g.c = {c_data(), c_rs, c_cs, c_bs};
    g.in = dtype::bf16;
    g.out = c.out;
    g.m = c.m;
    g.n = c.n;
    g.k = c.k;
    g.batch = c.batch;
    g.alpha = c.alpha;
    g.beta = c.beta;
    return g;
  }
};

// C element (l, i, j) as the AMX atom defines the product (amx_dp_reference):
// per 32-deep slice of K, the even and the odd products summed apart in fp32
// (k in order, from 0), their sum added to the accumulator; then the epilogue
// of policy_simd.hpp (alpha · acc, then fma with beta · C) and C's rounding.
// Also sum |a·b|, for the accumulation's error bound.
float expected(const operands& o, int l, int i, int j, double* magnitude) {
  float acc = 0.0f;
  double mag = 0.0;
  for (int k0 = 0; k0 < o.c.k; k0 += 32) {
    float sum[2] = {0.0f, 0.0f};  // even and odd k of the slice
    for (int kk = k0; kk < k0 + 32 && kk < o.c.k; ++kk) {
      const float p = o.a_at(l, i, kk) * o.b_at(l, kk, j);
      sum[(kk - k0) % 2] = sum[(kk - k0) % 2] + p;
      mag += std::fabs(double(p));
    }
    acc = acc + (sum[0] + sum[1]);
  }
  *magnitude = mag;
  float out = o.c.alpha * acc;
  if (o.c.beta != 0.0f) out = std::fma(o.c.beta, o.c_at(l, i, j), out);
  return o.c.out == dtype::f32 ? out : to_float(to_bf16(out));
}

template <class Policy> void run_policy(operands& o) {
  const gemm_call g = o.call();
  const int threads = o.c.threads;
  auto launch = [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    Policy::template launch<K>(K::shape(problem), problem, threads);
  };
  ops::gemm_input<Policy, bf16>(g, launch);
}

std::vector<amx_case> cases() {
  std::vector<amx_case> out;
  const int shapes[][3] = {{1, 1, 1}, {17, 33, 45}, {128, 128, 256}, {130, 257, 300}, {61, 200, 513}, {40, 64, 0}};
  int v = 0;
  for (const auto& s : shapes)
    for (int layout = 0; layout < 4; ++layout, ++v) {
      amx_case c{};
      c.m = s[0];
      c.n = s[1];
      c.k = s[2];
      c.batch = v % 3 == 0 ? 2 : 1;
      c.shared_b = v % 6 == 0;
      c.a_k_contiguous = layout & 1;
      c.b_n_contiguous = layout & 2;
      c.c_row_major = v % 5 != 4;
      c.out = v % 3 == 2 ? dtype::bf16 : dtype::f32;
      c.alpha = v % 4 == 1 ? -0.75f : 1.0f;
      c.beta = v % 3 == 1 ? 0.5f : 0.0f;
      c.threads = v % 2 ? 3 : 1;
      out.push_back(c);
    }
  return out;
}

class AmxEmulated : public ::testing::TestWithParam<amx_case> {};

template <class Policy> void expect_bit_exact(const amx_case& c) {
  const std::uint64_t seed = case_seed(c.name());
  operands o(c, seed);
  const operands before = o;
  run_policy<Policy>(o);
  int bad = 0;
  for (int l = 0; l < c.batch; ++l)
    for (int i = 0; i < c.m; ++i)
      for (int j = 0; j < c.n; ++j) {
        double mag;
        const float want = expected(before, l, i, j, &mag), got = o.c_at(l, i, j);
        if (float_bits(want) != float_bits(got) && bad++ < 5)
          ADD_FAILURE() << c.name() << " C(" << l << ", " << i << ", " << j << ") = " << got << ", expected " << want
                        << " (seed " << seed << ")";
      }
  EXPECT_EQ(bad, 0) << c.name() << ": elements not bit-identical to the atom's loop";
  // Nothing outside C written: the element after the last batch entry.
  const std::size_t past = o.c32.size() - 1;
  if (c.out == dtype::f32) EXPECT_EQ(float_bits(o.c32[past]), float_bits(before.c32[past]));
  else EXPECT_EQ(o.c16[past].bits, before.c16[past].bits);
}

TEST_P(AmxEmulated, DefaultBlocksMatchTheAtomBitForBit) { expect_bit_exact<emulated>(GetParam()); }
TEST_P(AmxEmulated, SmallBlocksMatchTheAtomBitForBit) { expect_bit_exact<emulated_small>(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Cases, AmxEmulated, ::testing::ValuesIn(cases()), param_name<amx_case>);

// The tile instruction on its own, emulated: one tdpbf16ps against the generic
// tile ops' view of it (the atom's maps), with a known product.
TEST(AmxAtom, OneInstructionOnKnownValues) {
  alignas(64) bf16 a[16][32], b[16][32];
  alignas(64) float c[16][16];
  for (int m = 0; m < 16; ++m)
    for (int kk = 0; kk < 32; ++kk) a[m][kk] = to_bf16(float((m + 2 * kk) % 7 - 3));
  // B element (k, n) sits at row k / 2, pair slot k % 2 of column n.
  for (int kk = 0; kk < 32; ++kk)
    for (int n = 0; n < 16; ++n) b[kk / 2][2 * n + kk % 2] = to_bf16(float((3 * kk + n) % 5 - 2));
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) c[m][n] = float(m - n);
  cpu::amx_emulated::configure();
  cpu::amx_emulated::load<0>(c, 64);
  cpu::amx_emulated::load<1>(a, 64);
  cpu::amx_emulated::load<2>(b, 64);
  cpu::amx_emulated::dp<0, 1, 2>();
  alignas(64) float got[16][16];
  cpu::amx_emulated::store<0>(got, 64);
  cpu::amx_emulated::release();
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) {
      int want = m - n;  // small integers: every sum exact
      for (int kk = 0; kk < 32; ++kk) want += ((m + 2 * kk) % 7 - 3) * ((3 * kk + n) % 5 - 2);
      EXPECT_EQ(got[m][n], float(want)) << "C(" << m << ", " << n << ")";
    }
}

// The library's AMX path (the tile registers) where this machine has it.
TEST(AmxHardware, LibraryPathMatchesTheAtomBitForBit) {
  const amx_isa_scope amx;
  if (!amx.available()) GTEST_SKIP() << "this CPU or OS gives no AMX (cpu isa " << amx.before() << ")";
  long same = 0, total = 0;
  for (amx_case c : cases()) {
    c.out = dtype::f32;  // the bound below is the fp32 accumulation's
    const std::uint64_t seed = case_seed(c.name() + "hw");
    operands o(c, seed);
    const operands before = o;
    const tensor_view a = tensor_view::strided(o.a.data(), dtype::bf16, {c.batch, c.m, c.k}, {o.a_bs, o.a_rs, o.a_cs});
    const tensor_view b = tensor_view::strided(o.b.data(), dtype::bf16, {c.batch, c.k, c.n}, {o.b_bs, o.b_rs, o.b_cs});
    const tensor_view cv = tensor_view::strided(o.c_data(), dtype::f32, {c.batch, c.m, c.n}, {o.c_bs, o.c_rs, o.c_cs});
    gemm_options opt;
    opt.alpha = c.alpha;
    opt.beta = c.beta;
    gemm(a, b, cv, opt, stream::cpu(c.threads));
    for (int l = 0; l < c.batch; ++l)
      for (int i = 0; i < c.m; ++i)
        for (int j = 0; j < c.n; ++j) {
          double mag;
          const float want = expected(before, l, i, j, &mag), got = o.c_at(l, i, j);
          // Both sums within K·2^-24·sum|a·b| of the exact one (and beta·C's rounding).
          const double bound = std::fabs(double(c.alpha)) * 2.0 * c.k * std::ldexp(mag, -24) +
                               std::ldexp(std::fabs(double(want)), -23) + 1e-30;
          ++total;
          const bool equal = float_bits(want) == float_bits(got);
          same += equal;
          if (!equal && total - same <= 3)
            std::printf("[ info     ] %s C(%d, %d, %d) = %a, the atom's loop %a\n", c.name().c_str(), l, i, j,
                        double(got), double(want));
          ASSERT_LE(std::fabs(double(got) - double(want)), bound)
              << c.name() << " C(" << l << ", " << i << ", " << j << ") (seed " << seed << ")";
        }
  }
  std::printf("[ info     ] AMX hardware: %ld of %ld elements bit-identical to the atom's loop\n", same, total);
  EXPECT_EQ(same, total) << "the tile instructions round otherwise than the AMX atom (arch/amx.hpp) says";
}

}  // namespace
}  // namespace tessel::test
