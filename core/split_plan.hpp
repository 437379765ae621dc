// tessel/core/split_plan.hpp — splitting a persistent grid's work units by steps where blocks would idle.
//
// A persistent grid of G blocks runs U work units of S steps each (every unit
// the same S). Where U < G, G − U blocks would idle for the whole run. The
// plan then splits each unit into p near-equal ranges of steps (split-K),
// p ≤ G / U, run by p consecutive blocks at once, so that the blocks working
// on the same step index read the same operand slabs at the same time:
//
//   block b -> unit b / p, steps [S·(b % p) / p, S·(b % p + 1) / p)
//
// (in general: contiguous ranges of `total / blocks` steps over the units in
// order, which is the same thing when blocks = U · p; make() always makes
// blocks = U · p, so a split block runs exactly one piece, and unit j's
// pieces run on blocks j·p .. j·p + p − 1: unit_blocks()). A unit's pieces
// add up: the piece from step 0 ("finishes") and the pieces after it
// ("contribute") leave partial states that the schedule brings together —
// the finishing block adding what the others left in their slots of a
// global workspace and running the epilogue, or each of the unit's blocks
// adding and storing a share of the tile (sm90's reduce-scatter).
//
// p is chosen by a cost model in steps — a range of S / p plus the fixups of
// the busiest block (fixup_steps: one partial written and read; a finishing
// block reads p − 1) — and only where that plus fixed_steps (what splitting
// costs at all: zeroing the flags, more blocks filling their rings) beats S.
//
// Measured and not done (bench/notes/cuda_gemm.md): where U ≥ G, sharing the
// last partial wave plus one full wave out in contiguous ranges (stream-K)
// takes the wave quantisation away in the model but puts every block at a
// different step index of its unit, so concurrent blocks no longer share
// operand slabs in L2: on the H100 it ran 0.59-0.85x of the unsplit kernel.
// The last partial wave alone, shared out in a second launch, lost too
// (−1 to −33%): the launch boundary by itself cost what the tail does.
#pragma once
#include <cstdint>

#include "tessel/core/config.hpp"

namespace tessel {

// One piece of a block's work: steps k0 .. k1 − 1 of unit `unit`. A finishing
// piece adds the partials of blocks `block + 1 .. contributors_end − 1`.
struct split_piece {
  enum role_t { whole, contributes, finishes };
  long long unit;
  int k0, k1;
  role_t role;
  int contributors_end;
};

struct split_plan {
  long long units = 0;  // work units in all
  long long whole = 0;  // units 0 .. whole − 1 run whole, in waves
  long long total = 0;  // steps of units whole .. units − 1, shared out
  int grid = 0;         // blocks of the persistent grid
  int blocks = 0;       // blocks that take a range of the shared steps (the first `blocks`)
  int steps = 0;        // steps per unit

  // Every unit whole: the plan of a schedule that does not split.
  TESSEL_HOST_DEVICE static split_plan unsplit(long long units, int steps, int grid) {
    split_plan sp;
    sp.units = sp.whole = units;
    sp.steps = steps;
    sp.grid = grid;
    return sp;
  }

  TESSEL_HOST_DEVICE static split_plan make(long long units, int steps, int grid, int fixup_steps,
                                            int fixed_steps = 0) {
    split_plan sp = unsplit(units, steps, grid);
    if (units < 1 || steps < 2 || units * 2 > grid) return sp;
    const long long most = grid / units < steps ? grid / units : steps;
    long long best = 1, best_cost = steps - fixed_steps;
    for (long long p = 2; p <= most && p <= max_pieces; ++p) {
      const long long cost = (steps + p - 1) / p + fixup_steps * (p - 1 > 1 ? p - 1 : 1) / 2;
      if (cost < best_cost) best = p, best_cost = cost;
    }
    if (best == 1) return sp;
    sp.whole = 0;
    sp.total = units * steps;
    sp.blocks = int(units * best);
    return sp;
  }
  static constexpr int max_pieces = 16;

  // First step (counted over the shared units) of block b's range; begin(blocks) = total.
  TESSEL_HOST_DEVICE long long begin(int b) const { return total * b / blocks; }
  TESSEL_HOST_DEVICE bool splits() const { return blocks > 0; }
  // Where make() splits: the blocks per split unit (p), so that block b runs a
  // piece of the unit whose pieces run on blocks b / p · p .. b / p · p + p − 1.
  TESSEL_HOST_DEVICE int unit_blocks() const { return splits() ? int(blocks / (units - whole)) : 1; }

  // Walking block b's pieces in the order it runs them: c = first(b), then
  // next(c, piece) until it returns false (one call site for the loop body,
  // so that device code keeps a unit's state in registers).
  struct cursor {
    long long unit, g, end;
    int block;
  };
  TESSEL_HOST_DEVICE cursor first(int b) const {
    return {b, b < blocks ? begin(b) : 0, b < blocks ? begin(b + 1) : 0, b};
  }
  TESSEL_HOST_DEVICE bool next(cursor& c, split_piece& piece) const {
    if (c.unit < whole) {
      piece = split_piece{c.unit, 0, steps, split_piece::whole, 0};
      c.unit += grid;
      return true;
    }
    if (c.g >= c.end) return false;
    const long long j = c.g / steps;
    const int k0 = int(c.g - j * steps);
    const int k1 = c.end - c.g < steps - k0 ? k0 + int(c.end - c.g) : steps;
    piece = split_piece{whole + j, k0, k1, split_piece::whole, 0};
    if (k0 > 0) {
      piece.role = split_piece::contributes;
    } else if (k1 < steps) {
      piece.role = split_piece::finishes;
      int b = c.block + 1;
      while (b < blocks && begin(b) < (j + 1) * steps) ++b;
      piece.contributors_end = b;
    }
    c.g += k1 - k0;
    return true;
  }
};

}  // namespace tessel
