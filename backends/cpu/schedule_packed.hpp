// tessel/cpu/schedule_packed.hpp — the CPU's Goto-style schedule: a packed operand tile is reused
// by every work unit that needs it, instead of being packed again for each.
//
// packed_schedule<P, Group> runs an op's stage bodies (core/pipeline.hpp)
// like ring_schedule does, with the same interface (params, warps, shape,
// prepare, run, stage_align, loader), but it runs a *group* of up to Group
// consecutive work ids of one layer together, step-major:
//
//   for step k = 0 .. max steps:    for each unit u (serpentine order):
//                                       start(u) if k is its first step
//                                       pick a slot per operand     <- the one holding u's tile, if any
//                                       load(u, k) into those slots <- copies that hit are skipped
//                                       compute(u, k); retire<0>(u)
//                                       finish(u) if k is its last step
//
// Each operand I that load() copies has a pool of slots of its own, as many
// as the op's run_tiles<I> (default 1: core/pipeline.hpp); a unit's stage is assembled from one slot per operand (Op::stage_of). Before a
// unit's load the schedule asks the op which source tile each copy would read
// (load() run through a probe loader that records the copies' keys: operand
// I, source pointer, extents, strides, row0, col0, layer) and takes, per
// operand, the slot that already holds that tile, else the least recently
// used one; the real copy into a slot that holds its tile is skipped. The
// op's raster (ops/gemm/kernel.hpp, work_at) orders ids in runs of R block
// rows × S block columns, row by row (run_end says where a run ends; groups
// are cut there), so within a step each A tile is packed once for the S units
// of its row and each of the S B tiles once for the R rows (GotoBLAS: a packed
// B panel of S · BN columns is reused by every A block, and each A block is
// packed once per panel; the micro-kernel is unchanged): run_tiles is 1 for A
// and S for B, so the S B tiles of a step stay in their slots for all R rows.
// Attention (ops/attention/kernel.hpp): a run is the query tiles of the heads
// sharing one K/V head, so a group's units read the same Kᵀ and V tiles at
// each step (one slot each: copied once per group and step), each unit its
// own resident Q tile.
// Nothing here knows
// what the op computes: reuse falls out of the keys, and a group whose units
// share less is only slower, never wrong.
//
// Each unit's arithmetic is exactly the ring's: the same tiles in the same
// step order into its own state, so results are bit-identical to
// ring_schedule. Requirements on the op: work units are independent (true of
// any op that a grid of blocks may run in any order), compute() does not write
// the operand tiles it reads (it "consumes" the stage), the sources do not
// change during a launch, and it names its operands (operand_count,
// operand_tile<I>, resident_operands) and assembles a stage from their tiles
// (stage_of).
//
// Memory (per worker thread, the launcher's arena; independent of M, N, K and
// batch): run_tiles<I> tiles of each stage operand I (operand_tile<I>,
// rounded up to stage_align), Group resident slots (Op::resident_bytes, for ops that keep
// tiles for a whole unit; none for the GEMM) and Group states (Op::state, the
// accumulators), each rounded up to 64 bytes. The AVX2 GEMM (any input type;
// tiles are fp32; runs of 8 × 4 blocks): one A slot of 128×256 + tail floats
// = 131,200 B, four B slots of 256×192 + tail = 196,736 B, 32 states of
// 128×192 floats (+ a flag) = 98,368 B: 4,065,920 B (3.88 MiB) per worker; the
// AVX-512 GEMM (runs of 8 × 1): one slot each and 8 states, 1,114,880 B.
// Attention (groups of 8): 1,393,152 B on AVX-512 fp32 at head_dim 128 (8
// resident Q and P tiles of 96 KiB and states of 66 KiB, one Kᵀ and one V
// tile), 836,096 B at 64; AVX2 1,061,376 / 635,392 B; AMX bf16 625,408 /
// 412,416 B.
// The schedule's slot keys live on the stack and are forgotten at the end of
// each group.
//
// Parallelism: a launcher that knows this schedule (simd_policy::launch) runs
// one oneTBB task per worker and cuts the flat work space [0, tiles × layers)
// into one segment per worker (segment_start: equal shares, moved to group
// ends). Each task takes claims from its own segment's counter (claim_end:
// whole groups, then a shrinking tail), then from the other segments' in
// turn, and calls run_range() on each claim; run_range() cuts a claim into
// groups at the op's run ends (or multiples of Group) and at layer
// boundaries. Workers thus start far apart in the work space, as a oneTBB
// parallel_for over the blocks would place them: with one shared counter the
// workers ran neighbouring groups side by side (the same rows of A and C at
// once), and on the 2-vCPU Zen 4 VM such processes fell, in phases, into a
// mode 1.27x slower at 4096 x 4096 x 256 (bench/notes/cpu_gemm.md, session 49). A plain per-block launcher (cpu::launch) may also run it:
// run() is one unit.
//
// ODR: every function is a member of this template on P (the per-Arch policy),
// so the AVX2 and AVX-512 objects never share an out-of-line instantiation.
#pragma once
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessel/core/global_tile.hpp"
#include "tessel/core/pipeline.hpp"
#include "tessel/core/scope.hpp"

namespace tessel::cpu {

// What a worker holds for the whole of one task of a ranged launch: P::task_scope
// where the policy names one (the AMX policy's tile configuration), else nothing.
template <class P, class = void> struct task_scope_of {
  struct type {};
};
template <class P> struct task_scope_of<P, std::void_t<typename P::task_scope>> {
  using type = typename P::task_scope;
};

template <class P, int Group> struct packed_schedule {
  static_assert(Group >= 1, "packed_schedule: a group holds at least one work unit");
  static constexpr int group = Group;
  static constexpr int max_slots = 16;     // slots of one operand
  static constexpr int stage_align = 128;  // bytes: every operand tile starts so aligned
  static constexpr bool ranged = true;     // a launcher may hand run_range() claims of work ids
  static constexpr int max_operands = 8;   // operand indices I the schedule tracks
  // Constructed by the launcher at the start of each task, destroyed at its end (task_scope_of).
  using task_scope = typename task_scope_of<P>::type;

  // What an operand tile holds (valid = false: unknown). dst is the tile the
  // copy writes (null in a probe's record of what a copy would read).
  struct copy_key {
    const void* src;
    const void* dst;
    std::int64_t row_stride, col_stride;
    int rows, cols, row0, col0, layer;
    bool valid;
    bool same_source(const copy_key& o) const {
      return valid && o.valid && src == o.src && row_stride == o.row_stride && col_stride == o.col_stride &&
             rows == o.rows && cols == o.cols && row0 == o.row0 && col0 == o.col0 && layer == o.layer;
    }
    bool same(const copy_key& o) const { return same_source(o) && dst == o.dst; }
  };
  template <class Src>
  static copy_key key_of(const void* dst, const gmatrix<Src>& src, int row0, int col0, int layer) {
    return {src.ptr, dst, src.row_stride, src.col_stride, src.rows, src.cols, row0, col0, layer, true};
  }

  // The probe: records which source tile each of load()'s copies would read.
  struct probe {
    copy_key* want;  // [max_operands]
    template <int I, class Dst, class Src>
    void copy(Dst, const gmatrix<Src>& src, int row0, int col0, int layer) {
      static_assert(I >= 0 && I < max_operands, "packed_schedule: operand index out of range");
      want[I] = key_of(nullptr, src, row0, col0, layer);
    }
  };

  // The loader: a block-scope copy through the policy into the slot chosen for
  // operand I (its key in held[I]), skipped where that slot holds the tile.
  template <class Ctx> struct loader {
    Ctx& ctx;
    copy_key** held;  // [max_operands]
    long* packed;     // copies done (statistics for tests; may be null)
    template <int I, class Dst, class Src>
    void copy(Dst dst, const gmatrix<Src>& src, int row0, int col0, int layer) {
      static_assert(I >= 0 && I < max_operands, "packed_schedule: operand index out of range");
      const copy_key key = key_of(dst.data, src, row0, col0, layer);
      copy_key& h = *held[I];
      if (h.same(key)) return;
      h.valid = false;  // in case load throws half-way
      P::load(ctx, dst, src, row0, col0);
      h = key;
      if (packed) ++*packed;
    }
  };

  // The resident copies (a unit's own tiles, load_resident): always made.
  template <class Ctx> struct resident_loader {
    Ctx& ctx;
    long* packed;
    template <int I, class Dst, class Src>
    void copy(Dst dst, const gmatrix<Src>& src, int row0, int col0, int /*layer*/) {
      P::load(ctx, dst, src, row0, col0);
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

  // Arena layout: [operand first's slots | ... | operand last's |
  // Group resident slots | Group states]; tiles and resident slots are
  // stage_align-aligned, state slots 64-byte aligned.
  static constexpr int round_up(long bytes, int to) { return int((bytes + to - 1) / to * to); }
  template <class Op> static constexpr int first = resident_operands_of<Op>::value;  // the first stage operand
  template <class Op, int I> static constexpr int tile_bytes() {
    using T = typename Op::template operand_tile<I>;
    return round_up(long(sizeof(typename T::value_type)) * T::size, stage_align);
  }
  // bytes[I]: one tile of operand I; slots[I]: how many; pool[I]: byte offset of its slots
  // (resident operands: none); pool[operand_count]: their end.
  struct pool_table {
    int bytes[max_operands + 1], slots[max_operands + 1], pool[max_operands + 1];
  };
  template <class Op, int... I> static constexpr pool_table pools_of(std::integer_sequence<int, I...>) {
    pool_table t{};
    int at = 0;
    ((t.bytes[I] = I >= first<Op> ? tile_bytes<Op, I>() : 0, t.slots[I] = I >= first<Op> ? run_tiles_of<Op, I>::value : 0,
      t.pool[I] = at, at += t.slots[I] * t.bytes[I]),
     ...);
    t.pool[sizeof...(I)] = at;
    return t;
  }
  template <class Op>
  static constexpr pool_table pools = pools_of<Op>(std::make_integer_sequence<int, Op::operand_count>{});
  template <class Op> static constexpr int max_slots_of() {
    int most = 1;
    for (int i = 0; i < Op::operand_count; ++i) most = pools<Op>.slots[i] > most ? pools<Op>.slots[i] : most;
    return most;
  }
  template <class Op> static constexpr int resident = resident_bytes_of<Op>::value;
  template <class Op> static constexpr int resident_offset = pools<Op>.pool[Op::operand_count];
  template <class Op> static constexpr int resident_stride = round_up(resident<Op>, stage_align);
  template <class Op> static constexpr int states_offset = resident_offset<Op> + Group * resident_stride<Op>;
  template <class Op> static constexpr int state_stride = round_up(long(sizeof(typename Op::state)), 64);
  template <class Op> static constexpr int arena_bytes = states_offset<Op> + Group * state_stride<Op>;

  template <class Op> static launch_shape shape(const typename Op::problem& p) {
    static_assert(warps<Op> == 1, "packed_schedule: a CPU block is one thread (one unit of one warp)");
    static_assert(alignof(typename Op::state) <= 64, "packed_schedule: state slots are 64-byte aligned");
    static_assert(Op::operand_count <= max_operands && first<Op> < Op::operand_count,
                  "packed_schedule: the op names 1 .. max_operands operands, at least one of them loaded per step");
    static_assert(max_slots_of<Op>() <= max_slots, "packed_schedule: an operand's run_tiles exceeds max_slots");
    launch_shape s;
    s.grid_x = Op::tiles(p);
    s.grid_z = Op::layers(p);
    s.warps = warps<Op>;
    s.smem_bytes = arena_bytes<Op>;
    return s;
  }
  template <class Op> static const typename Op::problem& prepare(const typename Op::problem& p) { return p; }

  // The end of the group that starts at tile x of a layer of `tiles`: the
  // op's run end (core/pipeline.hpp, run_end) or the next multiple of Group,
  // at most Group tiles on.
  template <class Op> static long group_end(const typename Op::problem& p, int x, int tiles) {
    long end = (x / Group + 1) * long(Group);
    if constexpr (run_ends_of<Op>::value) end = Op::run_end(p, x);
    if (end > x + long(Group)) end = x + long(Group);
    return end < tiles ? end : tiles;
  }

  // The costs of the work ids of one launch: the op's unit costs
  // (core/pipeline.hpp, unit_cost) where it states them, else 1 an id. With
  // costs, one layer's prefix sums are kept (tiles + 1 longs, built once per
  // launch of more than one worker).
  template <class Op> struct work_costs {
    long tiles = 1, layer = 1, most = 1;  // ids per layer; one layer's cost; the largest unit cost (costs are > 0)
    std::vector<long> prefix;             // prefix[x]: the cost of tiles [0, x) of a layer
    work_costs() = default;
    explicit work_costs(const typename Op::problem& p) : tiles(Op::tiles(p)) {
      if constexpr (unit_costs_of<Op>::value) {
        if (tiles <= 0) return;
        prefix.assign(std::size_t(tiles) + 1, 0);
        for (long x = 0; x < tiles; ++x) {
          const long c = Op::unit_cost(p, int(x));
          most = c > most ? c : most;
          prefix[std::size_t(x) + 1] = prefix[std::size_t(x)] + c;
        }
        layer = prefix[std::size_t(tiles)];
      }
    }
    long before(long id) const {  // the cost of the ids [0, id)
      if (prefix.empty()) return id;
      return id / tiles * layer + prefix[std::size_t(id % tiles)];
    }
    long of(long first, long last) const { return before(last) - before(first); }
  };

  // The end of the next claim of work ids, starting at `next`, of a segment
  // of ids that ends at `last`, for a launcher whose `threads` workers take
  // claims while work of cost `remaining` (work_costs) is unclaimed in the
  // whole launch. With one worker, or while at least two groups of the
  // costliest units per worker remain, a claim is the rest of the current
  // group (a whole group once the counter stands at a group's start): every
  // group runs whole on one worker and gets all its reuse. The tail is
  // claimed in pieces of at most remaining / threads of cost (at least one
  // id, never across a group's end), so that workers finish together where
  // units cost unequal amounts (the partial tiles of the last row and column
  // strips): a tail piece costs more copies of shared tiles, an unequal
  // finish costs whole work units. By cost, not by count: at 1024^3 on two
  // AVX-512 workers the last two groups are a full column strip and one a
  // third as wide, and a count of ids gave the full one whole to whichever
  // worker claimed first (bench/notes/cpu_gemm.md, session 50).
  template <class Op>
  static long claim_end(const typename Op::problem& p, const work_costs<Op>& costs, long next, long last,
                        int threads, long remaining) {
    const long tiles = Op::tiles(p);
    const long layer0 = next - next % tiles;
    long end = layer0 + group_end<Op>(p, int(next - layer0), int(tiles));
    if (end > last) end = last;
    if (threads > 1 && remaining < 2L * threads * Group * costs.most) {
      const long budget = (remaining + threads - 1) / threads;
      long piece = next + 1;  // at least one id
      while (piece < end && costs.of(next, piece + 1) <= budget) ++piece;
      end = piece;
    }
    return end;
  }

  // Where worker t's segment of the work ids [0, blocks) starts, of `workers`
  // segments (t = workers: blocks): at the t-th equal share, moved on to the
  // end of the group it falls in, so that no group straddles two segments.
  // Starts never decrease with t; a segment may be empty.
  template <class Op> static long segment_start(const typename Op::problem& p, int t, int workers, long blocks) {
    if (t <= 0) return 0;
    if (t >= workers) return blocks;
    const long tiles = Op::tiles(p);
    long b = blocks * t / workers;
    const long x = b % tiles;
    if (x != 0) b += group_end<Op>(p, int(x - 1), int(tiles)) - x;
    return b < blocks ? b : blocks;
  }

  // One block of a per-block launcher: work unit (block_x, z) for each z.
  template <class Op, class Ctx> static void run(Ctx& ctx, const typename Op::problem& p) {
    const int layers = Op::layers(p);
    for (int z = ctx.block_z(); z < layers; z += ctx.grid_z())
      run_group<Op>(ctx, p, z, ctx.block_x(), ctx.block_x() + 1, nullptr);
  }

  // Work ids [first, last) of the flat space id = layer · tiles + tile, in groups.
  template <class Op, class Ctx>
  static void run_range(Ctx& ctx, const typename Op::problem& p, long first_id, long last, long* packed = nullptr) {
    const long tiles = Op::tiles(p);
    if (tiles <= 0) return;
    for (long id = first_id; id < last;) {
      const int z = int(id / tiles);
      const int x0 = int(id - z * tiles);
      long end = group_end<Op>(p, x0, int(tiles));
      if (end - x0 > last - id) end = x0 + (last - id);
      run_group<Op>(ctx, p, z, x0, int(end), packed);
      id += end - x0;
    }
  }

  // The operand slots of one group: per stage operand, its slots' keys and
  // when each was last taken.
  struct slot_pool {
    copy_key key[max_operands][max_slots] = {};
    long used[max_operands][max_slots] = {};
    long clock = 0;
    copy_key spare{};  // held[I] of an operand the probe saw no copy of
    // The slot (of `slots`) of operand i for the tile `want`: the one holding
    // it, else the least recently used.
    int take(int i, int slots, const copy_key& want) {
      int pick = 0;
      for (int j = 0; j < slots; ++j) {
        if (key[i][j].same_source(want)) {
          pick = j;
          break;
        }
        if (used[i][j] < used[i][pick]) pick = j;
      }
      used[i][pick] = ++clock;
      return pick;
    }
  };

  // Work units x0 .. x1 − 1 (at most Group) of layer z, step-major.
  template <class Op, class Ctx>
  static void run_group(Ctx& ctx, const typename Op::problem& p, int z, int x0, int x1, long* packed) {
    using state = typename Op::state;
    using work = typename Op::work;
    constexpr int n_ops = Op::operand_count;
    const int n = x1 - x0;
    auto u = [&] {
      if constexpr (Op::unit::warps == 1) return Ctx(ctx);
      else return unit_context<Ctx, typename Op::unit, P::lanes>(ctx, ctx.warp() / Op::unit::warps);
    }();
    char* smem = ctx.smem();
    constexpr pool_table table = pools<Op>;
    slot_pool pool;
    copy_key want[max_operands] = {};
    copy_key* held[max_operands] = {};
    char* bases[max_operands] = {};
    for (int i = first<Op>; i < n_ops; ++i) bases[i] = smem + table.pool[i];
    const auto probe_stage = Op::stage_of(bases);  // slot 0 of each operand: the probe never writes it
    probe pr{want};
    loader<Ctx> ld{ctx, held, packed};
    resident_loader<Ctx> rld{ctx, packed};
    storer out;

    // A unit's state is started just before its first step and finished right
    // after its last, while it is hot in cache; in between it waits in the arena.
    work w[Group];
    int steps[Group];
    state* st[Group] = {};
    auto slot = [&](int i) { return smem + states_offset<Op> + i * state_stride<Op>; };
    // Start unit i (as ring_schedule does: its resident tiles, if any, are
    // copied together with its first step's).
    auto start = [&](int i) {
      st[i] = new (slot(i)) state;
      if constexpr (resident<Op> > 0) {
        char* res = smem + resident_offset<Op> + i * resident_stride<Op>;
        Op::start(u, *st[i], p, w[i], res);
        Op::load_resident(rld, res, p, w[i]);
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
        // Which tiles this step reads, and the slot of each.
        for (int o = first<Op>; o < n_ops; ++o) want[o].valid = false;
        Op::load(pr, probe_stage, p, w[i], k);
        for (int o = first<Op>; o < n_ops; ++o) {
          if (!want[o].valid) {
            held[o] = &pool.spare;
            continue;
          }
          const int s = pool.take(o, table.slots[o], want[o]);
          held[o] = &pool.key[o][s];
          bases[o] = smem + table.pool[o] + s * table.bytes[o];
        }
        const auto stg = Op::stage_of(bases);
        Op::load(ld, stg, p, w[i], k);
        P::commit();
        P::template wait<0>();
        ctx.sync();
        describe_step<Op>(u, *st[i], stg, p, w[i], k);
        Op::compute(u, *st[i], stg, p, w[i], k);
        Op::template retire<0>(u, *st[i]);
        ctx.sync();  // the slots are free for the next load
        if (k == steps[i] - 1) {
          Op::finish(u, out, *st[i], p, w[i]);
          st[i]->~state();
        }
      }
  }
};

}  // namespace tessel::cpu
