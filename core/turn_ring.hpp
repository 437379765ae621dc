// tessel/core/turn_ring.hpp — a block's consumer units taking turns at their
// MMAs, in a ring (an attention config's take_turns: FlashAttention-3's
// ping-pong), on the policy's turn_wait<Units> / turn_pass<Units>
// (core/tile_ops.hpp).
//
// Contract for the op: each unit brackets each of its blocks of MMAs in a
// work unit, blocks 0 .. B − 1, with begin(u, j) before block j and end(u)
// after it, and calls end_of_work(u, B) once its part of the work unit is
// done (after its epilogue). Every unit of the block sees the same B for the
// same work unit (attention: B = steps + 1, or 0 for a unit without steps).
// Then the blocks run in turn, unit 0, 1, .., Units − 1, then block j + 1
// of unit 0, across work units too:
//
//   unit 0:      [0] pass | wait [1] pass | .. | wait [B−1] pass | wait (end_of_work)
//   unit i > 0:  wait [0] pass | wait [1] pass | .. | wait [B−1] pass
//
// Unit 0 does not wait before block 0 (in the block's first work unit
// nobody would pass it the turn); it waits at the end of each work unit
// instead, for the last unit's pass after block B − 1. So per barrier a work
// unit's waits and passes match, and a unit passes again only after it has
// waited again. That is what an arrival-counting barrier (sm90's named
// barriers) needs: two passes of one unit before the next unit's wait would
// complete the barrier without that unit, which then runs out of turn and the
// ring's counts go astray.
// tests/turn_ring_test.cpp runs the ring on emulated arrival-counting
// barriers with units that race.
#pragma once
#include "tessel/core/config.hpp"

namespace tessel {

template <class P, int Units> struct turn_ring {
  static_assert(Units >= 2, "turn_ring: two or more units");
  // Before block j: the turn from the unit before (unit 0's for block 0 came at end_of_work).
  template <class U> TESSEL_HOST_DEVICE static void begin(U& u, int block) {
    if (block > 0 || u.unit_index() != 0) P::template turn_wait<Units>(u);
  }
  // After a block: the turn to the next unit.
  template <class U> TESSEL_HOST_DEVICE static void end(U& u) { P::template turn_pass<Units>(u); }
  // After the unit's part of a work unit of `blocks` blocks: unit 0 takes the
  // last unit's pass after the last block.
  template <class U> TESSEL_HOST_DEVICE static void end_of_work(U& u, int blocks) {
    if (blocks > 0 && u.unit_index() == 0) P::template turn_wait<Units>(u);
  }
};

}  // namespace tessel
