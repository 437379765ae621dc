// tessel/cuda/sm90_partials.hpp — a split unit's partial accumulators, passed between the blocks that run its
// pieces (schedule_sm90.hpp, Split).
//
// A block's slot in the launch's workspace is [row q][consumer thread t] of 16
// bytes: values 4q .. 4q + 3 of thread t's partial tile (its fragments in
// order), so that row q — every consumer thread's chunk q, Consumers · 128 ·
// 16 bytes — is contiguous. A chunk's 4 values lie in one 8-column group of
// the tile, the same for every lane (checked below), so a window of the tile's
// columns [w0, w1) (multiples of 8) is a set of whole rows of the slot.
//
//   a block: save() (st.global.cg) of its chunks outside the window it
//       keeps; the schedule then synchronises the consumers and
//       release-stores the block's flag.
//   the block that adds a window, after retire<0> of its piece's last step:
//       one consumer thread acquires the other blocks' flags; after a barrier
//       each consumer thread adds its chunks inside the window of each other
//       slot from global memory, add_global() — 8 loads of 16 bytes in flight
//       per thread — in block order, to its own partial in registers.
//   Copying the slots through the finisher's ring instead (one thread's
//   cp.async.bulk of 32 KiB a stage, the adds from shared memory) was built and
//   timed on an H200 (2026-11-29): 1.6-3.3% slower on 11 of 12 few-row rows
//   (16-512 × 4096², 256 × 8192², 1024 × 1024 × 4096; bf16 and fp32 C), so it
//   was taken out (bench/notes/cuda_gemm.md, session 35).
#pragma once
#include <cstdint>

#include "tessel/core/config.hpp"
#include "tessel/cuda/arch/flag.hpp"

namespace tessel::cuda {

// Tile: the op's partial tile (fp32, chunks of 4 values).
template <class Tile, int Consumers> struct sm90_partials {
  static constexpr int threads = Consumers * 128;
  static constexpr int chunks = Tile::tiles_r * Tile::tiles_c * Tile::values / 4;  // rows of a slot
  static constexpr int floats = chunks * threads * 4;                              // a slot
  static_assert(Tile::values % 4 == 0, "sm90_partials: a partial tile goes in whole chunks of 4 values");

  template <class T> TESSEL_DEVICE static auto* chunk(T& t, int q) {  // values 4q .. 4q + 3 of frag, in order
    return &t.frag[q * 4 / Tile::values / Tile::tiles_c][q * 4 / Tile::values % Tile::tiles_c][q * 4 % Tile::values];
  }

  // The tile column of value x of a lane's fragments in order (chunk q: values 4q .. 4q + 3).
  TESSEL_HOST_DEVICE static constexpr int column(int lane, int x) {
    return Tile::where(lane, x / Tile::values / Tile::tiles_c, x / Tile::values % Tile::tiles_c, x % Tile::values).col;
  }
  // The 8-column group of chunk q's values (the same for every lane and value of the chunk).
  TESSEL_HOST_DEVICE static constexpr int group(int q) { return column(0, 4 * q) / 8; }
  TESSEL_HOST_DEVICE static constexpr bool chunks_in_groups() {
    for (int lane = 0; lane < Tile::atom::lanes; ++lane)
      for (int q = 0; q < chunks; ++q)
        for (int v = 0; v < 4; ++v)
          if (column(lane, 4 * q + v) / 8 != group(q)) return false;
    return true;
  }
  static_assert(chunks_in_groups(), "sm90_partials: a chunk's 4 values lie in one 8-column group for every lane");
  TESSEL_HOST_DEVICE static constexpr bool spans_in_order() {  // chunks 4s .. 4s + 3: one 32-column span
    for (int q = 0; q < chunks; ++q)
      if (group(q) / 4 != group(q - q % 4) / 4) return false;
    return true;
  }
  static_assert(spans_in_order(), "sm90_partials: chunks 4s .. 4s + 3 lie in one 32-column span");
  // Whether chunk q lies in the window [w0, w1) of columns, multiples of 32:
  // one test per 32 columns (chunks in the same 32 share it, so a batch
  // needs 2 predicates, not 8).
  TESSEL_DEVICE static bool inside(int q, int w0, int w1) {
    constexpr int span = 32;
    const int c = group(q) * 8 / span * span;
    return c >= w0 && c < w1;
  }

  // Whether a lane holds a value in the tile's first `rows` rows (the others
  // are never stored: the op's partial_rows; a lane with none skips its
  // chunks, in save() and add_global(), as one branch).
  TESSEL_DEVICE static bool live(int lane, int rows) {
    int first = Tile::rows;
    TESSEL_UNROLL for (int i = 0; i < Tile::tiles_r; ++i)
      TESSEL_UNROLL for (int v = 0; v < Tile::values; ++v) {
        const int r = Tile::where(lane, i, 0, v).row;
        first = r < first ? r : first;
      }
    return first < rows;
  }

  // A consumer thread's partial to its block's slot, but for the chunks in columns [w0, w1).
  TESSEL_DEVICE static void save(const Tile& t, float* slot, int thread, int w0, int w1) {
    TESSEL_UNROLL for (int q = 0; q < chunks; ++q) {
      if (inside(q, w0, w1)) continue;
      const float* f = chunk(t, q);
      arch::store_l2(slot + 4 * thread + 4 * q * threads, f[0], f[1], f[2], f[3]);
    }
  }

  // A consumer thread's chunks in columns [w0, w1) of another block's slot,
  // added from global memory: the loads of a batch (8 chunks, or the 4 of
  // one 32-column span where only that is inside) at immediate offsets from
  // one pointer first, then their adds. Which spans are inside is one uniform
  // branch per batch (per-chunk predicates made ptxas spill).
  static constexpr int batch = 8, span_chunks = 4;
  static_assert(chunks % batch == 0, "sm90_partials: a partial is whole batches of chunks");
  template <int N> TESSEL_DEVICE static void add_chunks(Tile& t, const float* slot, int thread, int q0) {
    float x[N][4];
    TESSEL_UNROLL for (int b = 0; b < N; ++b)
      arch::load_l2(slot + 4 * thread + 4 * (q0 + b) * threads, x[b][0], x[b][1], x[b][2], x[b][3]);
    TESSEL_UNROLL for (int b = 0; b < N; ++b) {
      float* f = chunk(t, q0 + b);
      f[0] += x[b][0], f[1] += x[b][1], f[2] += x[b][2], f[3] += x[b][3];
    }
  }
  TESSEL_DEVICE static void add_global(Tile& t, const float* slot, int thread, int w0, int w1) {
    TESSEL_UNROLL for (int q0 = 0; q0 < chunks; q0 += batch) {
      const bool first = inside(q0, w0, w1), second = inside(q0 + span_chunks, w0, w1);
      if (first && second) add_chunks<batch>(t, slot, thread, q0);
      else if (first) add_chunks<span_chunks>(t, slot, thread, q0);
      else if (second) add_chunks<span_chunks>(t, slot, thread, q0 + span_chunks);
    }
  }
};

}  // namespace tessel::cuda
