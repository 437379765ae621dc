// tessel/cuda/sm90_unit_walk.hpp — which work units a block of the sm90 TMA schedule runs, and in what order.
//
// A block (of a single-block grid or a cluster pair) of sm90_tma_schedule
// (schedule_sm90.hpp) calls walk() once and next() until it says false; each
// call yields one unit (the op's work, whether to store it, whether its paired
// operand is multicast) and the piece of its steps to run:
//   Cluster 1, not Split: units b, b + grid, ... of the op's order (block b of
//     `grid`), whole; an op with uneven_units (core/pipeline.hpp) gets its
//     units dealt in rounds of `grid`, alternately forwards and backwards
//     (dealt_unit).
//   Cluster 2: pair i takes units 2i and 2i + 1 (rank 0 and 1), then pair
//     i + pairs, ...; an odd unit count leaves the last pair's second block a
//     copy of the first's unit, not stored.
//   Split: the pieces core/split_plan.hpp's plan gives this block.
// The producer, the consumers and a self-loading thread each walk the same
// sequence (the schedule keeps them in step by the ring's barriers).
#pragma once
#include "tessel/core/config.hpp"
#include "tessel/core/pipeline.hpp"
#include "tessel/core/split_plan.hpp"

namespace tessel::cuda {

template <int Cluster, bool Split> struct sm90_unit_walk {
  // One work unit of this block: the op's unit of pair `pair` (units pair ·
  // Cluster + rank; `tile`, `layer`: unit pair · Cluster as its tile and
  // layer); a cluster pair's phantom second unit is a copy of the first, not
  // stored; `multicast`: the paired operand is shared with the partner's unit.
  template <class Op> struct unit {
    typename Op::work w;
    bool store, multicast;
  };
  template <class Op>
  TESSEL_DEVICE static unit<Op> unit_at(const typename Op::problem& p, long long pair, int tile, int layer, int rank,
                                        long long work, int tiles) {
    if constexpr (Cluster == 1) {
      return {Op::work_at(p, tile, layer), true, false};
    } else {
      const long long first = pair * Cluster;
      const bool wraps = tile + 1 == tiles, has_second = first + 1 < work;
      const auto w0 = Op::work_at(p, tile, layer);
      const auto w1 = has_second ? Op::work_at(p, wraps ? 0 : tile + 1, wraps ? layer + 1 : layer) : w0;
      return {rank == 0 ? w0 : w1, first + rank < work, Op::paired(w0, w1)};
    }
  }

  // This block's work in order, piece by piece (next() until false): its
  // units whole (steps 0 .. steps − 1), or, with Split, the plan's pieces.
  // Units go as (tile, layer), divided out of the unit index once and then
  // stepped by the stride's (tiles, layers): no 64-bit division per unit.
  // An op with uneven_units (core/pipeline.hpp) on single blocks: rounds dealt
  // alternately forwards and backwards (dealt_unit), a division per unit.
  template <class Op> static constexpr bool deals_rounds = uneven_units_of<Op>::value && Cluster == 1 && !Split;
  template <class Op> struct walker {
    const typename Op::problem& p;
    split_plan sp;
    split_plan::cursor c;
    long long i, stride, work;
    int rank, tiles;
    int tile, layer, step_tiles, step_layers;
    long long round = 0;  // deals_rounds: this block's units so far (i stays the block's index)
    TESSEL_DEVICE bool next(unit<Op>& un, split_piece& pc) {
      if constexpr (Split) {
        if (!sp.next(c, pc)) return false;
        un = unit<Op>{Op::work_at(p, int(pc.unit % tiles), int(pc.unit / tiles)), true, false};
      } else if constexpr (deals_rounds<Op>) {
        const long long n = dealt_unit(round++, i, stride);
        if (n >= work) return false;
        un = unit<Op>{Op::work_at(p, int(n % tiles), int(n / tiles)), true, false};
        pc = split_piece{n, 0, Op::steps(p, un.w), split_piece::whole, 0};
      } else {
        if (i >= (work + Cluster - 1) / Cluster) return false;
        un = unit_at<Op>(p, i, tile, layer, rank, work, tiles);
        pc = split_piece{i, 0, Op::steps(p, un.w), split_piece::whole, 0};
        i += stride;
        tile += step_tiles;
        layer += step_layers;
        if (tile >= tiles) tile -= tiles, ++layer;
      }
      return true;
    }
  };
  template <class Op>
  TESSEL_DEVICE static walker<Op> walk(const typename Op::problem& p, const split_plan& sp, int rank, long long work,
                                       int tiles, long long first_pair, long long pair_stride) {
    const long long first = first_pair * Cluster, step = pair_stride * Cluster;
    return walker<Op>{p,
                      sp,
                      sp.first(int(first_pair)),
                      first_pair,
                      pair_stride,
                      work,
                      rank,
                      tiles,
                      int(first % tiles),
                      int(first / tiles),
                      int(step % tiles),
                      int(step / tiles)};
  }
};

}  // namespace tessel::cuda
