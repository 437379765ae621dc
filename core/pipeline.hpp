// tessel/core/pipeline.hpp — the block-level pipeline: an op's stage bodies, run by a backend's schedule.
//
// An op that streams operand tiles through shared memory is written as stage
// bodies; it never says who loads, who computes, or what hands a stage from one
// to the other. That is the schedule's job, chosen by the backend's config
// (cfg::schedule). pipeline_kernel<Op, Schedule> is what a backend launches.
//
// Stage bodies (the op, `Op`):
//   using problem;                         kernel parameters built on the host
//   using unit;                            the scope of one consumer (warp_scope, group_scope<4>)
//   static constexpr int units;            consumers per block
//   static constexpr int stage_bytes;      shared bytes of one stage (a multiple of Schedule::stage_align)
//   using stage;  static stage stage_at(char* base)   the operand tiles of one step
//   struct work;                           one unit of output (e.g. a C tile of one batch entry)
//   static int tiles(p), layers(p);        work = tiles × layers (layers: batch entries)
//   static work work_at(p, tile, layer)    the op's tile order (its rasterisation)
//   static int steps(p, w)                 pipeline steps of a work unit (K tiles)
//   optional: static int run_end(p, tile)  the end of the raster's run holding `tile`: tiles
//                                          [first of the run, run_end) share operand tiles; a
//                                          schedule that runs tiles in groups (the CPU's
//                                          packed_schedule) cuts its groups at run ends; with it
//   optional: static long unit_cost(p, tile)  the relative cost of work unit `tile` (the same
//                                          in every layer; > 0); a schedule whose workers claim
//                                          the work (packed_schedule) cuts its tail by cost, not
//                                          by count (the GEMM: the rows × columns of its C tile,
//                                          so the narrow last column strip counts for less)
//     template <int I> static constexpr int run_tiles: the tiles of operand I that a run's
//                                          units, in id order within one step, use before one
//                                          is used again (default 1); a schedule that keeps
//                                          that many of them copies each once a step
//   optional: static constexpr int paired_operand;  static bool paired(w0, w1)
//                                          for schedules that run units 2i and 2i + 1 in a
//                                          block pair: whether operand paired_operand's tiles
//                                          are the same for both at every step (then one copy
//                                          serves both blocks); such units have equal steps
//   load(ld, stage, p, w, step)            fills a stage: ld.template copy<I>(dst, src, row0, col0, layer)
//                                          per operand I (src: the gmatrix of that layer), one copy
//                                          per operand, none but through ld (a schedule may run it
//                                          with a loader that only records what would be copied)
//   optional: static stage stage_of(char* const* tiles)   the stage whose operand I's tile
//                                          (operand_tile<I>) starts at tiles[I], for schedules
//                                          that keep each operand's tiles in slots of their own
//                                          (packed_schedule: several B tiles of a step at once)
//   struct state;                          a consumer's registers (accumulators)
//   start(u, state, p, w)                  before the first step
//   optional: static constexpr int resident_bytes;   shared bytes kept for a whole
//                                          work unit (attention's Q), before the ring;
//     then load_resident(ld, resident, p, w) fills them with the first step's
//     copies, and start(u, state, p, w, resident) receives them
//   compute(u, state, stage, p, w, step)   consumes a stage; may leave its MMAs in flight
//   optional: describe(u, state, stage, p, w, step)  what compute(.., step) needs of the
//                                          stage's addresses (never its contents), into state;
//                                          schedules call it (describe_step) before that
//                                          compute, and may call it before the stage has
//                                          landed (sm90: the wgmma descriptors, ready while
//                                          the consumers wait for the stage)
//   retire<N>(u, state)                    waits until at most N steps' MMAs are in flight
//   finish(u, out, state, p, w)            the epilogue: out.template store<I>(u, dst, tile, row0,
//                                          col0, alpha, beta, layer) per output I (dst: its gmatrix at
//                                          that layer) — P::store's contract, however the schedule does it
//   using policy;                          the backend policy P of the tile ops
//   template <int I> static global_operand<T> operand(p), output(p);  operand_count, output_count;
//   template <int I> using operand_tile;   (schedules with a copy engine: the extents and layer
//                                          strides of inputs and outputs, for tensor maps; an op
//                                          whose epilogue stores through the policy names no output;
//                                          packed_schedule sizes its operand slots by operand_tile)
//   optional: static constexpr int resident_operands;   operands 0 .. resident_operands − 1
//                                          are the ones load_resident copies, the others load()'s
//                                          (default 0); a copy engine counts each group's bytes
//   optional: static constexpr bool split_steps;  static partial_tile& partial(state&)
//                                          every unit has the same steps, and a unit's steps may
//                                          run in ranges apart (start(), then compute() over the
//                                          range) whose partial() tiles (fp32) add up to the whole
//                                          unit's; then a schedule may split units by steps
//                                          where they are fewer than its blocks (split-K,
//                                          core/split_plan.hpp); with it
//                                          static int partial_rows(u, p, w): rows of u's partial
//                                          tile, from its first, that reach an output (a
//                                          schedule passing partials between blocks may skip the
//                                          others: finish() never stores them)
//   optional: static constexpr bool uneven_units;  the units' costs differ, and the op lists
//                                          them heaviest first (within runs long against the
//                                          grid: attention's causal triangle, core/attention_contract.hpp
//                                          heaviest_first_bytes); a persistent schedule then deals
//                                          the units in rounds over its blocks, alternately
//                                          forwards and backwards (dealt_unit), so a block's
//                                          heavier unit of one round meets a lighter one in the next
//   optional: static constexpr bool grouped_layers;      layer l of an operand is entry
//                                          l % layers of group l / layers (global_operand's
//                                          groups: attention's (batch, head) pairs)
// `u` is the consumer's context: the block context plus unit_index(); its lane()
// counts the unit's lanes (0 .. 127 for a 4-warp group on CUDA).
//
// Schedules (a backend names one per config; this file has the portable one):
//   ring_schedule   every warp loads and computes: S stages in flight, the
//                   copy of step k + S − 1 issued while step k computes;
//                   P::wait<S−2> + a block barrier hand a stage over (sm80
//                   cp.async, CDNA LDS, the CPU's packed panels).
//   backends/cuda/schedule_sm90.hpp: a producer warp (TMA) and consumer
//                   warpgroups, full/empty mbarriers, persistent grid.
#pragma once
#include <cstdint>
#include <type_traits>
#include <utility>

#include "tessel/core/global_tile.hpp"
#include "tessel/core/scope.hpp"

namespace tessel {

// One operand as a schedule with a copy engine sees it: the gmatrix of layer 0
// and the element distance between layers (0: every layer reads the same one).
// Layers may come in `groups` (an op with grouped_layers): layer l is entry
// l % layers of group l / layers, at l % layers · layer_stride +
// l / layers · group_stride (attention: heads within a batch entry; a stride of
// 0 again means one entry shared by all).
template <class T> struct global_operand {
  gmatrix<T> matrix;
  std::int64_t layer_stride;
  int layers;
  std::int64_t group_stride = 0;
  int groups = 1;
};

// The op's resident operands (0 when it declares none) and whether its layers come in groups.
template <class Op, class = void> struct resident_operands_of {
  static constexpr int value = 0;
};
template <class Op> struct resident_operands_of<Op, std::void_t<decltype(Op::resident_operands)>> {
  static constexpr int value = Op::resident_operands;
};
// Whether an op's work units may be split by steps (split_steps).
template <class Op, class = void> struct split_steps_of {
  static constexpr bool value = false;
};
template <class Op> struct split_steps_of<Op, std::void_t<decltype(Op::split_steps)>> {
  static constexpr bool value = Op::split_steps;
};
// Whether the op says where its raster's runs end (run_end).
template <class Op, class = void> struct run_ends_of : std::false_type {};
template <class Op>
struct run_ends_of<Op, std::void_t<decltype(Op::run_end(std::declval<const typename Op::problem&>(), 0))>>
    : std::true_type {};
// Whether the op states its work units' relative costs (unit_cost).
template <class Op, class = void> struct unit_costs_of : std::false_type {};
template <class Op>
struct unit_costs_of<Op, std::void_t<decltype(Op::unit_cost(std::declval<const typename Op::problem&>(), 0))>>
    : std::true_type {};
// Whether the op's units differ in cost, listed heaviest first (uneven_units).
template <class Op, class = void> struct uneven_units_of {
  static constexpr bool value = false;
};
template <class Op> struct uneven_units_of<Op, std::void_t<decltype(Op::uneven_units)>> {
  static constexpr bool value = Op::uneven_units;
};
// The unit index block `block` of `blocks` takes as its k-th (k = 0, 1, ...) where a
// persistent grid deals rounds of units alternately forwards and backwards: round k
// is units k·blocks .. (k + 1)·blocks − 1, block b takes the b-th of it (k even) or
// the b-th from its end (k odd). Over units whose cost falls steadily, block b's
// pair of rounds sums to about the same for every b; a block stops at the first
// index past the work (every later one is larger).
TESSEL_HOST_DEVICE constexpr long long dealt_unit(long long k, long long block, long long blocks) {
  return k * blocks + (k % 2 == 0 ? block : blocks - 1 - block);
}
template <class Op, int I, class = void> struct run_tiles_of {
  static constexpr int value = 1;
};
template <class Op, int I> struct run_tiles_of<Op, I, std::void_t<decltype(Op::template run_tiles<I>)>> {
  static constexpr int value = Op::template run_tiles<I>;
};
template <class Op, class = void> struct grouped_layers_of {
  static constexpr bool value = false;
};
template <class Op> struct grouped_layers_of<Op, std::void_t<decltype(Op::grouped_layers)>> {
  static constexpr bool value = Op::grouped_layers;
};

// describe(u, state, stage, p, w, step) where the op has it; else nothing.
template <class Op, class U, class = void> struct describes_of : std::false_type {};
template <class Op, class U>
struct describes_of<Op, U,
                   std::void_t<decltype(Op::describe(std::declval<U&>(), std::declval<typename Op::state&>(),
                                                    std::declval<const typename Op::stage&>(),
                                                    std::declval<const typename Op::problem&>(),
                                                    std::declval<const typename Op::work&>(), 0))>> : std::true_type {};
template <class Op, class U>
TESSEL_HOST_DEVICE void describe_step(U& u, typename Op::state& st, const typename Op::stage& s,
                                     const typename Op::problem& p, const typename Op::work& w, int step) {
  if constexpr (describes_of<Op, U>::value) Op::describe(u, st, s, p, w, step);
}

// The context of one consumer unit: the block context, which unit this is, and
// lanes counted within the unit. Warp-scope units see the block context itself.
template <class Ctx, class Unit, int WarpLanes> struct unit_context : Ctx {
  static constexpr int lanes = Unit::warps * WarpLanes;
  int unit_index_;
  TESSEL_HOST_DEVICE unit_context(const Ctx& ctx, int index) : Ctx(ctx), unit_index_(index) {}
  TESSEL_HOST_DEVICE int unit_index() const { return unit_index_; }
  // The lane within the unit (the atom's lane index for a group-scope atom).
  TESSEL_HOST_DEVICE int lane() const { return Ctx::thread() % lanes; }
};

// The op's resident shared bytes (0 when it declares none).
template <class Op, class = void> struct resident_bytes_of {
  static constexpr int value = 0;
};
template <class Op> struct resident_bytes_of<Op, std::void_t<decltype(Op::resident_bytes)>> {
  static constexpr int value = Op::resident_bytes;
};

// Runs every step of one work unit through a ring of S stages in shared
// memory, all warps loading (P::load, P::commit) and all computing.
template <class P, int S> struct ring_schedule {
  static_assert(S >= 2, "ring_schedule: the copy/compute ring needs at least two stages");
  static constexpr int max_grid_z = 65535;
  static constexpr int stage_align = 128;  // bytes: every stage and operand tile starts so aligned

  // The loader every thread calls: a block-scope copy through the policy.
  template <class Ctx> struct loader {
    Ctx& ctx;
    template <int I, class Dst, class Src>
    TESSEL_HOST_DEVICE void copy(Dst dst, const gmatrix<Src>& src, int row0, int col0, int /*layer*/) {
      P::load(ctx, dst, src, row0, col0);
    }
  };

  // The epilogue's store: the policy's, by the unit.
  struct storer {
    template <int I, class U, class Tile, class TD>
    TESSEL_HOST_DEVICE void store(U& u, const gmatrix<TD>& dst, const Tile& t, int row0, int col0, float alpha,
                                  float beta, int /*layer*/) {
      P::store(u, dst, t, row0, col0, alpha, beta);
    }
  };

  template <class Op> using params = typename Op::problem;
  template <class Op> static constexpr int warps = Op::units * Op::unit::warps;
  template <class Op> static launch_shape shape(const typename Op::problem& p) {
    launch_shape s;
    s.grid_x = Op::tiles(p);
    const int layers = Op::layers(p);
    s.grid_z = layers < max_grid_z ? layers : max_grid_z;  // run() strides over the rest
    s.warps = warps<Op>;
    s.smem_bytes = resident_bytes_of<Op>::value + S * Op::stage_bytes;
    return s;
  }
  template <class Op> static const typename Op::problem& prepare(const typename Op::problem& p) { return p; }

  template <class Op, class Ctx> TESSEL_HOST_DEVICE static void run(Ctx& ctx, const typename Op::problem& p) {
    const int layers = Op::layers(p);
    for (int z = ctx.block_z(); z < layers; z += ctx.grid_z()) run_one<Op>(ctx, p, Op::work_at(p, ctx.block_x(), z));
  }

  template <class Op, class Ctx>
  TESSEL_HOST_DEVICE static void run_one(Ctx& ctx, const typename Op::problem& p, const typename Op::work& w) {
    using unit_ctx = unit_context<Ctx, typename Op::unit, P::lanes>;
    auto u = [&] {
      if constexpr (Op::unit::warps == 1) return Ctx(ctx);
      else return unit_ctx(ctx, ctx.warp() / Op::unit::warps);
    }();
    constexpr int resident = resident_bytes_of<Op>::value;
    char* smem = ctx.smem();
    char* ring = smem + resident;
    auto stage = [&](int s) { return Op::stage_at(ring + s * Op::stage_bytes); };
    loader<Ctx> ld{ctx};
    typename Op::state st;
    if constexpr (resident > 0) {
      Op::start(u, st, p, w, smem);
      Op::load_resident(ld, smem, p, w);  // in the first copy group, with step 0
    } else {
      Op::start(u, st, p, w);
    }
    const int steps = Op::steps(p, w);
    for (int s = 0; s < S - 1; ++s) {
      if (s < steps) Op::load(ld, stage(s), p, w, s);
      P::commit();
    }
    for (int k = 0; k < steps; ++k) {
      P::template wait<S - 2>();  // step k has landed (for this thread)
      ctx.sync();                 // ... for every thread; and stage (k − 1) % S is free again
      const int next = k + S - 1;
      if (next < steps) Op::load(ld, stage(next % S), p, w, next);
      P::commit();
      describe_step<Op>(u, st, stage(k % S), p, w, k);
      Op::compute(u, st, stage(k % S), p, w, k);
      Op::template retire<0>(u, st);
    }
    storer out;
    Op::finish(u, out, st, p, w);
  }
};

// What a backend launches: the op's stage bodies under a schedule.
//   problem  what the host builds;  params  what the kernel receives (prepare())
//   warps    block size in warps;   shape() the launch;  run() the kernel body
template <class Op, class Schedule> struct pipeline_kernel {
  using op = Op;
  using cfg = typename Op::cfg;
  using schedule = Schedule;
  using problem = typename Op::problem;
  using params = typename Schedule::template params<Op>;
  static constexpr int warps = Schedule::template warps<Op>;
  static launch_shape shape(const problem& p) { return Schedule::template shape<Op>(p); }
  static params prepare(const problem& p) { return Schedule::template prepare<Op>(p); }
  template <class Ctx> TESSEL_HOST_DEVICE static void run(Ctx& ctx, const params& pp) {
    Schedule::template run<Op>(ctx, pp);
  }
};

}  // namespace tessel
