// tessel/cpu/schedule_packed.hpp — the CPU's Goto-style schedule: a packed operand tile is reused
// by every work unit that needs it, instead of being packed again for each.
//
// packed_schedule<P, Group> runs an op's stage bodies (core/pipeline.hpp) like
// ring_schedule does, with the same interface (params, warps, shape, prepare,
// run, stage_align, loader), but it runs a *group* of up to Group consecutive
// work ids of one layer together, step-major:
//
//   for step k = 0 .. max steps:    for each unit u (serpentine order):
//                                       start(u) if k is its first step
//                                       load(u, k) into the one stage   <- copies that hit are skipped
//                                       compute(u, k); retire<0>(u)
//                                       finish(u) if k is its last step
//
// Every load goes through a loader that remembers, per operand index I, what
// the stage's operand tile holds: the key (I, source pointer, extents,
// strides, row0, col0, layer, destination). A copy whose key equals the one
// the tile already holds is skipped. The op's raster (ops/gemm/kernel.hpp,
// work_at) orders ids so that runs of consecutive ids share the operand that
// depends only on (step, column strip) — for the GEMM the BK × BN B tile — so
// within a group that tile is packed once per step and reused while it is hot
// in L2 by every row block of the strip (GotoBLAS: the packed B panel is
// reused across the A blocks; the micro-kernel is unchanged). Operands that
// change from unit to unit (the GEMM's A tile) are packed for each, as before.
// Nothing here knows what the op computes: reuse falls out of the keys, and a
// group that straddles a strip boundary is only slower, never wrong.
//
// Each unit's arithmetic is exactly the ring's: the same tiles in the same
// step order into its own state, so results are bit-identical to
// ring_schedule. Requirements on the op: work units are independent (true of
// any op that a grid of blocks may run in any order), compute() does not write
// the operand tiles it reads (it "consumes" the stage), and the sources do not
// change during a launch.
//
// Memory (per worker thread, the launcher's arena; independent of M, N, K and
// batch): one stage (Op::stage_bytes), Group resident slots (Op::resident_bytes,
// for ops that keep tiles for a whole unit; none for the GEMM) and Group states
// (Op::state, the accumulators), each rounded up to 64 bytes. The AVX-512 and
// AVX2 GEMM (any input type; tiles are fp32): stage 128×256 + 256×192 floats +
// tails = 327,936 B, state 128×192 floats = 98,304 B, Group 8: 1,114,368 B
// (1088.25 KiB) per worker. The ring used 2 stages = 655,872 B of arena plus
// the 98,304 B state on the worker's stack. The loader's keys live on the
// stack and are forgotten at the end of each group.
//
// Parallelism: a launcher that knows this schedule (simd_policy::launch) runs
// one oneTBB task per worker; each takes claims of the flat work space
// [0, tiles × layers) from one shared counter (claim_end: whole groups, then
// a shrinking tail) and calls run_range() on each claim; run_range() cuts a
// claim into groups at multiples of Group (so that groups line up with the
// op's raster strips) and at layer boundaries. A plain per-block launcher
// (cpu::launch) may also run it: run() is one unit.
//
// ODR: every function is a member of this template on P (the per-Arch policy),
// so the AVX2 and AVX-512 objects never share an out-of-line instantiation.
#pragma once
#include <cstdint>
#include <new>

#include "tessel/core/global_tile.hpp"
#include "tessel/core/pipeline.hpp"
#include "tessel/core/scope.hpp"

namespace tessel::cpu {

template <class P, int Group> struct packed_schedule {
  static_assert(Group >= 1, "packed_schedule: a group holds at least one work unit");
  static constexpr int group = Group;
  static constexpr int stage_align = 128;  // bytes: every stage and operand tile starts so aligned
  static constexpr bool ranged = true;     // a launcher may hand run_range() claims of work ids
  static constexpr int max_operands = 8;   // operand indices I a loader remembers

  // What an operand tile of the stage holds (valid = false: unknown).
  struct copy_key {
    const void* src;
    const void* dst;
    std::int64_t row_stride, col_stride;
    int rows, cols, row0, col0, layer;
    bool valid;
    bool same(const copy_key& o) const {
      return valid && o.valid && src == o.src && dst == o.dst && row_stride == o.row_stride &&
             col_stride == o.col_stride && rows == o.rows && cols == o.cols && row0 == o.row0 && col0 == o.col0 &&
             layer == o.layer;
    }
  };

  // The loader: a block-scope copy through the policy, skipped where the
  // destination tile already holds exactly that source tile.
  template <class Ctx> struct loader {
    Ctx& ctx;
    copy_key* held;  // [max_operands]
    long* packed;    // copies done (statistics for tests; may be null)
    template <int I, class Dst, class Src>
    void copy(Dst dst, const gmatrix<Src>& src, int row0, int col0, int layer) {
      static_assert(I >= 0 && I < max_operands, "packed_schedule: operand index out of range");
      const copy_key key{src.ptr,  dst.data, src.row_stride, src.col_stride, src.rows,
                         src.cols, row0,     col0,           layer,          true};
      if (held[I].same(key)) return;
      held[I].valid = false;  // in case load throws half-way
      P::load(ctx, dst, src, row0, col0);
      held[I] = key;
      if (packed) ++*packed;
    }
  };

  // The epilogue's store: the policy's, by the unit (as ring_schedule's).
  struct storer {
    template <int I, class U, class Tile, class TD>
    void store(U& u, const gmatrix<TD>& dst, const Tile& t, int row0, int col0, float alpha, float beta,
               int /*layer*/) {
      P::store(u, dst, t, row0, col0, alpha, beta);
    }
  };

  template <class Op> using params = typename Op::problem;
  template <class Op> static constexpr int warps = Op::units * Op::unit::warps;

  // Arena layout: [stage | Group resident slots | Group states]; resident
  // slots (an op's shared bytes kept for a whole unit, core/pipeline.hpp) are
  // stage_align-aligned, state slots 64-byte aligned.
  static constexpr int round_up(long bytes, int to) { return int((bytes + to - 1) / to * to); }
  template <class Op> static constexpr int resident = resident_bytes_of<Op>::value;
  template <class Op> static constexpr int stage_offset = 0;
  template <class Op> static constexpr int resident_offset = round_up(Op::stage_bytes, stage_align);
  template <class Op> static constexpr int resident_stride = round_up(resident<Op>, stage_align);
  template <class Op> static constexpr int states_offset = resident_offset<Op> + Group * resident_stride<Op>;
  template <class Op> static constexpr int state_stride = round_up(long(sizeof(typename Op::state)), 64);
  template <class Op> static constexpr int arena_bytes = states_offset<Op> + Group * state_stride<Op>;

  template <class Op> static launch_shape shape(const typename Op::problem& p) {
    static_assert(warps<Op> == 1, "packed_schedule: a CPU block is one thread (one unit of one warp)");
    static_assert(alignof(typename Op::state) <= 64, "packed_schedule: state slots are 64-byte aligned");
    static_assert(Op::stage_bytes % stage_align == 0, "packed_schedule: stage_bytes must be a multiple of stage_align");
    launch_shape s;
    s.grid_x = Op::tiles(p);
    s.grid_z = Op::layers(p);
    s.warps = warps<Op>;
    s.smem_bytes = arena_bytes<Op>;
    return s;
  }
  template <class Op> static const typename Op::problem& prepare(const typename Op::problem& p) { return p; }

  // The end of the next claim of work ids, starting at `next`, for a
  // launcher whose `threads` workers take claims from one shared counter.
  // With one worker, or while at least two groups per worker remain, a claim
  // is the rest of the current group (a whole, aligned group once the counter
  // is aligned): every group runs whole on one worker and gets all its reuse.
  // The tail is claimed in pieces of remaining / threads ids (at least one,
  // never across a group boundary), so that workers finish together even
  // where units cost unequal amounts (the partial tiles of the last row and
  // column strips): a tail piece costs one more copy of a shared tile per
  // step, an unequal finish costs whole work units.
  static long claim_end(long next, long blocks, int threads) {
    const long remaining = blocks - next;
    const long group_end = next - next % Group + Group;
    long len = remaining;
    if (threads > 1 && remaining < 2L * threads * Group) {
      len = (remaining + threads - 1) / threads;
      if (len < 1) len = 1;
    }
    long end = next + len;
    if (end > group_end) end = group_end;
    return end < blocks ? end : blocks;
  }

  // One block of a per-block launcher: work unit (block_x, z) for each z.
  template <class Op, class Ctx> static void run(Ctx& ctx, const typename Op::problem& p) {
    const int layers = Op::layers(p);
    for (int z = ctx.block_z(); z < layers; z += ctx.grid_z())
      run_group<Op>(ctx, p, z, ctx.block_x(), ctx.block_x() + 1, nullptr);
  }

  // Work ids [first, last) of the flat space id = layer · tiles + tile, in groups.
  template <class Op, class Ctx>
  static void run_range(Ctx& ctx, const typename Op::problem& p, long first, long last, long* packed = nullptr) {
    const long tiles = Op::tiles(p);
    if (tiles <= 0) return;
    for (long id = first; id < last;) {
      const int z = int(id / tiles);
      const int x0 = int(id - z * tiles);
      long end = (x0 / Group + 1) * long(Group);  // next group boundary of this layer
      if (end > tiles) end = tiles;
      if (end - x0 > last - id) end = x0 + (last - id);
      run_group<Op>(ctx, p, z, x0, int(end), packed);
      id += end - x0;
    }
  }

  // Work units x0 .. x1 − 1 (at most Group) of layer z, step-major through one stage.
  template <class Op, class Ctx>
  static void run_group(Ctx& ctx, const typename Op::problem& p, int z, int x0, int x1, long* packed) {
    using state = typename Op::state;
    using work = typename Op::work;
    const int n = x1 - x0;
    auto u = [&] {
      if constexpr (Op::unit::warps == 1) return Ctx(ctx);
      else return unit_context<Ctx, typename Op::unit, P::lanes>(ctx, ctx.warp() / Op::unit::warps);
    }();
    char* smem = ctx.smem();
    const auto stg = Op::stage_at(smem + stage_offset<Op>);
    copy_key held[max_operands] = {};  // nothing held (valid = false)
    loader<Ctx> ld{ctx, held, packed};
    storer out;

    // A unit's state is started just before its first step and finished right
    // after its last, while it is hot in cache; in between it waits in the arena.
    work w[Group];
    int steps[Group];
    state* st[Group] = {};
    auto slot = [&](int i) { return smem + states_offset<Op> + i * state_stride<Op>; };
    // Start unit i (as ring_schedule does: its resident tiles, if any, are
    // filled together with its first step's copies).
    auto start = [&](int i) {
      st[i] = new (slot(i)) state;
      if constexpr (resident<Op> > 0) {
        char* res = smem + resident_offset<Op> + i * resident_stride<Op>;
        Op::start(u, *st[i], p, w[i], res);
        Op::load_resident(ld, res, p, w[i]);
      } else {
        Op::start(u, *st[i], p, w[i]);
      }
    };
    int kmax = 0;
    for (int i = 0; i < n; ++i) {
      w[i] = Op::work_at(p, x0 + i, z);
      steps[i] = Op::steps(p, w[i]);
      if (steps[i] > kmax) kmax = steps[i];
      if (steps[i] <= 0) {  // no steps: start and finish at once
        start(i);
        Op::finish(u, out, *st[i], p, w[i]);
        st[i]->~state();
      }
    }
    for (int k = 0; k < kmax; ++k)
      for (int j = 0; j < n; ++j) {
        const int i = k % 2 == 0 ? j : n - 1 - j;  // serpentine: the last unit of a step is the first of the next
        if (k >= steps[i]) continue;
        if (k == 0) start(i);
        Op::load(ld, stg, p, w[i], k);
        P::commit();
        P::template wait<0>();
        ctx.sync();
        describe_step<Op>(u, *st[i], stg, p, w[i], k);
        Op::compute(u, *st[i], stg, p, w[i], k);
        Op::template retire<0>(u, *st[i]);
        ctx.sync();  // the stage is free for the next load
        if (k == steps[i] - 1) {
          Op::finish(u, out, *st[i], p, w[i]);
          st[i]->~state();
        }
      }
  }
};

}  // namespace tessel::cpu
