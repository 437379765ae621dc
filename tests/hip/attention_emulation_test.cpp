// tests/hip/attention_emulation_test.cpp — the attention tile ops on the MFMA atom, on the host.
//
// One wavefront of the HIP attention kernel, emulated: 64 host lanes (a host
// context each, lock step at every shfl_xor) run the HIP policy's code paths
// with the attention configuration's own LDS layouts (cdna_attention_config:
// Q and P row-major, Kᵀ and V column-major, padded) for two KV tiles:
//   S = Q·Kᵀ     fragments through the CDNA fast loads (checked bit-equal to the
//                generic ones), v_mfma_f32_32x32x8 executed by mfma_emulator.hpp
//   map          the op's kv_len / causal mask lambda shape
//   online_softmax_step   ops/attention/kernel.hpp's own: row_reduce max and
//                sum across the lanes, broadcast_rows exp2_of_difference and
//                multiply
//   P -> LDS     the CDNA register -> LDS store (checked bit-equal to the generic)
//   O += P·V     CDNA fast loads + emulated MFMA
// then the op's own finish() (O / l, LSE) into a poisoned output, compared
// with a float64 reference on the same rounded inputs. The second wave of the
// block is the one emulated (rows 32..63), so the wave's row offset is live.
// Seed: $TESSEL_SEED, else random (printed).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <vector>

#include "emulation_seed.hpp"
#include "host_lanes.hpp"
#include "mfma_emulator.hpp"
#include "p_rounding_bias.hpp"
#include "tessel/hip/attention_config.hpp"
#include "tessel/hip/tile_ops_cdna.hpp"
#include "tessel/ops/attention/kernel.hpp"

namespace tessel::test {
namespace {

using hip::cdna_attention_config;
using hip::cdna_tile_ops;
using hip::mfma_32x32x8;

// The HIP policy's tile ops and attention configuration, without its device
// context and launcher (launch.hpp needs the HIP runtime).
struct host_cdna_policy : cdna_tile_ops {
  [[maybe_unused]] static constexpr int lanes = 64;  // (as the policy has it; this test reads it nowhere)
  template <class T, int D> using attention_config = cdna_attention_config<T, D>;
};

template <class T> T poison_of() { return T::from_bits(0x7fff); }

template <class T, class L> struct lds_tile {
  std::vector<T> mem = std::vector<T>(L::size, poison_of<T>());
  st<T, L> view() { return {mem.data()}; }
};

template <class T> std::uint32_t pack2(T lo, T hi) { return std::uint32_t(lo.bits) | std::uint32_t(hi.bits) << 16; }

// acc[l] += fa[l] · fb[l] over the wave: one emulated MFMA per (i, j) sub-tile,
// as generic_tile_ops::mma(c, a, b) issues them (K of the fragments is 1 atom).
template <class T, class C, class A, class B>
void wave_mma(std::vector<C>& acc, const std::vector<A>& fa, const std::vector<B>& fb) {
  static_assert(A::tiles_c == 1 && B::tiles_r == 1);
  for (int i = 0; i < C::tiles_r; ++i)
    for (int j = 0; j < C::tiles_c; ++j) {
      wave_registers w;
      for (int l = 0; l < 64; ++l) {
        const auto& a = fa[l].frag[i][0];
        const auto& b = fb[l].frag[0][j];
        w.a[l][0] = pack2(a[0], a[1]);
        w.a[l][1] = pack2(a[2], a[3]);
        w.b[l][0] = pack2(b[0], b[1]);
        w.b[l][1] = pack2(b[2], b[3]);
        for (int r = 0; r < 16; ++r) w.c[l][r] = acc[l].frag[i][j][r];
      }
      emulate_mfma_32x32x8<T>(w);
      for (int l = 0; l < 64; ++l)
        for (int r = 0; r < 16; ++r) acc[l].frag[i][j][r] = w.c[l][r];
    }
}

// C += A·B from LDS, A rows [a_row0, +32), B columns [0, C.cols), the loop of
// cdna_tile_ops::mma(ctx, c, st a, st b, ...) with the instruction emulated.
template <class T, class C, class SA, class SB> void lds_mma(std::vector<C>& acc, SA a, SB b, int a_row0) {
  using Atom = mfma_32x32x8<T>;
  for (int k0 = 0; k0 < SA::cols; k0 += Atom::K) {
    std::vector<rt<Atom, operand::a, C::tiles_r, 1>> fa(64);
    std::vector<rt<Atom, operand::b, 1, C::tiles_c>> fb(64);
    for (int l = 0; l < 64; ++l) {
      host_ctx ctx;
      ctx.lane_ = l;
      cdna_tile_ops::load(ctx, fa[l], a, a_row0, k0);
      cdna_tile_ops::load(ctx, fb[l], b, k0, 0);
      rt<Atom, operand::a, C::tiles_r, 1> ga;
      rt<Atom, operand::b, 1, C::tiles_c> gb;
      generic_tile_ops::load(ctx, ga, a, a_row0, k0);
      generic_tile_ops::load(ctx, gb, b, k0, 0);
      ASSERT_EQ(std::memcmp(fa[l].frag, ga.frag, sizeof ga.frag), 0) << "fast A fragment differs, lane " << l;
      ASSERT_EQ(std::memcmp(fb[l].frag, gb.frag, sizeof gb.frag), 0) << "fast B fragment differs, lane " << l;
    }
    wave_mma<T>(acc, fa, fb);
  }
}

enum class inputs { uniform, equal_scores, integer_scores };

struct case_shape {
  const char* name;
  int q_len, kv_len;
  bool causal;
  int tiles = 2;                   // KV tiles the wave runs over
  inputs kind = inputs::uniform;   // equal: q = k = 0.75; integer: q, k in −4..4 (exact scores)
  double logit = 0;                // equal / integer: the size of scale·score (0: scale 1/√D)
};

// Runs the case, asserting every element of O within its bound; *error (if
// given) gets the relative Frobenius error of the wave's rows against float64.
template <class T, int D> void attention_wave(const case_shape& cs, std::uint64_t seed, double* error = nullptr) {
  using kernel = ops::attention_stages<host_cdna_policy, T, D>;
  using cfg = cdna_attention_config<T, D>;
  using s_tile = typename kernel::s_tile;
  using o_tile = typename kernel::o_tile;
  constexpr int BQ = cfg::BQ, BKV = cfg::BKV;
  const int tiles = cs.tiles, keys = tiles * BKV;
  static_assert(kernel::WQ == 32 && BQ == 64, "one wave of 32 rows, the block's second");
  const int row0 = 32, q0 = 0;  // the second wave of the first query block
  const int shift = cs.kv_len - cs.q_len;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(-4, 4);

  // Q (BQ × D), K and V (keys × D), rounded to T; the reference reads the same values.
  std::vector<T> q(BQ * D), k(std::size_t(keys) * D), v(std::size_t(keys) * D);
  for (auto* x : {&q, &k})
    for (auto& e : *x)
      e = convert<T>(cs.kind == inputs::uniform ? u(rng) : cs.kind == inputs::equal_scores ? 0.75f : float(small(rng)));
  for (auto& x : v) x = convert<T>(u(rng));
  // scale·score ≈ logit: every score is 0.5625·D (equal), or an integer of
  // spread √D · 60/9 (integer).
  const double spread = cs.kind == inputs::equal_scores ? 0.5625 * D : std::sqrt(double(D)) * 60.0 / 9.0;
  const double scale = cs.logit > 0 ? double(float(cs.logit / spread)) : 1.0 / std::sqrt(double(D));
  const float scale_log2 = float(1.4426950408889634 * scale);

  lds_tile<T, typename cfg::layout_q> sq;
  for (int i = 0; i < BQ; ++i)
    for (int d = 0; d < D; ++d) sq.view().at(i, d) = q[i * D + d];

  std::vector<s_tile> s(64);
  std::vector<o_tile> o(64);
  std::vector<typename kernel::row_stats> rows(64);
  for (int ln = 0; ln < 64; ++ln) {
    host_cdna_policy::zero(o[ln]);
    rows[ln].reset();
  }

  for (int t = 0; t < tiles; ++t) {
    const int kv0 = t * BKV;
    lds_tile<T, typename cfg::layout_kt> skt;  // Kᵀ: (d, j) = k[kv0 + j][d]
    lds_tile<T, typename cfg::layout_v> sv;
    for (int j = 0; j < BKV; ++j)
      for (int d = 0; d < D; ++d) {
        skt.view().at(d, j) = k[std::size_t(kv0 + j) * D + d];
        sv.view().at(j, d) = v[std::size_t(kv0 + j) * D + d];
      }
    lds_tile<T, typename cfg::layout_p> sp, sp_generic;

    for (auto& x : s) host_cdna_policy::zero(x);
    lds_mma<T>(s, sq.view(), skt.view(), row0);
    if (::testing::Test::HasFatalFailure()) return;

    // The op's per-tile softmax, lane by lane in lock step.
    const int qrow0 = q0 + row0, kv_len = cs.kv_len;
    const bool causal = cs.causal;
    const float scale = scale_log2;
    run_wave([&](host_ctx& ctx) {
      const int ln = ctx.lane();
      host_cdna_policy::map(ctx, s[ln], [=](float x, int r, int c) {
        const int key = kv0 + c;
        const bool hidden = key >= kv_len || (causal && key > qrow0 + r + shift);
        return hidden ? neg_infinity() : x;  // the op's mask: S stays raw
      });
      kernel::online_softmax_step(ctx, s[ln], scale, o[ln], rows[ln]);
    });

    for (int ln = 0; ln < 64; ++ln) {
      host_ctx ctx;
      ctx.lane_ = ln;
      host_cdna_policy::store(ctx, sp.view(), s[ln], row0, 0);
      generic_tile_ops::store(ctx, sp_generic.view(), s[ln], row0, 0);
    }
    for (int e = 0; e < int(sp.mem.size()); ++e)
      ASSERT_EQ(sp.mem[e].bits, sp_generic.mem[e].bits) << "P in LDS: fast store differs from generic at " << e;
    for (int i = 0; i < BQ; ++i)  // the other wave's rows and the padding stay untouched
      for (int c = 0; c < cfg::layout_p::size / BQ; ++c) {
        const T x = sp.mem[i * (cfg::layout_p::size / BQ) + c];
        if (i < row0 || i >= row0 + 32 || c >= BKV) {
          ASSERT_EQ(x.bits, poison_of<T>().bits) << "P written at " << i << ", " << c;
        }
      }

    lds_mma<T>(o, sp.view(), sv.view(), row0);
    if (::testing::Test::HasFatalFailure()) return;
  }

  // The op's epilogue into a poisoned [q_len × D] output and LSE.
  std::vector<T> out(std::size_t(cs.q_len) * D, poison_of<T>());
  std::vector<float> lse(cs.q_len, std::numeric_limits<float>::quiet_NaN());
  typename kernel::problem p{};
  p.lse = lse.data();
  p.l_bs = p.l_hs = 0;
  p.l_ss = 1;
  p.q_len = cs.q_len;
  p.scale_log2 = scale_log2;
  const gmatrix<T> gout{out.data(), cs.q_len, D, D, 1, false};
  for (int ln = 0; ln < 64; ++ln) {
    host_ctx ctx;
    ctx.lane_ = ln;
    kernel::finish(ctx, p, 0, 0, q0 + row0, gout, o[ln], rows[ln]);
  }

  // float64 reference: softmax over the visible keys of the tiles.
  const double u_t = std::is_same_v<T, bf16> ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
  double diff2 = 0, ref2 = 0;
  for (int i = 0; i < cs.q_len; ++i) {
    if (i < row0 || i >= row0 + 32) {
      for (int d = 0; d < D; ++d) ASSERT_EQ(out[i * D + d].bits, poison_of<T>().bits) << "row " << i << " written";
      ASSERT_TRUE(std::isnan(lse[i])) << "LSE of row " << i << " written";
      continue;
    }
    std::vector<double> x(keys);
    double mx = -INFINITY;
    for (int j = 0; j < keys; ++j) {
      const bool visible = j < cs.kv_len && (!cs.causal || j <= i + shift);
      double dot = 0;
      for (int d = 0; d < D; ++d) dot += double(to_float(q[i * D + d])) * double(to_float(k[std::size_t(j) * D + d]));
      x[j] = visible ? dot * scale_log2 : -INFINITY;
      mx = std::max(mx, x[j]);
    }
    if (mx == -INFINITY) {  // no visible key: zeros and LSE = -inf
      for (int d = 0; d < D; ++d) ASSERT_EQ(to_float(out[i * D + d]), 0.0f) << "empty row " << i << " col " << d;
      ASSERT_EQ(lse[i], -INFINITY) << "empty row " << i;
      continue;
    }
    double sum = 0;
    for (int j = 0; j < keys; ++j) sum += (x[j] = std::exp2(x[j] - mx));
    const double ref_lse = std::log(2.0) * (mx + std::log2(sum));
    ASSERT_NEAR(lse[i], ref_lse, 1e-4 * (1 + std::fabs(ref_lse))) << cs.name << ": LSE of row " << i;
    for (int d = 0; d < D; ++d) {
      double ref = 0, mag = 0;
      for (int j = 0; j < keys; ++j) {
        const double pj = x[j] / sum, vj = to_float(v[std::size_t(j) * D + d]);
        ref += pj * vj;
        mag += pj * std::fabs(vj);
      }
      // P is rounded to T before P·V, O to T at the end; the rest is fp32.
      const double tol = mag * (u_t + 1e-4) + std::fabs(ref) * u_t + 1e-6;
      const double got = to_float(out[i * D + d]);
      ASSERT_NEAR(got, ref, tol) << cs.name << ": O(" << i << ", " << d << ")";
      diff2 += (got - ref) * (got - ref);
      ref2 += ref * ref;
    }
  }
  if (error) *error = std::sqrt(diff2 / ref2);
}

template <class T> class AttentionEmulation : public ::testing::Test {};
using AttentionInputTypes = ::testing::Types<bf16, fp16>;
TYPED_TEST_SUITE(AttentionEmulation, AttentionInputTypes);

// Both tiles in full view: the second tile rescales the first's O and l.
TYPED_TEST(AttentionEmulation, TwoTilesNoMask) {
  attention_wave<TypeParam, 64>({"no mask", 64, 64, false}, emulation_seed() + 10);
}
// kv_len = 50 masks the second tile's last 14 keys; q_len = 60 leaves rows 60..63 unwritten.
TYPED_TEST(AttentionEmulation, TwoTilesKvLenMaskAndShortQ) {
  attention_wave<TypeParam, 64>({"kv_len mask", 60, 50, false}, emulation_seed() + 11);
}
// Causal, diagonal through the second tile (shift 0).
TYPED_TEST(AttentionEmulation, TwoTilesCausalDiagonal) {
  attention_wave<TypeParam, 64>({"causal", 64, 64, true}, emulation_seed() + 12);
}
// Causal with kv_len < q_len: rows 32..39 see no key at all (m stays -inf).
TYPED_TEST(AttentionEmulation, CausalRowsWithoutKeys) {
  attention_wave<TypeParam, 64>({"causal, empty rows", 64, 24, true}, emulation_seed() + 13);
}
// head_dim 128: O is 4 atoms wide.
TYPED_TEST(AttentionEmulation, HeadDim128Causal) {
  attention_wave<TypeParam, 128>({"causal d128", 64, 64, true}, emulation_seed() + 14);
}

// Large logits over many KV tiles: the op's rescaling gives exactly 1 while a
// row's maximum stands still, so the error stays within 2× of the same
// inputs' error at logit 1 (the element bound above does not grow with kv_len).
template <class T> void large_logits(inputs kind, bool causal, std::initializer_list<double> logits, std::uint64_t seed) {
  constexpr int tiles = 32, keys = tiles * 32;
  case_shape base{"logit 1", 64, keys, causal, tiles, kind, 1.0};
  double at_one = 0;
  attention_wave<T, 64>(base, seed, &at_one);
  for (double logit : logits) {
    case_shape c = base;
    c.name = "large logit";
    c.logit = logit;
    double error = 0;
    attention_wave<T, 64>(c, seed, &error);
    if (::testing::Test::HasFatalFailure()) return;
    // P is rounded to T for P·V while l adds it unrounded (p_rounding_bias.hpp).
    const double bias = kind != inputs::equal_scores ? 0.0 : p_rounding_bias(std::is_same_v<T, bf16>, logit);
    std::cout << "[ info     ] " << (kind == inputs::equal_scores ? "equal" : "integer") << " scores, " << keys
              << " keys, logit " << logit << ": error " << error << " (" << at_one << " at logit 1, P rounding bias <= "
              << bias << ")\n";
    EXPECT_LE(error, 2 * at_one + bias) << "logit " << logit;
  }
}
TYPED_TEST(AttentionEmulation, LargeLogitsEqualScores) {
  large_logits<TypeParam>(inputs::equal_scores, false, {72, 7200, 8e6}, emulation_seed() + 15);
}
TYPED_TEST(AttentionEmulation, LargeLogitsIntegerScoresCausal) {
  large_logits<TypeParam>(inputs::integer_scores, true, {1e4}, emulation_seed() + 16);
}

}  // namespace
}  // namespace tessel::test
