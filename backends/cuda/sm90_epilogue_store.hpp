// tessel/cuda/sm90_epilogue_store.hpp — the sm90 schedule's epilogue store (schedule_sm90.hpp's storer).
//
// A consumer warpgroup's wgmma accumulator (output 0, where the schedule's
// params say a tensor map describes it: Params::out_tma, out_map,
// out_layered) goes through that warpgroup's shared buffer, two halves of
// round_bytes, in rounds: st.shared (the policy's stage_epilogue, alpha /
// beta and the conversion included), fence.proxy.async, a named barrier of
// the warpgroup, then TMA stores issued by its lane 0 and left in flight;
// a half is written again only once the stores of the round before the
// last have read it (bulk_wait_read<1>). Anything else takes the policy's store.
// A split unit's blocks each store a window of the tile's columns (columns(),
// whole panels: schedule_sm90.hpp's reduce-scatter); rounds outside it are
// skipped whole, panels outside it not stored. Only the staged store takes a
// window; the policy's store always stores the whole tile.
#pragma once
#include <cstdint>
#include <type_traits>
#include <utility>

#include "tessel/core/register_tile.hpp"
#include "tessel/cuda/arch/tma.hpp"
#include "tessel/cuda/arch/wgmma.hpp"
#include "tessel/cuda/atom/wgmma.hpp"
#include "tessel/cuda/sm90_trace.hpp"

namespace tessel::cuda {

// Whether a register tile is one warpgroup's wgmma accumulator (the staged epilogue's shape).
template <class Tile> struct wgmma_accumulator : std::false_type {};
template <class T, int N, int TM> struct wgmma_accumulator<rt<wgmma_m64k16<T, N>, operand::c, TM, 1>> : std::true_type {
  static constexpr int n = N, rows = 64 * TM;
};

// Op: the op whose output 0 this stores; Params: its schedule's params.
template <class Op, class Params, int round_bytes, bool PlainStore> struct sm90_tma_storer {
  const Params& pp;
  std::uint32_t buf;
  int barrier;  // named barrier of this warpgroup
  bool issuer;
  int half = 0;  // the half the next round writes
  int col_begin = 0, col_end = 1 << 30;  // the tile's columns this block stores (all, but for a split unit)
  TESSEL_DEVICE void columns(int begin, int end) { col_begin = begin, col_end = end; }
  // The columns of a staged panel of output TD from a wgmma accumulator Tile (a window's unit).
  template <class Tile, class TD>
  static constexpr int panel_cols =
      Op::policy::template staging<TD, wgmma_accumulator<Tile>::rows / 64, round_bytes>::panel_cols;
  // TESSEL_SM90_TRACE: the recorder of this thread and the unit being stored
  // (events per round R: 'w' its half free, 'b' staged and synchronised, 'i' its stores issued).
  TESSEL_SM90_TRACED(sm90_trace::rec* tr = nullptr; int unit = 0;)
  template <int I, class U, class Tile, class TD>
  TESSEL_DEVICE void store(U& u, const gmatrix<TD>& c, const Tile& t, int row0, int col0, float alpha, float beta,
                           int layer) {
    using P = typename Op::policy;
    static_assert(!PlainStore || (I == 0 && wgmma_accumulator<Tile>::value),
                  "sm90_tma_storer: PlainStore stores one output, a wgmma accumulator");
    if constexpr (I == 0 && wgmma_accumulator<Tile>::value) {
      if (PlainStore || pp.out_tma) {
        using A = wgmma_accumulator<Tile>;
        constexpr int rounds = A::rows * A::n * int(sizeof(TD)) / round_bytes;
        static_assert(rounds >= 1 && rounds * round_bytes == A::rows * A::n * int(sizeof(TD)),
                      "sm90_tma_storer: a warpgroup tile fills whole rounds");
        staged(u, c, t, row0, col0, alpha, beta, pp.out_layered ? layer : 0, std::make_integer_sequence<int, rounds>{});
        return;
      }
    }
    if constexpr (!PlainStore) P::store(u, c, t, row0, col0, alpha, beta);
  }
  template <class U, class Tile, class TD, int... R>
  TESSEL_DEVICE void staged(U& u, const gmatrix<TD>& c, const Tile& t, int row0, int col0, float alpha, float beta,
                            int z, std::integer_sequence<int, R...>) {
    (round<R>(u, c, t, row0, col0, alpha, beta, z), ...);
  }
  template <int R, class U, class Tile, class TD>
  TESSEL_DEVICE void round(U& u, const gmatrix<TD>& c, const Tile& t, int row0, int col0, float alpha, float beta,
                           int z) {
    using P = typename Op::policy;
    using S = typename P::template staging<TD, wgmma_accumulator<Tile>::rows / 64, round_bytes>;
    if (R * S::round_cols >= col_end || (R + 1) * S::round_cols <= col_begin) return;  // outside the window
    const std::uint32_t to = buf + half * round_bytes;
    half ^= 1;
    if (issuer) arch::bulk_wait_read<1>();  // all but the last round's stores have read their half
    TESSEL_SM90_TRACED(tr->at('w', unit, R);)
    arch::named_barrier<128>(barrier);
    if constexpr (PlainStore) P::template stage_epilogue_as<R, round_bytes, true>(u, to, t, c, row0, col0, alpha, beta);
    else P::template stage_epilogue<R, round_bytes>(u, to, t, c, row0, col0, alpha, beta);
    arch::fence_proxy_async();  // this thread's shared writes, for the copy engine
    arch::named_barrier<128>(barrier);
    TESSEL_SM90_TRACED(tr->at('b', unit, R);)
    if (issuer) {
      TESSEL_UNROLL for (int q = 0; q < S::per_round; ++q) {
        const int in_tile = (S::per_round * R + q) * S::panel_cols, col = col0 + in_tile;
        if (in_tile >= col_begin && in_tile < col_end && col < c.cols && row0 < c.rows)
          arch::tma_store_3d(&pp.out_map, col, row0, z, to + S::panel_bytes * q);
      }
      arch::bulk_commit();
    }
    TESSEL_SM90_TRACED(tr->at('i', unit, R);)
  }
};

}  // namespace tessel::cuda
