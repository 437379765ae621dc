// tessel/cuda/sm90_partials.hpp — a split unit's partial accumulators, from the blocks that contribute
// to the block that finishes (schedule_sm90.hpp, Split).
//
// A block's slot in the launch's workspace is [row q][consumer thread t] of 16
// bytes: values 4q .. 4q + 3 of thread t's partial tile (its fragments in
// order), so that row q — every consumer thread's chunk q, Consumers · 128 ·
// 16 bytes — is contiguous.
//
//   contributor's consumers: save() (st.global.cg of every chunk); the
//       schedule then synchronises them and release-stores the flag.
//   finisher, after retire<0> of its piece's last step: one consumer thread
//       acquires the contributors' flags; after a barrier each consumer thread
//       adds its chunks of each slot from global memory, add_global() — 8
//       loads of 16 bytes in flight per thread — its own partial first, then
//       each contributor's in block order.
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

  // A contributing consumer thread's partial to its block's slot.
  TESSEL_DEVICE static void save(const Tile& t, float* slot, int thread) {
    TESSEL_UNROLL for (int q = 0; q < chunks; ++q) {
      const float* f = chunk(t, q);
      arch::store_l2(slot + 4 * thread + 4 * q * threads, f[0], f[1], f[2], f[3]);
    }
  }

  // A finishing consumer thread's chunks of one contributor's slot, added from
  // global memory: a batch of loads at immediate offsets from one pointer first.
  static constexpr int batch = 8;
  static_assert(chunks % batch == 0, "sm90_partials: a partial is whole batches of chunks");
  TESSEL_DEVICE static void add_global(Tile& t, const float* slot, int thread) {
    TESSEL_UNROLL for (int q0 = 0; q0 < chunks; q0 += batch) {
      float x[batch][4];
      TESSEL_UNROLL for (int b = 0; b < batch; ++b)
        arch::load_l2(slot + 4 * thread + 4 * (q0 + b) * threads, x[b][0], x[b][1], x[b][2], x[b][3]);
      TESSEL_UNROLL for (int b = 0; b < batch; ++b) {
        float* f = chunk(t, q0 + b);
        f[0] += x[b][0], f[1] += x[b][1], f[2] += x[b][2], f[3] += x[b][3];
      }
    }
  }
};

}  // namespace tessel::cuda
