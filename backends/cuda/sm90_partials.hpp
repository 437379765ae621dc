// tessel/cuda/sm90_partials.hpp — a split unit's partial accumulators, from the blocks that contribute
// to the block that finishes (schedule_sm90.hpp, Split).
//
// A block's slot in the launch's workspace is [row q][consumer thread t] of 16
// bytes: values 4q .. 4q + 3 of thread t's partial tile (its fragments in
// order), so that row q — every consumer thread's chunk q, Consumers · 128 ·
// 16 bytes — is contiguous.
//
//   contributor's consumers: save() (st.global.cg of every chunk; with
//       RingPartials a proxy fence); the schedule then synchronises them and
//       release-stores the flag.
//   finisher, after retire<0> of its piece's last step, in one of two ways
//   (the schedule's RingPartials):
//     false (the library's): one consumer thread acquires the contributors'
//       flags; after a barrier each consumer thread adds its chunks of each
//       slot from global memory, add_global() — 8 loads of 16 bytes in flight
//       per thread. On the H100 a 128 KiB partial took ~4-5k cycles that way,
//       most of a 128 × 4096 × 4096 call's fixups (bench/notes/cuda_gemm.md,
//       session 33).
//     true (compiled, not yet run on a GPU: a candidate to measure): the
//       block's producer is done (a finishing piece is its block's last,
//       core/split_plan.hpp), so one consumer thread runs a loader — per
//       contributor in block order, acquire its flag, fence the async proxy,
//       then bulk-copy its slot into the ring, `rows` rows a stage, on the
//       empty / full protocol of the mainloop's steps, Stages copies ahead —
//       and the consumers add() each copy from shared memory (ld.shared.v4:
//       thread t reads bytes 16t .. 16t + 15 of a row, no bank conflicts),
//       release the stage, and the loader's thread copies the next. A stage's
//       copy keeps 32 KiB in flight in one instruction, the ring several.
//   Either way the sums are the same, in the same order: the finisher's own
//   partial, then each contributor's in block order.
#pragma once
#include <cstdint>

#include "tessel/core/config.hpp"
#include "tessel/cuda/arch/flag.hpp"
#include "tessel/cuda/arch/mbarrier.hpp"
#include "tessel/cuda/arch/tma.hpp"

namespace tessel::cuda {

// Tile: the op's partial tile (fp32, chunks of 4 values); StageBytes: the ring's stage size.
template <class Tile, int Consumers, int Stages, int StageBytes> struct sm90_partials {
  static constexpr int threads = Consumers * 128, row_bytes = threads * 16;
  static constexpr int chunks = Tile::tiles_r * Tile::tiles_c * Tile::values / 4;  // rows of a slot
  static constexpr int floats = chunks * threads * 4;                              // a slot
  // Rows per copy: halve all of them until a stage holds them.
  static constexpr int rows_fitting(int r) {
    return r * row_bytes <= StageBytes || r % 2 != 0 ? r : rows_fitting(r / 2);
  }
  static constexpr int rows = rows_fitting(chunks), copies = chunks / rows;
  static constexpr std::uint32_t copy_bytes = std::uint32_t(rows) * row_bytes;
  static constexpr int batch = rows < 8 ? rows : 8;  // shared loads in flight before their adds
  static_assert(Tile::values % 4 == 0 && chunks % rows == 0 && rows % batch == 0 && copy_bytes <= StageBytes,
                "sm90_partials: a partial tile goes in whole chunks of 4 values, whole rows to a stage");

  template <class T> TESSEL_DEVICE static auto* chunk(T& t, int q) {  // values 4q .. 4q + 3 of frag, in order
    return &t.frag[q * 4 / Tile::values / Tile::tiles_c][q * 4 / Tile::values % Tile::tiles_c][q * 4 % Tile::values];
  }

  // A contributing consumer thread's partial to its block's slot (Ring: the
  // finisher's copies read it through the async proxy, after a proxy fence).
  template <bool Ring> TESSEL_DEVICE static void save(const Tile& t, float* slot, int thread) {
    TESSEL_UNROLL for (int q = 0; q < chunks; ++q) {
      const float* f = chunk(t, q);
      arch::store_l2(slot + 4 * thread + 4 * q * threads, f[0], f[1], f[2], f[3]);
    }
    if constexpr (Ring) arch::fence_proxy_async_global();
  }

  // Adds N chunks q0 .. q0 + N − 1, fetched first (fetch(b, x): chunk q0 + b
  // into x), so that their loads are in flight together.
  template <int N, class Fetch> TESSEL_DEVICE static void add_batch(Tile& t, int q0, Fetch fetch) {
    float x[N][4];
    TESSEL_UNROLL for (int b = 0; b < N; ++b) fetch(b, x[b]);
    TESSEL_UNROLL for (int b = 0; b < N; ++b) {
      float* f = chunk(t, q0 + b);
      f[0] += x[b][0], f[1] += x[b][1], f[2] += x[b][2], f[3] += x[b][3];
    }
  }

  // A finishing consumer thread's chunks of one contributor's slot, added from
  // global memory: a batch of loads at immediate offsets from one pointer first.
  static constexpr int global_batch = 8;
  static_assert(chunks % global_batch == 0, "sm90_partials: a partial is whole batches of chunks");
  TESSEL_DEVICE static void add_global(Tile& t, const float* slot, int thread) {
    TESSEL_UNROLL for (int q0 = 0; q0 < chunks; q0 += global_batch)
      add_batch<global_batch>(t, q0, [&](int b, float (&x)[4]) {
        arch::load_l2(slot + 4 * thread + 4 * (q0 + b) * threads, x[0], x[1], x[2], x[3]);
      });
  }

  // RingPartials: the finisher's copies, issued by one of its consumer
  // threads: contributors c .. end − 1 in order, each slot in `copies` stage loads, on the ring from
  // (s, phase), where the piece's steps left it. The block's producer is done
  // by then: a finishing piece is its block's last (core/split_plan.hpp).
  // next(): one stage's copy, if any is left — once the slot's flag is set
  // and every consumer warp has released the stage.
  template <class Full, class Empty, class Addr> struct loader {
    const float* slots;
    const unsigned* flags;
    Full full;
    Empty empty;
    Addr addr;  // addr(s): stage s's shared-window address
    int c, end, s, phase, j = 0;
    TESSEL_DEVICE void next() {
      if (c >= end) return;
      if (j == 0) {
        arch::flag_wait(flags + c);
        arch::fence_proxy_async_global();
      }
      arch::mbarrier_wait(empty(s), phase ^ 1);
      arch::mbarrier_arrive_expect_tx(full(s), copy_bytes);
      arch::bulk_load(addr(s), slots + ((long long)c * chunks + j * rows) * threads * 4, copy_bytes, full(s));
      if (++s == Stages) s = 0, phase ^= 1;
      if (++j == copies) j = 0, ++c;
    }
  };

  // RingPartials: the finisher's consumers: one contributor's partial, as the
  // loader brings it into the ring at (s, phase), added to `t`; release(s) frees each stage
  // (and has the loader's thread copy the next).
  template <class Full, class Release, class Addr>
  TESSEL_DEVICE static void add(Tile& t, int thread, Full full, Release release, Addr addr, int& s, int& phase) {
    TESSEL_UNROLL for (int j = 0; j < copies; ++j) {
      arch::mbarrier_wait(full(s), phase);
      const std::uint32_t base = addr(s) + 16 * thread;
      TESSEL_UNROLL for (int r0 = 0; r0 < rows; r0 += batch)
        add_batch<batch>(t, j * rows + r0, [&](int b, float (&x)[4]) {
          arch::ld_shared(base + (r0 + b) * row_bytes, x[0], x[1], x[2], x[3]);
        });
      __syncwarp();  // every lane's reads of the stage before its warp's release
      release(s);
      if (++s == Stages) s = 0, phase ^= 1;
    }
  }
};

}  // namespace tessel::cuda
