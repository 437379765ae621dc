// tessel/ops/gemm/kernel.hpp — GEMM, written once as stage bodies of the block pipeline.
//
// One work unit is a BM × BN tile of C for one batch entry (layer). Its
// consumer units (warps, or warpgroups where the atom is group-scope) form a
// units_m × units_n grid, each owning a WM × WN accumulator tile in registers.
// A step is BK of K: load() copies the BM × BK tile of op(A) and the BK × BN
// tile of op(B) into a stage; compute() multiplies them into the accumulators.
// Who loads, who computes, and how stages are handed over is the schedule's
// (core/pipeline.hpp; the backend's config picks it). The backend policy P
// decides everything device-specific through its gemm_config (contract:
// core/gemm_contract.hpp): the atom, the block shape, the shared layouts
// (swizzle, padding, packing) and the fast paths of load / mma / store.
//
//   P (inherits generic_tile_ops): load, commit, wait<n>, zero, mma, mma_wait<n>, store;
//     optional: mma_operands (core/tile_ops.hpp)
#pragma once
#include "tessel/core/gemm_contract.hpp"
#include "tessel/core/pipeline.hpp"
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
template <class P, class TIn, class TOut, bool AK, bool BN_> struct gemm_stages {
  using cfg = typename P::template gemm_config<TIn, TOut>;
  using config = gemm_config_of<P, cfg>;
  using atom = typename config::atom;
  using smem_t = typename config::smem_type;
  using unit = typename config::unit;
  static constexpr int BM = config::BM, BN = config::BN, BK = config::BK;
  static constexpr int WM = config::WM, WN = config::WN;
  static constexpr int units = config::units_m * config::units_n;

  using tile_a = st<smem_t, typename cfg::template layout_a<AK>>;   // BM × BK
  using tile_b = st<smem_t, typename cfg::template layout_b<BN_>>;  // BK × BN
  using acc_t = rt_c<atom, WM, WN>;
  static_assert(tile_a::rows == BM && tile_a::cols == BK && tile_b::rows == BK && tile_b::cols == BN,
                "gemm: the config's shared layouts must be BM×BK and BK×BN");
  using problem = gemm_problem<TIn, TOut>;

  // Bytes of each operand tile of a stage, rounded to the schedule's alignment
  // (128 bytes; 1024 where a copy engine writes 128-byte-swizzled tiles).
  static constexpr int align = config::schedule::stage_align;
  static constexpr int a_bytes = (int(sizeof(smem_t)) * tile_a::size + align - 1) / align * align;
  static constexpr int b_bytes = (int(sizeof(smem_t)) * tile_b::size + align - 1) / align * align;
  static constexpr int stage_bytes = a_bytes + b_bytes;
  struct stage {
    tile_a a;
    tile_b b;
  };
  // The stage of an A tile and a B tile kept apart (tiles[0], tiles[1]: schedules with operand slots).
  TESSEL_HOST_DEVICE static stage stage_of(char* const* tiles) {
    return {tile_a{reinterpret_cast<smem_t*>(tiles[0])}, tile_b{reinterpret_cast<smem_t*>(tiles[1])}};
  }
  // A stage of stage_bytes: the A tile, then the B tile.
  TESSEL_HOST_DEVICE static stage stage_at(char* base) {
    char* const tiles[2] = {base, base + a_bytes};
    return stage_of(tiles);
  }

  struct work {
    int bm, bn, layer;
  };
  TESSEL_HOST_DEVICE static int tiles(const problem& p) {
    return (p.c.cols + BN - 1) / BN * ((p.c.rows + BM - 1) / BM);
  }
  TESSEL_HOST_DEVICE static int layers(const problem& p) { return p.batch; }
  // Raster: tiles walk C in bands of R = raster_group block rows; a band in
  // runs of R rows × S = raster_cols block columns (the band's last run
  // narrower where S does not divide its columns), a run row by row, so that
  // consecutive tiles share B tiles (the R rows of a column) and A tiles (the
  // S columns of a row). S = 1: a band column by column, down its rows.
  static constexpr int raster_rows = config::raster_group, raster_cols = config::raster_cols;
  struct raster_pos {
    int bm, bn, run_end;  // the tile's block row and column; the id after its run
  };
  TESSEL_HOST_DEVICE static raster_pos raster_at(const problem& p, int id) {
    const int tiles_m = (p.c.rows + BM - 1) / BM, tiles_n = (p.c.cols + BN - 1) / BN;
    constexpr int R = raster_rows, S = raster_cols;
    const int band = id / (R * tiles_n);
    const int rows = tiles_m - band * R < R ? tiles_m - band * R : R;  // block rows of this band
    const int in_band = id - band * R * tiles_n;
    if constexpr (S == 1) {  // the general case at S = 1, without its division by the run's width
      return {band * R + in_band % rows, in_band / rows, id - in_band % rows + rows};
    } else {
      const int run = in_band / (rows * S);
      const int cols = tiles_n - run * S < S ? tiles_n - run * S : S;  // block columns of this run
      const int in_run = in_band - run * rows * S;
      return {band * R + in_run / cols, run * S + in_run % cols, id - in_run + rows * cols};
    }
  }
  TESSEL_HOST_DEVICE static work work_at(const problem& p, int id, int layer) {
    const raster_pos r = raster_at(p, id);
    return {r.bm, r.bn, layer};
  }
  TESSEL_HOST_DEVICE static int run_end(const problem& p, int id) { return raster_at(p, id).run_end; }
  // A unit's relative cost: its C tile's rows × columns (the last row and column strips are partial).
  static long unit_cost(const problem& p, int id) {
    const raster_pos r = raster_at(p, id);
    const int rows = p.c.rows - r.bm * BM < BM ? p.c.rows - r.bm * BM : BM;
    const int cols = p.c.cols - r.bn * BN < BN ? p.c.cols - r.bn * BN : BN;
    return long(rows) * cols;
  }
  // Within a step, a run's units take one A tile at a time (its row's) and
  // its S B tiles in turn, row after row.
  template <int I> static constexpr int run_tiles = I == 0 ? 1 : raster_cols;
  TESSEL_HOST_DEVICE static int steps(const problem& p, const work&) { return (p.a.cols + BK - 1) / BK; }
  // For schedules that run units in cluster pairs: consecutive units of the
  // raster are vertically adjacent C tiles, which read the same B tiles.
  static constexpr int paired_operand = 1;
  TESSEL_HOST_DEVICE static bool paired(const work& a, const work& b) { return a.bn == b.bn && a.layer == b.layer; }

  // The operands, for schedules that describe them to a copy engine (tensor maps).
  template <int I> static global_operand<const TIn> operand(const problem& p) {
    if constexpr (I == 0) return {p.a, p.batch_a, p.batch};
    else return {p.b, p.batch_b, p.batch};
  }
  template <int I> using operand_tile = std::conditional_t<I == 0, tile_a, tile_b>;
  static constexpr int operand_count = 2;
  template <int I> static global_operand<TOut> output(const problem& p) { return {p.c, p.batch_c, p.batch}; }
  template <int I> using output_tile = acc_t;  // what one unit stores of output I
  static constexpr int output_count = 1;
  using policy = P;

  template <class T> TESSEL_HOST_DEVICE static gmatrix<T> at_layer(gmatrix<T> m, std::int64_t stride, int layer) {
    m.ptr += layer * stride;
    return m;
  }

  template <class Ld> TESSEL_HOST_DEVICE static void load(Ld& ld, const stage& s, const problem& p, const work& w, int k) {
    ld.template copy<0>(s.a, at_layer(p.a, p.batch_a, w.layer), w.bm * BM, k * BK, w.layer);
    ld.template copy<1>(s.b, at_layer(p.b, p.batch_b, w.layer), k * BK, w.bn * BN, w.layer);
  }

  // Where the policy can build the mma's view of a stage from its addresses
  // alone (mma_operands: sm90's wgmma descriptors), describe() does so and
  // compute() uses it: a schedule may describe a step before its stage lands.
  using operands = mma_operands_of<P, acc_t, tile_a, tile_b>;
  struct state {
    acc_t acc;
    bool fresh;  // no step of this unit (or piece) computed yet
    typename operands::type ops;  // describe()'s, where operands::value
  };
  template <class U> TESSEL_HOST_DEVICE static int unit_m(const U& u) { return unit_index(u) / config::units_n; }
  template <class U> TESSEL_HOST_DEVICE static int unit_n(const U& u) { return unit_index(u) % config::units_n; }
  template <class U> TESSEL_HOST_DEVICE static int unit_index(const U& u) {
    if constexpr (unit::warps == 1) return u.warp();
    else return u.unit_index();
  }

  // Steps add up: a unit's steps may be split into ranges run apart, whose
  // accumulators (partial(state)) sum to the unit's (schedules that split
  // units by steps: core/split_plan.hpp).
  static constexpr bool split_steps = true;
  TESSEL_HOST_DEVICE static acc_t& partial(state& st) {
    settle(st);
    return st.acc;
  }
  // Rows of u's accumulator inside C (finish() stores no others; may exceed WM).
  template <class U> TESSEL_HOST_DEVICE static int partial_rows(const U& u, const problem& p, const work& w) {
    const int rows = p.c.rows - (w.bm * BM + unit_m(u) * WM);
    return rows > 0 ? rows : 0;
  }

  // Where the policy's mma can overwrite (mma_overwrites: sm90's wgmma), the
  // first step of a unit or piece sets acc instead of adding to a zeroed one:
  // 128 fewer register writes per lane between one unit's epilogue and the
  // next unit's first MMA (H100: +0.3-0.4% at 16 × 2048³, bench/notes/cuda_gemm.md).
  template <class U> using overwrites = mma_overwrites<P, U, acc_t, tile_a, tile_b>;
  // A unit of no steps (K = 0) never set acc: zero it before it is read.
  TESSEL_HOST_DEVICE static void settle(state& st) {
    P::zero_if(st.acc, st.fresh);
  }
  template <class U> TESSEL_HOST_DEVICE static void start(U&, state& st, const problem&, const work&) {
    st.fresh = true;
    if constexpr (!overwrites<U>::value) P::zero(st.acc);
  }
  template <class U>
  TESSEL_HOST_DEVICE static void describe(U& u, state& st, const stage& s, const problem&, const work&, int) {
    if constexpr (operands::value) st.ops = P::mma_operands(st.acc, s.a, s.b, unit_m(u) * WM, unit_n(u) * WN);
  }
  template <class U>
  TESSEL_HOST_DEVICE static void compute(U& u, state& st, const stage& s, const problem&, const work&, int) {
    if constexpr (operands::value) {
      static_assert(describes_of<gemm_stages, U>::value, "gemm: compute() needs describe() found by describe_step");
      P::mma(u, st.acc, st.ops, !st.fresh);
    } else if constexpr (overwrites<U>::value) P::mma(u, st.acc, s.a, s.b, unit_m(u) * WM, unit_n(u) * WN, !st.fresh);
    else P::mma(u, st.acc, s.a, s.b, unit_m(u) * WM, unit_n(u) * WN);
    st.fresh = false;
  }
  template <int N, class U> TESSEL_HOST_DEVICE static void retire(U&, state& st) { P::template mma_wait<N>(st.acc); }
  template <class U, class Out>
  TESSEL_HOST_DEVICE static void finish(U& u, Out& out, state& st, const problem& p, const work& w) {
    settle(st);
    const gmatrix<TOut> c = at_layer(p.c, p.batch_c, w.layer);
    out.template store<0>(u, c, st.acc, w.bm * BM + unit_m(u) * WM, w.bn * BN + unit_n(u) * WN, p.alpha, p.beta,
                          w.layer);
  }
};

template <class P, class TIn, class TOut, bool AK, bool BN_>
using gemm_kernel =
    pipeline_kernel<gemm_stages<P, TIn, TOut, AK, BN_>, typename gemm_stages<P, TIn, TOut, AK, BN_>::config::schedule>;

}  // namespace tessel::ops
