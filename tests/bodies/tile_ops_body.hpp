// tests/bodies/tile_ops_body.hpp — the tile operations on one backend, one atom at a time.
//
// Included by a generated translation unit after a category header
// (tests/category/<backend>.hpp) that defines, in tessel::test::backend:
//   run_kernel<Kernel>(launch_shape, params)   launch + wait on the backend
//   device dev(); bool available();            where the kernels run
//   using tile_configs = ::testing::Types<tile_config<Policy, Atom>, ...>;
//   const char* name;                           for test names
// Each test moves random data global -> shared -> register tiles through the
// policy's own load/mma/reduce/map/store and checks it on the host in float64.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "device_buffer.hpp"
#include "host_tensor.hpp"
#include "seed.hpp"
#include "tessel/core/math.hpp"
#include "tessel/core/tile_ops.hpp"

namespace tessel::test {

template <class Policy, class Atom> struct tile_config {
  using policy = Policy;
  using atom = Atom;
};

// A dense row-major matrix of floats on the backend's device.
struct device_matrix {
  int rows, cols;
  support::device_buffer buf;
  std::vector<float> host;
  device_matrix(int r, int c) : rows(r), cols(c), buf(backend::dev(), sizeof(float) * r * c + 64), host(std::size_t(r) * c) {}
  gmatrix<float> view() { return {static_cast<float*>(buf.data()), rows, cols, cols, 1, false}; }
  void upload() { buf.upload(host.data(), host.size() * sizeof(float)); }
  void download() { buf.download(host.data(), host.size() * sizeof(float)); }
  double at(int r, int c) const { return host[std::size_t(r) * cols + c]; }
};

// Random values exactly representable in T (the atom's input type).
template <class T> void fill_exact(std::vector<float>& v, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& x : v) x = to_float(convert<T>(u(rng)));
}
inline void poison(std::vector<float>& v) { std::fill(v.begin(), v.end(), std::nanf("")); }

// ---- kernels (one warp; every op is the policy's) ---------------------------

// The loads issued so far have landed in shared memory, for every thread.
template <class P, class Ctx> TESSEL_DEVICE void landed(Ctx& ctx) {
  P::commit();
  P::template wait<0>();
  ctx.sync();
}

// A and B copied global -> shared (row-major float tiles SA, SB, one after the
// other in the arena) through the policy's own loads, landed for every thread.
template <class SA, class SB> struct staged {
  SA a;
  SB b;
};
template <class P, class SA, class SB, class Ctx>
TESSEL_DEVICE staged<SA, SB> stage(Ctx& ctx, const gmatrix<float>& a, const gmatrix<float>& b) {
  smem_allocator alloc{ctx.smem()};
  staged<SA, SB> s{alloc.take<SA>(), alloc.take<SB>()};
  P::load(ctx, s.a, a, 0, 0);
  P::load(ctx, s.b, b, 0, 0);
  landed<P>(ctx);
  return s;
}

// Register tile t from `in` (Tile::rows × Tile::cols floats) through a row-major shared tile.
template <class P, class Tile, class Ctx>
TESSEL_DEVICE void load_through_shared(Ctx& ctx, Tile& t, const gmatrix<float>& in) {
  st<float, row_major<Tile::rows, Tile::cols>> s{reinterpret_cast<float*>(ctx.smem())};
  P::load(ctx, s, in, 0, 0);
  landed<P>(ctx);
  P::load(ctx, t, s, 0, 0);
}

template <class P, class Tile> struct round_trip_kernel {
  struct params { gmatrix<float> in, out; };
  template <class Ctx> TESSEL_DEVICE static void run(Ctx& ctx, const params& p) {
    Tile t;
    load_through_shared<P>(ctx, t, p.in);
    P::store(ctx, p.out, t, 0, 0, 1.0f, 0.0f);
  }
};

template <class P, class Atom, int TM, int TN, int TK> struct mma_kernel {
  struct params { gmatrix<float> a, b, c; };
  using ta = rt<Atom, operand::a, TM, TK>;
  using tb = rt<Atom, operand::b, TK, TN>;
  using tc = rt<Atom, operand::c, TM, TN>;
  using sa = st<float, row_major<ta::rows, ta::cols>>;
  using sb = st<float, row_major<tb::rows, tb::cols>>;
  static constexpr int smem_bytes = int(smem_allocator::bytes_for<sa, sb>());
  template <class Ctx> TESSEL_DEVICE static void run(Ctx& ctx, const params& p) {
    const auto s = stage<P, sa, sb>(ctx, p.a, p.b);
    ta a;
    tb b;
    tc c;
    P::load(ctx, a, s.a, 0, 0);
    P::load(ctx, b, s.b, 0, 0);
    P::zero(c);
    P::mma(c, a, b);
    P::store(ctx, p.c, c, 0, 0, 1.0f, 0.0f);
  }
};

// C-tile → A-operand relayout in registers, then C2 += A(registers) · B(shared).
template <class P, class Atom, int TM, int TN, int TK> struct relayout_kernel {
  struct params { gmatrix<float> a, b, c; };
  using tc_in = rt<Atom, operand::c, TM, TK * Atom::K / Atom::N>;  // A's values, loaded as a C tile
  using ta = rt<Atom, operand::a, TM, TK>;
  using tc = rt<Atom, operand::c, TM, TN>;
  using sa = st<float, row_major<ta::rows, ta::cols>>;
  using sb = st<float, row_major<TK * Atom::K, tc::cols>>;
  static constexpr int smem_bytes = int(smem_allocator::bytes_for<sa, sb>());
  template <class Ctx> TESSEL_DEVICE static void run(Ctx& ctx, const params& p) {
    const auto s = stage<P, sa, sb>(ctx, p.a, p.b);
    tc_in as_c;
    P::load(ctx, as_c, s.a, 0, 0);
    ta a;
    P::relayout(ctx, a, as_c);
    tc c;
    P::zero(c);
    P::mma(ctx, c, a, s.b, 0, 0);
    P::store(ctx, p.c, c, 0, 0, 1.0f, 0.0f);
  }
};

// Row max and column sum of a C tile; 2^(row max) by map_rows (power_of_two,
// the attention's rescale); the tile minus that by broadcast_rows.
template <class P, class Tile> struct reduce_kernel {
  struct params { gmatrix<float> in, row_max, col_sum, row_pow, centred; };
  template <class Ctx> TESSEL_DEVICE static void run(Ctx& ctx, const params& p) {
    Tile t;
    load_through_shared<P>(ctx, t, p.in);
    col_vector<Tile> mx;
    row_vector<Tile> sum;
    P::row_reduce(ctx, mx, t, [](float x, float y) { return x > y ? x : y; });
    P::col_reduce(ctx, sum, t, [](float x, float y) { return x + y; });
    const int lane = ctx.lane();
    for (int i = 0; i < Tile::tiles_r; ++i)
      for (int v = 0; v < Tile::values; ++v)  // each row from its first value (the contract: core/register_tile.hpp)
        if (Tile::geometry::first_in_row(v) == v) *p.row_max.addr(Tile::where(lane, i, 0, v).row, 0) = mx.value[i][v];
    for (int j = 0; j < Tile::tiles_c; ++j)
      for (int v = 0; v < Tile::values; ++v) *p.col_sum.addr(0, Tile::where(lane, 0, j, v).col) = sum.value[j][v];
    // broadcast_rows reads a row's value at its first value only (core/tile_ops.hpp): the others poisoned.
    for (int i = 0; i < Tile::tiles_r; ++i)
      for (int v = 0; v < Tile::values; ++v)
        if (Tile::geometry::first_in_row(v) != v) mx.value[i][v] = NAN;
    P::map_rows(mx, power_of_two{});
    for (int i = 0; i < Tile::tiles_r; ++i)
      for (int v = 0; v < Tile::values; ++v)
        if (Tile::geometry::first_in_row(v) == v) *p.row_pow.addr(Tile::where(lane, i, 0, v).row, 0) = mx.value[i][v];
    P::broadcast_rows(t, mx, [](float x, float m) { return x - m; });
    P::store(ctx, p.centred, t, 0, 0, 1.0f, 0.0f);
  }
};

// The attention's mask (map over hide_keys) on a C tile: row r keeps columns
// below min(r + diagonal, visible).
template <class P, class Tile> struct mask_kernel {
  struct params {
    gmatrix<float> in, out;
    hide_keys mask;
  };
  template <class Ctx> TESSEL_DEVICE static void run(Ctx& ctx, const params& p) {
    Tile t;
    load_through_shared<P>(ctx, t, p.in);
    P::map(ctx, t, p.mask);
    P::store(ctx, p.out, t, 0, 0, 1.0f, 0.0f);
  }
};

// Runs kernel K as one block of one warp with smem_bytes of shared memory.
template <class K> void run_one_warp(int smem_bytes, const typename K::params& params) {
  launch_shape s;
  s.warps = 1;
  s.smem_bytes = smem_bytes;
  backend::run_kernel<K>(s, params);
}
// Shared memory for a row-major float copy of Tile.
template <class Tile> constexpr int float_tile_bytes = int(sizeof(float)) * Tile::rows * Tile::cols;

// Runs kernel K (params {a, b, c}) on random A (M×K) and B (K×N) exact in the
// atom's input types, C poisoned, and checks C = A·B against float64.
template <class K, class Atom> void expect_product(int m, int n, int k, const char* what) {
  std::mt19937_64 rng(case_seed(std::string(what) + backend::name));
  device_matrix a(m, k), b(k, n), c(m, n);
  fill_exact<typename Atom::a_type>(a.host, rng);
  fill_exact<typename Atom::b_type>(b.host, rng);
  poison(c.host);
  a.upload();
  b.upload();
  c.upload();
  run_one_warp<K>(K::smem_bytes, {a.view(), b.view(), c.view()});
  c.download();
  double num = 0, den = 0;
  for (int i = 0; i < c.rows; ++i)
    for (int j = 0; j < c.cols; ++j) {
      double ref = 0;
      for (int p = 0; p < a.cols; ++p) ref += a.at(i, p) * b.at(p, j);
      ASSERT_TRUE(std::isfinite(c.at(i, j))) << what << ": C(" << i << "," << j << ") not written";
      num += (c.at(i, j) - ref) * (c.at(i, j) - ref);
      den += ref * ref;
    }
  EXPECT_LT(std::sqrt(num / den), 1e-6) << what;
}

// ---- tests --------------------------------------------------------------------

template <class Config> class TileOps : public ::testing::Test {};
TYPED_TEST_SUITE_P(TileOps);

TYPED_TEST_P(TileOps, RegisterTilesRoundTripThroughTheAtomMaps) {
  if (!backend::available()) GTEST_SKIP() << "no device for backend " << backend::name;
  using P = typename TypeParam::policy;
  using Atom = typename TypeParam::atom;
  std::mt19937_64 rng(case_seed(std::string("tile-roundtrip-") + backend::name));
  auto check = [&](auto tile) {
    using Tile = decltype(tile);
    using K = round_trip_kernel<P, Tile>;
    device_matrix in(Tile::rows, Tile::cols), out(Tile::rows, Tile::cols);
    fill_exact<typename Tile::value_type>(in.host, rng);
    poison(out.host);
    in.upload();
    out.upload();
    run_one_warp<K>(float_tile_bytes<Tile>, {in.view(), out.view()});
    out.download();
    for (int r = 0; r < Tile::rows; ++r)
      for (int c = 0; c < Tile::cols; ++c)
        ASSERT_EQ(out.at(r, c), in.at(r, c)) << "role tile " << Tile::rows << "x" << Tile::cols << " at " << r << "," << c;
  };
  check(rt<Atom, operand::a, 2, 2>{});
  check(rt<Atom, operand::b, 2, 2>{});
  check(rt<Atom, operand::c, 2, 2>{});
}

TYPED_TEST_P(TileOps, MmaOnRegisterTilesMatchesFloat64) {
  if (!backend::available()) GTEST_SKIP() << "no device for backend " << backend::name;
  using P = typename TypeParam::policy;
  using Atom = typename TypeParam::atom;
  using K = mma_kernel<P, Atom, 2, 2, 3>;
  expect_product<K, Atom>(K::ta::rows, K::tb::cols, K::ta::cols, "tile-mma-");
}

TYPED_TEST_P(TileOps, RowAndColumnReductionsAndBroadcast) {
  if (!backend::available()) GTEST_SKIP() << "no device for backend " << backend::name;
  using P = typename TypeParam::policy;
  using Tile = rt<typename TypeParam::atom, operand::c, 2, 2>;
  using K = reduce_kernel<P, Tile>;
  std::mt19937_64 rng(case_seed(std::string("tile-reduce-") + backend::name));
  device_matrix in(Tile::rows, Tile::cols), mx(Tile::rows, 1), sum(1, Tile::cols), pw(Tile::rows, 1),
      centred(Tile::rows, Tile::cols);
  fill_exact<float>(in.host, rng);
  poison(mx.host);
  poison(sum.host);
  poison(pw.host);
  poison(centred.host);
  in.upload();
  mx.upload();
  sum.upload();
  pw.upload();
  centred.upload();
  run_one_warp<K>(float_tile_bytes<Tile>, {in.view(), mx.view(), sum.view(), pw.view(), centred.view()});
  mx.download();
  sum.download();
  pw.download();
  centred.download();
  for (int r = 0; r < Tile::rows; ++r) {
    double m = -INFINITY;
    for (int c = 0; c < Tile::cols; ++c) m = std::max(m, in.at(r, c));
    ASSERT_EQ(mx.at(r, 0), m) << "row max of row " << r;
    // map_rows(power_of_two): exp2 to ~1-2 ulp (libm, ex2.approx, the SIMD exp2); then broadcast exactly.
    const double p = pw.at(r, 0);
    ASSERT_NEAR(p, std::exp2(m), 4e-7 * std::exp2(m)) << "2^(row max) of row " << r;
    for (int c = 0; c < Tile::cols; ++c) ASSERT_EQ(centred.at(r, c), double(float(in.at(r, c) - p))) << r << "," << c;
  }
  for (int c = 0; c < Tile::cols; ++c) {
    double s_ = 0;
    for (int r = 0; r < Tile::rows; ++r) s_ += in.at(r, c);
    ASSERT_NEAR(sum.at(0, c), s_, 1e-5 * Tile::rows) << "column sum of column " << c;
  }
}

TYPED_TEST_P(TileOps, MaskHidesEachRowsSuffix) {
  if (!backend::available()) GTEST_SKIP() << "no device for backend " << backend::name;
  using P = typename TypeParam::policy;
  using Tile = rt<typename TypeParam::atom, operand::c, 2, 2>;
  using K = mask_kernel<P, Tile>;
  std::mt19937_64 rng(case_seed(std::string("tile-mask-") + backend::name));
  // causal (the diagonal crossing the tile), keys ending inside the tile, both, none hidden, all hidden
  const hide_keys masks[] = {{Tile::cols, 1 - Tile::rows / 2}, {Tile::cols, 1 - Tile::rows},
                             {Tile::cols - 1, 1 - Tile::rows / 3}, {Tile::cols - 3, Tile::cols - 3},
                             {Tile::cols / 2 + 1, 2}, {Tile::cols, Tile::cols}, {0, 0}};
  for (const hide_keys& m : masks) {
    device_matrix in(Tile::rows, Tile::cols), out(Tile::rows, Tile::cols);
    fill_exact<float>(in.host, rng);
    poison(out.host);
    in.upload();
    out.upload();
    run_one_warp<K>(float_tile_bytes<Tile>, {in.view(), out.view(), m});
    out.download();
    for (int r = 0; r < Tile::rows; ++r)
      for (int c = 0; c < Tile::cols; ++c) {
        const bool kept = c < r + m.diagonal && c < m.visible;
        ASSERT_EQ(out.at(r, c), kept ? in.at(r, c) : -INFINITY)
            << "visible " << m.visible << ", diagonal " << m.diagonal << " at " << r << "," << c;
      }
  }
}

TYPED_TEST_P(TileOps, RelayoutCToAThenMmaWithRegisterA) {
  using Atom = typename TypeParam::atom;
  // The shape test first: it is free, where c_feeds_a searches the atom's maps
  // (for the AVX-512 atom, N / K = 48 k-tiles of 8 values in 384 C values).
  if constexpr (Atom::K % Atom::N != 0 || !c_feeds_a<Atom>()) {
    GTEST_SKIP() << "this atom's C fragment is not its A fragment (relayout not defined)";
  } else {
    if (!backend::available()) GTEST_SKIP() << "no device for backend " << backend::name;
    using P = typename TypeParam::policy;
    using K = relayout_kernel<P, Atom, 2, 2, 2>;
    expect_product<K, Atom>(K::ta::rows, K::tc::cols, K::ta::cols, "tile-relayout-");
  }
}

REGISTER_TYPED_TEST_SUITE_P(TileOps, RegisterTilesRoundTripThroughTheAtomMaps, MmaOnRegisterTilesMatchesFloat64,
                            RowAndColumnReductionsAndBroadcast, MaskHidesEachRowsSuffix,
                            RelayoutCToAThenMmaWithRegisterA);

}  // namespace tessel::test
