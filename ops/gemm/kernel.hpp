// tessel/ops/gemm/kernel.hpp — GEMM, written once against the core tile interface.
//
// One block computes a BM × BN tile of C for one batch entry. Its warps form a
// warps_m × warps_n grid, each owning a WM × WN accumulator tile in registers.
// K is consumed BK at a time through a ring of `stages` shared-tile pairs: the
// copy of tile kt + stages − 1 is in flight while tile kt feeds the matrix
// atoms. The backend policy P decides everything device-specific through its
// gemm_config: the atom, the block shape, the shared layouts (swizzle,
// padding, packing) and the fast paths of load / mma / store it overloads.
//
//   P::gemm_config<TIn>:  atom, smem_type, BM, BN, BK, warps_m, warps_n, stages,
//                         layout_a<K_contiguous>, layout_b<N_contiguous>
//   P (inherits generic_tile_ops): load, commit, wait<n>, zero, mma, store
//   P::context:           block_x/y/z, warp, lane, thread, threads, sync, smem
#pragma once
#include "tessel/core/scope.hpp"
#include "tessel/core/tile_ops.hpp"

namespace tessel::ops {

template <class TIn, class TOut> struct gemm_problem {
  gmatrix<const TIn> a;  // op(A) of batch 0: M × K
  gmatrix<const TIn> b;  // op(B) of batch 0: K × N
  gmatrix<TOut> c;       // C of batch 0: M × N
  std::int64_t batch_a, batch_b, batch_c;
  int batch;
  float alpha, beta;
};

// AK: op(A) is contiguous along K (row-major A); BN: op(B) contiguous along N.
template <class P, class TIn, class TOut, bool AK, bool BN_> struct gemm_kernel {
  using cfg = typename P::template gemm_config<TIn>;
  using atom = typename cfg::atom;
  using smem_t = typename cfg::smem_type;
  static constexpr int BM = cfg::BM, BN = cfg::BN, BK = cfg::BK, S = cfg::stages;
  static constexpr int WM = BM / cfg::warps_m, WN = BN / cfg::warps_n;
  static_assert(S >= 2, "gemm: the copy/compute ring needs at least two stages");
  static_assert(BM % cfg::warps_m == 0 && BN % cfg::warps_n == 0, "gemm: warps must split the block tile evenly");

  using tile_a = st<smem_t, typename cfg::template layout_a<AK>>;  // BM × BK
  using tile_b = st<smem_t, typename cfg::template layout_b<BN_>>;  // BK × BN
  using acc_t = rt_c<atom, WM, WN>;
  static_assert(tile_a::rows == BM && tile_a::cols == BK && tile_b::rows == BK && tile_b::cols == BN,
                "gemm: the config's shared layouts must be BM×BK and BK×BN");
  using problem = gemm_problem<TIn, TOut>;

  // Bytes of one stage of each operand, rounded so every stage stays 128-byte aligned.
  static constexpr int stage_a_bytes = (int(sizeof(smem_t)) * tile_a::size + 127) / 128 * 128;
  static constexpr int stage_b_bytes = (int(sizeof(smem_t)) * tile_b::size + 127) / 128 * 128;

  static launch_shape shape(const problem& p) {
    launch_shape s;
    s.grid_x = (p.c.cols + BN - 1) / BN * ((p.c.rows + BM - 1) / BM);  // linearised, rasterised in run()
    s.grid_z = p.batch < max_grid_z ? p.batch : max_grid_z;  // run() strides over the rest
    s.warps = cfg::warps_m * cfg::warps_n;
    s.smem_bytes = S * (stage_a_bytes + stage_b_bytes);
    return s;
  }

  static constexpr int max_grid_z = 65535;

  template <class Ctx> TESSEL_DEVICE static void run(Ctx& ctx, const problem& p) {
    for (int z = ctx.block_z(); z < p.batch; z += ctx.grid_z()) run_one(ctx, p, z);
  }

  template <class Ctx> TESSEL_DEVICE static void run_one(Ctx& ctx, const problem& p, int z) {
    // Raster: blocks walk C in column strips of `group` block-rows so that
    // consecutive blocks share B tiles (and A tiles) in cache.
    const int tiles_m = (p.c.rows + BM - 1) / BM, tiles_n = (p.c.cols + BN - 1) / BN;
    constexpr int group = 8;
    const int id = ctx.block_x();
    const int strip = id / (group * tiles_n);
    const int rows_in_strip = tiles_m - strip * group < group ? tiles_m - strip * group : group;
    const int in_strip = id - strip * group * tiles_n;
    const int bm = strip * group + in_strip % rows_in_strip;
    const int bn = in_strip / rows_in_strip;

    gmatrix<const TIn> a = p.a, b = p.b;
    gmatrix<TOut> c = p.c;
    a.ptr += z * p.batch_a;
    b.ptr += z * p.batch_b;
    c.ptr += z * p.batch_c;

    char* smem = ctx.smem();
    auto stage_a = [&](int s) { return tile_a{reinterpret_cast<smem_t*>(smem + s * stage_a_bytes)}; };
    auto stage_b = [&](int s) { return tile_b{reinterpret_cast<smem_t*>(smem + S * stage_a_bytes + s * stage_b_bytes)}; };

    const int wm = ctx.warp() / cfg::warps_n, wn = ctx.warp() % cfg::warps_n;
    acc_t acc;
    P::zero(acc);

    const int k_tiles = (a.cols + BK - 1) / BK;
    for (int s = 0; s < S - 1; ++s) {
      if (s < k_tiles) {
        P::load(ctx, stage_a(s), a, bm * BM, s * BK);
        P::load(ctx, stage_b(s), b, s * BK, bn * BN);
      }
      P::commit();
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
      P::template wait<S - 2>();  // tile kt has landed (for this thread)
      ctx.sync();                 // ... for every thread; and stage (kt - 1) % S is free again
      const int next = kt + S - 1;
      if (next < k_tiles) {
        P::load(ctx, stage_a(next % S), a, bm * BM, next * BK);
        P::load(ctx, stage_b(next % S), b, next * BK, bn * BN);
      }
      P::commit();
      P::mma(ctx, acc, stage_a(kt % S), stage_b(kt % S), wm * WM, wn * WN);
    }
    P::store(ctx, c, acc, bm * BM + wm * WM, bn * BN + wn * WN, p.alpha, p.beta);
  }
};

}  // namespace tessel::ops
