// tests/hip/mfma_emulation_test.cpp — the HIP backend's MFMA layouts, checked on the host.
//
// Runs in every build (g++, no GPU). Random tiles go through the HIP policy's
// own code path — the atom's maps, generic_tile_ops and the CDNA fast paths of
// tile_ops_cdna.hpp, with a host context per lane — into the registers of an
// emulated wavefront; mfma_emulator.hpp executes v_mfma_f32_32x32x8 the way
// AMD's ISA defines it (written independently of the atom's maps); the result
// comes back out through the policy's C map and is compared with a float64
// reference on the same (bf16- / fp16-rounded) inputs. A wrong lane map, a
// wrong fragment order or a fast path that differs from the generic one fails.
// Seed: $TESSEL_SEED, else random (printed).
#include <gtest/gtest.h>

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
#include "tessel/hip/gemm_config.hpp"
#include "tessel/hip/tile_ops_cdna.hpp"
#include "tessel/ops/gemm/dispatch.hpp"

namespace tessel::test {
namespace {

using hip::cdna_gemm_config;
using hip::cdna_tile_ops;
using hip::mfma_32x32x8;

template <class T> std::uint16_t bits_of(T x) { return x.bits; }

// A value of T drawn uniformly from [-1, 1), rounded to T (never all zeros).
template <class T> T random_value(std::mt19937_64& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  return convert<T>(d(rng));
}

// A shared tile backed by a vector; padding (and everything) starts as poison.
template <class T, class L> struct host_st {
  std::vector<T> mem = std::vector<T>(L::size, poison());
  st<T, L> view() { return {mem.data()}; }
  static T poison() {
    if constexpr (std::is_same_v<T, float>) return std::numeric_limits<float>::quiet_NaN();
    else return T::from_bits(0x7fff);
  }
};

// Packs a lane's 4 A or B fragment values into its two VGPRs, as the hardware
// register file holds a 4 × 16-bit vector operand (element e: VGPR e/2, bits 16·(e%2)).
template <class T> void pack(std::uint32_t (&regs)[2], const T (&frag)[4]) {
  regs[0] = regs[1] = 0;
  for (int e = 0; e < 4; ++e) regs[e / 2] |= std::uint32_t(bits_of(frag[e])) << (16 * (e % 2));
}

// |error| allowed at a C element: `steps` fp32 roundings of a value of size
// `scale` (sum of |products| and |C|). A layout error is of the order of scale.
double tolerance(double scale, int steps) { return steps * 2.0 * std::ldexp(scale, -24) + 1e-30; }

template <class T> class MfmaEmulation : public ::testing::Test {};
using InputTypes = ::testing::Types<bf16, fp16>;
TYPED_TEST_SUITE(MfmaEmulation, InputTypes);

// The atom's maps, point by point, against the ISA's placement (a quick,
// precise diagnostic; the end-to-end tests below are the real check).
TYPED_TEST(MfmaEmulation, AtomMapsAreTheIsaLayout) {
  using Atom = mfma_32x32x8<TypeParam>;
  static_assert(Atom::lanes == 64 && Atom::M == 32 && Atom::N == 32 && Atom::K == 8);
  for (int l = 0; l < 64; ++l) {
    for (int e = 0; e < 4; ++e) {
      const coord a = Atom::a_coord(l, e), b = Atom::b_coord(l, e);
      EXPECT_EQ(a.row + 32 * (a.col / 4), l) << "A lane " << l << " value " << e;
      EXPECT_EQ(a.col % 4, e) << "A lane " << l << " value " << e;
      EXPECT_EQ(b.col + 32 * (b.row / 4), l) << "B lane " << l << " value " << e;
      EXPECT_EQ(b.row % 4, e) << "B lane " << l << " value " << e;
    }
    for (int r = 0; r < 16; ++r) {
      const coord c = Atom::c_coord(l, r);
      const isa_c_slot s = isa_c_place(c.row, c.col);
      EXPECT_TRUE(s.lane == l && s.reg == r) << "C lane " << l << " value " << r << " -> (" << c.row << ", " << c.col
                                             << "), which the ISA keeps in lane " << s.lane << " VGPR " << s.reg;
    }
  }
}

// One atom: A, B, C from shared tiles through generic_tile_ops::load per lane,
// one emulated instruction, D out through generic_tile_ops::store.
TYPED_TEST(MfmaEmulation, OneAtomThroughGenericLoadAndStore) {
  using T = TypeParam;
  using Atom = mfma_32x32x8<T>;
  std::mt19937_64 rng(emulation_seed());
  host_st<T, row_major<32, 8>> sa;
  host_st<T, col_major<8, 32>> sb;  // the other majorness, to vary the path
  host_st<float, row_major<32, 32>> sc;
  for (int i = 0; i < 32; ++i)
    for (int k = 0; k < 8; ++k) sa.view().at(i, k) = random_value<T>(rng);
  for (int k = 0; k < 8; ++k)
    for (int j = 0; j < 32; ++j) sb.view().at(k, j) = random_value<T>(rng);
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) sc.view().at(i, j) = random_value<float>(rng);

  wave_registers w;
  for (int l = 0; l < 64; ++l) {
    host_ctx ctx;
    ctx.lane_ = l;
    rt<Atom, operand::a, 1, 1> fa;
    rt<Atom, operand::b, 1, 1> fb;
    rt<Atom, operand::c, 1, 1> fc;
    generic_tile_ops::load(ctx, fa, sa.view(), 0, 0);
    generic_tile_ops::load(ctx, fb, sb.view(), 0, 0);
    generic_tile_ops::load(ctx, fc, sc.view(), 0, 0);
    pack(w.a[l], fa.frag[0][0]);
    pack(w.b[l], fb.frag[0][0]);
    for (int r = 0; r < 16; ++r) w.c[l][r] = fc.frag[0][0][r];
  }
  emulate_mfma_32x32x8<T>(w);

  std::vector<float> out(32 * 32, std::numeric_limits<float>::quiet_NaN());
  const gmatrix<float> g{out.data(), 32, 32, 32, 1, false};
  for (int l = 0; l < 64; ++l) {
    host_ctx ctx;
    ctx.lane_ = l;
    rt<Atom, operand::c, 1, 1> fc;
    for (int r = 0; r < 16; ++r) fc.frag[0][0][r] = w.c[l][r];
    generic_tile_ops::store(ctx, g, fc, 0, 0, 1.0f, 0.0f);
  }
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) {
      double ref = sc.view().at(i, j), scale = std::fabs(ref);
      for (int k = 0; k < 8; ++k) {
        const double p = double(to_float(sa.view().at(i, k))) * double(to_float(sb.view().at(k, j)));
        ref += p;
        scale += std::fabs(p);
      }
      ASSERT_NEAR(out[i * 32 + j], ref, tolerance(scale, 1)) << "C(" << i << ", " << j << ")";
    }
}

// A warp tile: 64×64 from 2×2 atoms, K = LA::cols in steps of 8, from padded
// LDS layouts at a warp offset, fragments through the CDNA fast path (checked
// bit-equal to the generic load), epilogue with alpha/beta into a larger C.
template <class T, class LA, class LB> void warp_tile_64x64(std::uint64_t s) {
  using Atom = mfma_32x32x8<T>;
  static_assert(LA::rows == 128 && LB::cols == 128 && LA::cols == LB::rows);
  constexpr int K = LA::cols;
  std::mt19937_64 rng(s);
  host_st<T, LA> sa;
  host_st<T, LB> sb;
  for (int i = 0; i < LA::rows; ++i)
    for (int k = 0; k < LA::cols; ++k) sa.view().at(i, k) = random_value<T>(rng);
  for (int k = 0; k < LB::rows; ++k)
    for (int j = 0; j < LB::cols; ++j) sb.view().at(k, j) = random_value<T>(rng);
  const int a_row0 = 64, b_col0 = 32;  // a warp's corner inside the block tile

  using acc_t = rt_c<Atom, 64, 64>;
  std::vector<acc_t> acc(64);
  for (auto& t : acc) generic_tile_ops::zero(t);
  for (int k0 = 0; k0 < LA::cols; k0 += Atom::K) {
    std::vector<rt<Atom, operand::a, 2, 1>> fa(64);
    std::vector<rt<Atom, operand::b, 1, 2>> fb(64);
    for (int l = 0; l < 64; ++l) {
      host_ctx ctx;
      ctx.lane_ = l;
      rt<Atom, operand::a, 2, 1> ga;
      rt<Atom, operand::b, 1, 2> gb;
      cdna_tile_ops::load(ctx, fa[l], sa.view(), a_row0, k0);
      cdna_tile_ops::load(ctx, fb[l], sb.view(), k0, b_col0);
      generic_tile_ops::load(ctx, ga, sa.view(), a_row0, k0);
      generic_tile_ops::load(ctx, gb, sb.view(), k0, b_col0);
      ASSERT_EQ(std::memcmp(fa[l].frag, ga.frag, sizeof ga.frag), 0) << "fast A fragment differs, lane " << l << " k0 " << k0;
      ASSERT_EQ(std::memcmp(fb[l].frag, gb.frag, sizeof gb.frag), 0) << "fast B fragment differs, lane " << l << " k0 " << k0;
    }
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        wave_registers w;
        for (int l = 0; l < 64; ++l) {
          pack(w.a[l], fa[l].frag[i][0]);
          pack(w.b[l], fb[l].frag[0][j]);
          for (int r = 0; r < 16; ++r) w.c[l][r] = acc[l].frag[i][j][r];
        }
        emulate_mfma_32x32x8<T>(w);
        for (int l = 0; l < 64; ++l)
          for (int r = 0; r < 16; ++r) acc[l].frag[i][j][r] = w.c[l][r];
      }
  }

  // Epilogue into a 100×90 C (row-major, ld 96) at (10, 20): C = 1.25·AB − 0.5·C0.
  const int rows = 100, cols = 90, ld = 96, r0 = 10, c0 = 20;
  const float alpha = 1.25f, beta = -0.5f;
  std::vector<T> c0v(rows * ld), out(rows * ld);
  for (auto& x : c0v) x = random_value<T>(rng);
  out = c0v;
  const gmatrix<T> g{out.data(), rows, cols, ld, 1, false};
  for (int l = 0; l < 64; ++l) {
    host_ctx ctx;
    ctx.lane_ = l;
    generic_tile_ops::store(ctx, g, acc[l], r0, c0, alpha, beta);
  }
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const float got = to_float(out[r * ld + c]);
      const int i = r - r0, j = c - c0;
      if (i < 0 || i >= 64 || j < 0 || j >= 64) {
        ASSERT_EQ(bits_of(out[r * ld + c]), bits_of(c0v[r * ld + c])) << "written outside the tile at " << r << ", " << c;
        continue;
      }
      double ab = 0, scale = 0;
      for (int k = 0; k < K; ++k) {
        const double p = double(to_float(sa.view().at(a_row0 + i, k))) * double(to_float(sb.view().at(k, b_col0 + j)));
        ab += p;
        scale += std::fabs(p);
      }
      const double ref = alpha * ab + beta * double(to_float(c0v[r * ld + c]));
      // fp32 accumulation, then one rounding to T (half an ulp of T at |ref|, plus slack).
      const double ulp_t = std::ldexp(std::fabs(ref) + 1e-3, std::is_same_v<T, bf16> ? -7 : -10);
      ASSERT_NEAR(got, ref, tolerance(alpha * scale, K / 8) + ulp_t) << "C(" << r << ", " << c << ")";
    }
}

// The GEMM configuration's own layouts (BK = 16: 2 steps).
TYPED_TEST(MfmaEmulation, WarpTileFromGemmConfigLayouts) {
  using cfg = cdna_gemm_config<TypeParam>;
  warp_tile_64x64<TypeParam, typename cfg::template layout_a<true>, typename cfg::template layout_b<true>>(emulation_seed() + 1);
}
// K = 32 in 4 steps, the same padded layouts one BK larger.
TYPED_TEST(MfmaEmulation, WarpTileK32InFourSteps) {
  warp_tile_64x64<TypeParam, row_major<128, 32, 8>, col_major<32, 128, 8>>(emulation_seed() + 4);
}

// Row and column reductions of a 64×64 accumulator tile across the 64 lanes
// (shfl_xor with the atom's c_row_xor / c_col_xor masks, emulated in lock step).
// The tile's registers are filled by the ISA's placement, not the atom's map.
TYPED_TEST(MfmaEmulation, RowAndColumnReductionsOverLanes) {
  using Atom = mfma_32x32x8<TypeParam>;
  using tile = rt_c<Atom, 64, 64>;
  std::mt19937_64 rng(emulation_seed() + 2);
  std::vector<double> m(64 * 64);
  std::vector<tile> regs(64);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c) {
      const float v = random_value<float>(rng);
      m[r * 64 + c] = v;
      const isa_c_slot s = isa_c_place(r % 32, c % 32);
      regs[s.lane].frag[r / 32][c / 32][s.reg] = v;
    }
  // Inverse of the ISA placement: (lane, reg) -> row / column within an atom.
  int row_of[64][16], col_of[64][16];
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) {
      const isa_c_slot s = isa_c_place(i, j);
      row_of[s.lane][s.reg] = i;
      col_of[s.lane][s.reg] = j;
    }

  std::vector<col_vector<tile>> rows(64);
  std::vector<row_vector<tile>> cols(64);
  run_wave([&](host_ctx& ctx) {
    generic_tile_ops::row_reduce(ctx, rows[ctx.lane()], regs[ctx.lane()], [](float a, float b) { return a + b; });
    generic_tile_ops::col_reduce(ctx, cols[ctx.lane()], regs[ctx.lane()], [](float a, float b) { return a > b ? a : b; });
  });
  for (int l = 0; l < 64; ++l)
    for (int v = 0; v < 16; ++v) {
      for (int i = 0; i < 2; ++i) {
        const int row = 32 * i + row_of[l][v];
        double sum = 0, scale = 0;
        for (int c = 0; c < 64; ++c) sum += m[row * 64 + c], scale += std::fabs(m[row * 64 + c]);
        ASSERT_NEAR(rows[l].value[i][v], sum, tolerance(scale, 64)) << "row sum, lane " << l << " value " << v;
      }
      for (int j = 0; j < 2; ++j) {
        const int col = 32 * j + col_of[l][v];
        double mx = -1e30;
        for (int r = 0; r < 64; ++r) mx = std::max(mx, m[r * 64 + col]);
        ASSERT_EQ(double(cols[l].value[j][v]), mx) << "column max, lane " << l << " value " << v;
      }
    }
}

// ---- global -> LDS: the 16-byte fast path against the generic copy ----------

// One block-scope copy, run thread by thread (256 threads, as in the GEMM).
template <class Ops, class T, class L> std::vector<T> copy_tile(const gmatrix<const T>& g, int row0, int col0) {
  host_st<T, L> s;
  for (int t = 0; t < 256; ++t) {
    host_ctx ctx;
    ctx.thread_ = t;
    ctx.threads_ = 256;
    Ops::load(ctx, s.view(), g, row0, col0);
  }
  return s.mem;
}

template <class T, class L>
void expect_same_copy(const char* what, int rows, int cols, bool row_major_src, int ld, int offset, int row0, int col0,
                      bool expect_vec16, std::mt19937_64& rng) {
  std::vector<T> mem(std::size_t(ld) * (row_major_src ? rows : cols) + offset + 8);
  for (auto& x : mem) x = random_value<T>(rng);
  matrix_ref ref{mem.data() + offset, row_major_src ? ld : 1, row_major_src ? 1 : ld, 0};
  const gmatrix<const T> g = ops::make_gmatrix<const T>(ref, rows, cols);
  ASSERT_EQ(g.vec16, expect_vec16) << what;
  const auto fast = copy_tile<cdna_tile_ops, T, L>(g, row0, col0);
  const auto slow = copy_tile<generic_tile_ops, T, L>(g, row0, col0);
  ASSERT_EQ(std::memcmp(fast.data(), slow.data(), sizeof(T) * fast.size()), 0)
      << what << ": rows " << rows << " cols " << cols << (row_major_src ? " row-major" : " col-major") << " ld " << ld
      << " at (" << row0 << ", " << col0 << ")";
}

template <class T> void global_to_lds_cases() {
  using cfg = cdna_gemm_config<T>;
  std::mt19937_64 rng(emulation_seed() + 3);
  constexpr int V = 16 / int(sizeof(T));
  for (bool rm : {true, false}) {
    // A tiles (BM × BK) and B tiles (BK × BN), both global majornesses.
    using LA = typename cfg::template layout_a<true>;
    using LB = typename cfg::template layout_b<true>;
    const int M = 2 * cfg::BM + 40, K = 3 * cfg::BK + 8 * V, N = 2 * cfg::BN + 24;
    const int lda = rm ? K + 2 * V : M + 2 * V, ldb = rm ? N + 2 * V : K + 2 * V;
    expect_same_copy<T, LA>("A interior", M, K, rm, lda, 0, cfg::BM, cfg::BK, true, rng);
    expect_same_copy<T, LA>("A edge", M, K, rm, lda, 0, 2 * cfg::BM, 3 * cfg::BK, true, rng);
    expect_same_copy<T, LA>("A misaligned", M, K, rm, lda + 1, 0, cfg::BM, cfg::BK, false, rng);
    expect_same_copy<T, LA>("A offset base", M, K, rm, lda, 1, 0, 0, false, rng);
    expect_same_copy<T, LB>("B interior", K, N, rm, ldb, 0, cfg::BK, cfg::BN, true, rng);
    expect_same_copy<T, LB>("B edge", K, N, rm, ldb, 0, 3 * cfg::BK, 2 * cfg::BN, true, rng);
    expect_same_copy<T, LB>("B misaligned", K, N, rm, ldb + 1, 0, 0, cfg::BN, false, rng);
  }
}

TEST(CdnaGlobalToLds, Bf16FastPathEqualsGeneric) { global_to_lds_cases<bf16>(); }
TEST(CdnaGlobalToLds, Fp16FastPathEqualsGeneric) { global_to_lds_cases<fp16>(); }
TEST(CdnaGlobalToLds, Fp32FastPathEqualsGeneric) { global_to_lds_cases<float>(); }

}  // namespace
}  // namespace tessel::test
