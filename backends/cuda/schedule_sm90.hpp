// tessel/cuda/schedule_sm90.hpp — the Hopper pipeline schedule: a TMA producer, wgmma consumer warpgroups.
//
// Runs an op's stage bodies (core/pipeline.hpp) on sm_90a:
//
//   warpgroup 0 (producer, 40 registers): one thread walks the block's work
//     units and steps; per step it waits for the stage to be empty, announces
//     the stage's bytes on its `full` barrier and has the op's load() issue
//     TMA copies (tma_loader) that complete on that barrier.
//   warpgroups 1 .. Consumers (232 registers; 152 as three): per step they describe() it
//     (the op's work on the stage's addresses: wgmma descriptors), wait on
//     `full`, run compute() (asynchronous wgmma), retire<1>() the previous step's MMAs
//     and free that step's stage: one arrival per consumer warp on `empty`.
//     After the last step, retire<0>() and finish() (the epilogue) — while the
//     producer already fills the ring with the next work unit's steps. The
//     epilogue stages a warpgroup's accumulator in its own 32 KiB of shared
//     memory, in rounds of 16 KiB alternating between its halves, and leaves
//     TMA stores in flight (tma_storer, sm90_epilogue_store.hpp): they drain
//     while the next round is written and the next mainloop runs; a named
//     barrier per warpgroup orders each half.
//   Consumers == 3 (self_load, the default there): three consumer warpgroups
//     take the register file (168 registers each, no setmaxnreg) and there is
//     no producer warpgroup: thread 0 of the consumers copies each stage Stages
//     steps ahead, right after its own release of it, once `empty` says every
//     consumer warp has released it (cooperative single blocks only). With
//     SelfLoad = false, a producer warpgroup (40 registers) and three consumer
//     warpgroups (152 each), as above.
//   grid: persistent (capped at one block per SM by the launcher); block b
//     takes work units b, b + grid, ... in the op's order (its raster), or,
//     for an op whose units differ in cost (uneven_units, listed heaviest
//     first), the b-th of each round of `grid` units, counted from the round's
//     end in every second round (dealt_unit, core/pipeline.hpp); the walk is
//     sm90_unit_walk.hpp.
//   stream: launched with programmatic stream serialization (launch.hpp):
//     the kernel may start while the stream's previous kernel runs; every
//     thread waits for that kernel (griddepcontrol.wait) once the barriers are
//     set up. A persistent grid lets its successor launch only as its blocks
//     end (the implicit trigger), onto idle SMs: launched early, the
//     successor's blocks would take SMs in the order this grid's blocks leave
//     them, which scatters what the dispatcher puts side by side (H200: a
//     split piece 5-15% more cycles at 256 × 8192²; launched at the end,
//     GEMMs of 512³-2048³ +2-4%, of 4096³-8192³ −0.7 to +1.4%, mostly
//     gains). A grid of one block per unit (attention) lets it
//     launch early: thread 0 of each block, once it has waited (the successor
//     launches when every block has done so or ended). Attention, 8 heads,
//     launching early against at the end: 1.9-2.7% faster at seq 4096 hd64,
//     within ±0.6% at hd128, 0.5-1.7% slower at seq 1024 (one partial wave of
//     blocks); bench/notes/cuda_gemm.md, session 38.
//   Cluster == 2: blocks run in pairs (a thread-block cluster on neighbouring
//     SMs). Pair i takes the op's units 2i and 2i + 1, which usually share
//     one operand tile at every step (Op::paired_operand; GEMM: the B tile of
//     two vertically adjacent C tiles). Where Op::paired() says they do, each
//     block's producer loads half of that tile and multicasts it into both
//     blocks' stages — half the L2 reads of that operand; else each loads it
//     whole. Either way a stage is refilled only once the consumers of both
//     blocks have released it: they arrive on the empty barriers of both.
//     An odd unit count leaves the last pair's second block a copy of the
//     first's unit, run but not stored.
//
//   stage s:  full[s] (count 1 + bytes)   producer(s) ──TMA──▶ consumers
//             empty[s] (count = consumer warps × Cluster)   consumers of every
//             block of the cluster ──arrive──▶ producer
//   alternating units (Op::units == 1): consumer c takes the block's units
//             c, c + Consumers, ...; turn[c] (count 1): the previous unit's
//             consumer ──arrive, once it has seen its last stage full──▶ c
//   epilogue: consumers ──st.shared, fence.proxy.async, bar(1 + unit)──▶ lane 0
//             ──TMA store (bulk group)──▶ C; wait_group.read 1 before a half's reuse
//   resident operands (an op with resident_bytes, cooperative units only;
//             attention's Q): R = ResidentSlots slots beside the ring; the
//             producer fills slot n % R with unit n's load_resident copies
//             (operands below Op::resident_operands) once resident_empty[n % R]
//             says the consumers are done with unit n − R (one arrival per
//             consumer warp after its last retire<0>); resident_full[n % R]
//             (count 1 + bytes) → consumers, waited before the unit's first
//             step. R = 2 by default in a persistent grid (unit n's copy lands
//             while unit n − 1 computes), 1 otherwise; a persistent grid with
//             one slot copies unit n's while unit n − 1 runs its epilogue.
//   grouped layers (Op::grouped_layers): 4-D maps, layer l = entry
//             l % layers of group l / layers (attention: head, batch).
//   Split (an op with split_steps, cooperative single blocks): where units
//             are fewer than half the blocks, each is split into pieces of
//             steps run at once by consecutive blocks (core/split_plan.hpp),
//             where the plan's cost model says that pays; a split block
//             runs one piece. Where output 0 goes by the staged TMA store, the
//             unit's p blocks reduce-scatter: block i of p keeps panels
//             [P·i/p, P·(i+1)/p) of the tile's P staged panels (64 columns
//             for 16-bit C, 32 for fp32), leaves the rest of its consumers'
//             partial accumulators in its slot of a workspace (launch.hpp
//             allocates it per launch; zero_workspace zeroes its flags), sets its flag
//             (bar(1 + Consumers), then a release store), acquires the
//             flags of the other p − 1, adds their partials of its panels
//             (each consumer thread its chunks, from global memory:
//             sm90_partials.hpp) and stores those panels. Else (C by the
//             policy's store) the unit's first piece ("finishes") adds all
//             the others' partials and stores the whole tile.
//   phase bits: a thread's pass p over the ring waits full with parity p % 2,
//   empty with parity (p + 1) % 2 (a fresh barrier's "previous" phase is done).
//
//   PlainStore: output 0 is stored as it is (C = acc: alpha 1, beta 0, C not
//             read), through the staged TMA store only: no alpha/beta code and no
//             register-store fallback (35-40 KB of code against ~170 KB; the general
//             epilogue stalls on instruction fetch). Picked where stores_by_tma() holds
//             and alpha = 1, beta = 0; prepare() refuses an output no tensor map describes.
//
// Diagnostics: -DTESSEL_SM90_TRACE=N: block 0 of the N-th launch records its loads,
// waits, retires, epilogues and epilogue rounds (sm90_trace.hpp).
// Operands are read through tensor maps built by prepare() on the host
// (tensor_map.hpp): their shared tiles must be swizzle128 tiles of 16-bit
// elements; rows and columns outside a matrix arrive as zeros (the masked
// edge). The dispatcher uses this schedule only where tma_compatible holds.
#pragma once
#include <cstdint>
#include <type_traits>
#include <utility>

#include "tessel/core/pipeline.hpp"
#include "tessel/core/register_tile.hpp"
#include "tessel/core/shared_tile.hpp"
#include "tessel/core/split_plan.hpp"
#include "tessel/cuda/arch/cluster.hpp"
#include "tessel/cuda/arch/flag.hpp"
#include "tessel/cuda/arch/grid_dependency.hpp"
#include "tessel/cuda/arch/ldmatrix.hpp"
#include "tessel/cuda/arch/tma.hpp"
#include "tessel/cuda/arch/warp.hpp"
#include "tessel/cuda/arch/wgmma.hpp"
#include "tessel/cuda/atom/wgmma.hpp"
#include "tessel/cuda/launch.hpp"
#include "tessel/cuda/sm90_epilogue_store.hpp"
#include "tessel/cuda/sm90_operand_maps.hpp"
#include "tessel/cuda/sm90_partials.hpp"
#include "tessel/cuda/sm90_trace.hpp"
#include "tessel/cuda/sm90_unit_walk.hpp"
#include "tessel/cuda/swizzle.hpp"
#include "tessel/cuda/tensor_map.hpp"

namespace tessel::cuda {

template <class Problem, int N> struct tma_params {
  CUtensorMap maps[N];  // one per operand, 64-byte aligned
  CUtensorMap out_map;  // output 0, where out_tma
  Problem problem;
  int layers[N];      // grouped layers: entries per group (layer l = entry l % layers of group l / layers)
  bool layered[N];    // false: the operand is shared by every layer (layer coordinate 0)
  bool grouped[N];    // false: ... by every group (group coordinate 0); grouped_layers ops only
  bool out_tma, out_layered;
  // Split schedules: the workspace of one launch (flags, one per block, zeroed; then partials, a slot per block).
  unsigned* flags;
  float* partials;
};

// The operand a cluster pair multicasts (Op::paired_operand), or -1 where the op names none.
template <class Op, class = void> struct paired_operand_of {
  static constexpr int value = -1;
};
template <class Op> struct paired_operand_of<Op, std::void_t<decltype(Op::paired_operand)>> {
  static constexpr int value = Op::paired_operand;
};

template <int Stages, int Consumers, int Cluster = 1, int EpilogueKiB = 32, bool Persistent = true, bool Split = false,
          bool PlainStore = false, int ResidentSlots = (Persistent ? 2 : 1), bool SelfLoad = (Consumers == 3)>
struct sm90_tma_schedule {
  static_assert(Stages >= 2 && Consumers >= 1, "sm90_tma_schedule: at least two stages and one consumer warpgroup");
  static_assert(Cluster == 1 || Cluster == 2, "sm90_tma_schedule: clusters of 1 or 2 blocks");
  static_assert(EpilogueKiB == 0 || EpilogueKiB == 16 || EpilogueKiB == 32,
                "sm90_tma_schedule: 0 (an op storing through the policy), 16 or 32 KiB of epilogue staging per consumer");
  static_assert(!PlainStore || EpilogueKiB > 0, "sm90_tma_schedule: PlainStore stores through the epilogue staging");
  static constexpr int stage_align = 1024;  // 128-byte swizzled TMA boxes
  // run() waits for the stream's previous kernel itself (arch/grid_dependency.hpp)
  // before it touches global memory, so the launcher may start it early.
  static constexpr bool waits_for_predecessor = true;
  // Three consumer warpgroups hold the register file alone by default (3 × 128
  // lanes × 168 registers; a fourth warpgroup would cap every lane at 128, too
  // few for a 64 × 256 fp32 accumulator): they load their own stages
  // (self_load). SelfLoad = false keeps the producer warpgroup beside three
  // consumers, on 40 + 3 × 152 registers a lane (of 4 × 128 at launch; the
  // producer spilled on 32): for an op whose consumers need no more, e.g.
  // attention at head_dim 64 (FlashAttention-3's arrangement there).
  static constexpr bool self_load = SelfLoad;
  static_assert(!SelfLoad || Consumers == 3, "sm90_tma_schedule: consumers load their own stages only as three");
  static constexpr int producer_registers = 40, consumer_registers = Consumers == 3 ? 152 : 232;

  template <class Op> using params = tma_params<typename Op::problem, Op::operand_count>;
  template <class Op> static constexpr int warps = 4 * (self_load ? Consumers : 1 + Consumers);
  static_assert(Consumers <= 3, "sm90_tma_schedule: at most three consumer warpgroups (the register file)");
  static_assert(self_load || Consumers * 128 * consumer_registers + 128 * producer_registers <= 65536,
                "sm90_tma_schedule: the register file cannot hold these warpgroups");

  // Resident operands (Op::resident_bytes, filled by load_resident once per work
  // unit): by default two slots in a persistent grid, so that the next unit's
  // copy lands while this one computes; one where every block runs one unit.
  static_assert(ResidentSlots == 1 || (ResidentSlots == 2 && Persistent),
                "sm90_tma_schedule: one resident slot, or two in a persistent grid");
  static constexpr int resident_slots = ResidentSlots;
  template <class Op>
  static constexpr int resident_slot_bytes = (resident_bytes_of<Op>::value + stage_align - 1) / stage_align * stage_align;
  template <class Op> static constexpr bool has_resident = resident_bytes_of<Op>::value > 0;
  template <class Op>
  static constexpr int barrier_bytes = (2 * Stages + Consumers + (has_resident<Op> ? 2 * resident_slots : 0)) * 8;
  // Per consumer: two halves (of 8 or 16 KiB) that the epilogue's rounds
  // alternate between (tile_ops_sm90's staging), so a round's shared stores
  // overlap the previous round's TMA store reading the other half.
  static constexpr int epilogue_bytes = EpilogueKiB * 1024, round_bytes = epilogue_bytes / 2;
  // Shared memory, from its 1024-aligned start: the stages, the resident
  // slots, the epilogue staging of each consumer, the barriers.
  template <class Op>
  static constexpr int epilogue_offset =
      Stages * Op::stage_bytes + (has_resident<Op> ? resident_slots * resident_slot_bytes<Op> : 0);
  template <class Op> static constexpr int barriers_offset = epilogue_offset<Op> + Consumers * epilogue_bytes;
  template <class Op> static launch_shape shape(const typename Op::problem& p) {
    static_assert(Op::unit::warps == 4 && (Op::units == Consumers || Op::units == 1),
                  "sm90_tma_schedule: warpgroup units, one per consumer (cooperative) or one per work unit (alternating)");
    static_assert(Cluster == 1 || (Op::units == Consumers && paired_operand_of<Op>::value >= 0),
                  "sm90_tma_schedule: a cluster pair runs cooperative units of an op that names its paired_operand");
    static_assert(!has_resident<Op> || (Op::units == Consumers && Cluster == 1),
                  "sm90_tma_schedule: resident operands in cooperative single blocks only");
    static_assert(!self_load || (Op::units == Consumers && Cluster == 1 && !Split && !has_resident<Op>),
                  "sm90_tma_schedule: three consumers load their own stages: cooperative single blocks, "
                  "not split, no resident operands");
    static_assert(!Split || (split_steps_of<Op>::value && Op::units == Consumers && Cluster == 1 && Persistent &&
                             !has_resident<Op>),
                  "sm90_tma_schedule: Split runs cooperative single blocks of a persistent grid, for an op with split_steps");
    if constexpr (Split)
      static_assert(std::is_same_v<typename partial_tile<Op>::value_type, float> && partial_tile<Op>::values % 4 == 0,
                    "sm90_tma_schedule: a split op's partial state is a tile of fp32 in chunks of 4");
    launch_shape s;
    const long long work = (long long)Op::tiles(p) * Op::layers(p);
    // Split: up to max_pieces blocks per unit where units are few (the
    // launcher caps a persistent grid at what fits; the plan uses what it got).
    const long long wanted = Split ? work * split_plan::max_pieces : work;
    const long long blocks = (wanted + Cluster - 1) / Cluster * Cluster;
    s.grid_x = blocks < (1LL << 30) ? int(blocks) : (1 << 30);
    s.persistent = Persistent;  // else one block per unit: the hardware balances uneven units (causal)
    s.cluster_x = Cluster;
    s.warps = warps<Op>;
    s.smem_bytes = 1024 + Stages * Op::stage_bytes + (has_resident<Op> ? resident_slots * resident_slot_bytes<Op> : 0) +
                   Consumers * epilogue_bytes + barrier_bytes<Op>;  // 1024: alignment
    return s;
  }

  // Whether operand I is multicast by halves of its outer extent (its tile has
  // an odd number of 64-element panels), so its boxes are half as tall.
  template <class Op, int I>
  static constexpr bool split_outer = Cluster > 1 && I == paired_operand_of<Op>::value &&
                                      (Op::template operand_tile<I>::layout::inner / 64) % 2 != 0;
  template <class Op> struct halves_outer {
    template <int I> using of = std::bool_constant<split_outer<Op, I>>;
  };
  // Whether every operand of p can be read through a tensor map (sm90_operand_maps.hpp).
  template <class Op> static bool supports(const typename Op::problem& p) { return operands_mappable<Op>(p); }
  template <class Op> static params<Op> prepare(const typename Op::problem& p) {
    params<Op> pp{};
    pp.problem = p;
    fill_operand_maps<Op, halves_outer<Op>::template of>(pp, p);
    // Output 0 through a staged TMA store where a map can describe it row by row.
    pp.out_tma = pp.out_layered = false;
    if constexpr (Op::output_count > 0 && EpilogueKiB > 0) {
      const auto out = Op::template output<0>(p);
      pp.out_tma = stores_by_tma<Op>(p);
      if (pp.out_tma)
        pp.out_map = make_tensor_map(out.matrix, out.layer_stride, out.layers, Op::template output_tile<0>::rows);
      pp.out_layered = out.layer_stride != 0;
    }
    if (PlainStore && !pp.out_tma)
      throw Error("tessel cuda backend: the plain-store sm90 kernel was given an output no tensor map describes "
                  "(a dispatch error: stores_by_tma() must hold)");
    return pp;
  }
  // Whether output 0 of p goes through the staged TMA store (a map describes it row by row).
  template <class Op> static bool stores_by_tma(const typename Op::problem& p) {
    if constexpr (Op::output_count > 0 && EpilogueKiB > 0) return output_mappable<Op>(p);
    else return false;
  }

  // Split: the plan of a launch of `grid` blocks (the same on host and device)
  // and its workspace: a flag per block (zeroed by the launcher), then a slot
  // per block of every consumer thread's fp32 partial (Op::partial).
  // fixup_steps: one partial written and read, in mainloop steps (128 KiB each
  // way at ~64 B a clock; 2 split finer and ran 9-12% slower, 2026-11-25).
  // fixed_steps: what a split launch costs besides (H100: 64 units of 32 steps
  // ran 3% slower in 2 pieces than whole).
  static constexpr int fixup_steps = 4, fixed_steps = 16;
  static constexpr int split_barrier = 1 + Consumers;  // named barrier of all consumer warps
  template <class Op> TESSEL_HOST_DEVICE static split_plan plan(const typename Op::problem& p, int grid) {
    const long long work = (long long)Op::tiles(p) * Op::layers(p);
    if constexpr (!Split) return split_plan::unsplit(work, 0, grid);
    else
      return split_plan::make(work, work > 0 ? Op::steps(p, Op::work_at(p, 0, 0)) : 0, grid, fixup_steps, fixed_steps);
  }
  template <class Op> using partial_tile = std::remove_reference_t<decltype(Op::partial(std::declval<typename Op::state&>()))>;
  // Partials from the contributing blocks to the finishing one (sm90_partials.hpp).
  template <class Op> using partials = sm90_partials<partial_tile<Op>, Consumers>;
  template <class Op> static constexpr int partial_floats = partials<Op>::floats;
  template <class Op>
  using output_type = std::remove_pointer_t<decltype(Op::template output<0>(std::declval<const typename Op::problem&>())
                                                         .matrix.ptr)>;
  // Whether a split unit's blocks may each store a share of its columns (where
  // output 0 also goes by the staged TMA store: params::out_tma): the partial
  // is the tile the op stores, a wgmma accumulator. Else its finishing block
  // adds the others' partials and stores the whole tile.
  template <class Op> TESSEL_HOST_DEVICE static constexpr bool scatters() {
    if constexpr (Op::output_count > 0 && EpilogueKiB > 0)
      return std::is_same_v<partial_tile<Op>, typename Op::template output_tile<0>> &&
             wgmma_accumulator<partial_tile<Op>>::value;
    else
      return false;
  }
  static constexpr std::size_t flag_bytes(int grid) { return (std::size_t(grid) * 4 + 255) / 256 * 256; }
  template <class Op> static workspace_need workspace(const params<Op>& pp, int grid) {
    if constexpr (Split) {
      if (plan<Op>(pp.problem, grid).splits())
        return {flag_bytes(grid) + std::size_t(grid) * partial_floats<Op> * 4, flag_bytes(grid)};
    }
    return {0, 0};
  }
  template <class Op> static void attach(params<Op>& pp, void* ws, int grid) {
    pp.flags = static_cast<unsigned*>(ws);
    pp.partials = reinterpret_cast<float*>(static_cast<char*>(ws) + flag_bytes(grid));
  }

  // The producer's loader: one TMA copy per 64-element panel of a swizzle128
  // tile. The paired operand of a cluster pair goes in two halves (of its
  // panels, or of each panel's lines): with `multicast`, this block copies
  // half `rank` into both blocks; else both halves into its own stage.
  template <class Op> struct tma_loader {
    const params<Op>& pp;
    std::uint32_t bar;
    int rank;
    bool multicast;
    template <int I, class T, int R, int C, bool CC, class Src>
    TESSEL_DEVICE void copy(st<T, swizzle128<R, C, CC>> dst, const gmatrix<Src>&, int row0, int col0, int layer) {
      using L = swizzle128<R, C, CC>;
      constexpr int panels = L::inner / 64, line_bytes = 64 * 2;
      const int inner0 = CC ? col0 : row0, outer0 = CC ? row0 : col0;
      const std::uint32_t base = arch::shared_address(dst.data);
      const int z = pp.layered[I] ? layer : 0;
      if constexpr (grouped_layers_of<Op>::value) {  // 4-D map: (entry, group) of the layer
        const int entry = pp.layered[I] ? layer % pp.layers[I] : 0, group = pp.grouped[I] ? layer / pp.layers[I] : 0;
        TESSEL_UNROLL for (int panel = 0; panel < panels; ++panel)
          arch::tma_load_4d(base + panel * L::outer * line_bytes, &pp.maps[I], inner0 + 64 * panel, outer0, entry, group,
                            bar);
      } else if constexpr (Cluster > 1 && I == paired_operand_of<Op>::value) {
        constexpr bool by_lines = split_outer<Op, I>;
        constexpr int half_panels = by_lines ? panels : panels / 2, half_lines = by_lines ? L::outer / 2 : L::outer;
        static_assert(!by_lines || half_lines % 8 == 0, "tma_loader: half a tile keeps whole 1024-byte swizzle rows");
        TESSEL_UNROLL for (int h = 0; h < 2; ++h) {
          if (multicast && h != rank) continue;
          TESSEL_UNROLL for (int q = 0; q < half_panels; ++q) {
            const int panel = by_lines ? q : h * half_panels + q, line = by_lines ? h * half_lines : 0;
            const std::uint32_t to = base + (panel * L::outer + line) * line_bytes;
            if (multicast)
              arch::tma_load_3d_multicast(to, &pp.maps[I], inner0 + 64 * panel, outer0 + line, z, bar, 0x3);
            else
              arch::tma_load_3d(to, &pp.maps[I], inner0 + 64 * panel, outer0 + line, z, bar);
          }
        }
      } else {
        TESSEL_UNROLL for (int panel = 0; panel < panels; ++panel)
          arch::tma_load_3d(base + panel * L::outer * line_bytes, &pp.maps[I], inner0 + 64 * panel, outer0, z, bar);
      }
    }
  };

  // The consumers' epilogue store (sm90_epilogue_store.hpp).
  template <class Op> using tma_storer = sm90_tma_storer<Op, params<Op>, round_bytes, PlainStore>;

  // Bytes the copies of one stage deliver (the expect_tx of its full barrier):
  // operands resident_operands .. operand_count − 1; those of load_resident:
  // operands 0 .. resident_operands − 1.
  template <class Op, int I> static constexpr std::uint32_t operand_bytes =
      std::uint32_t(sizeof(typename Op::template operand_tile<I>::value_type) * Op::template operand_tile<I>::size);
  template <class Op, bool Resident, class Seq = std::make_integer_sequence<int, Op::operand_count>> struct copy_bytes;
  template <class Op, bool Resident, int... I> struct copy_bytes<Op, Resident, std::integer_sequence<int, I...>> {
    static constexpr std::uint32_t value =
        (0u + ... + ((I < resident_operands_of<Op>::value) == Resident ? operand_bytes<Op, I> : 0u));
  };
  template <class Op> using stage_copy_bytes = copy_bytes<Op, false>;

  // Which work units this block runs, in order (sm90_unit_walk.hpp).
  using unit_walk = sm90_unit_walk<Cluster, Split>;
  template <class Op> using unit_of = typename unit_walk::template unit<Op>;
  template <class Op> using walker = typename unit_walk::template walker<Op>;

  template <class Op, class Ctx> TESSEL_DEVICE static void run(Ctx& ctx, const params<Op>& pp) {
    TESSEL_SM90_SPANNED(if (ctx.thread() == 0) sm90_spans::entry();)
    const typename Op::problem& p = pp.problem;
    char* arena = ctx.smem();
    char* smem = arena + ((1024 - (arch::shared_address(arena) & 1023)) & 1023);
    const std::uint32_t bars = arch::shared_address(smem + barriers_offset<Op>);
    const auto full = [&](int s) { return bars + 8 * s; };
    const auto empty = [&](int s) { return bars + 8 * (Stages + s); };
    const auto turn = [&](int c) { return bars + 8 * (2 * Stages + c); };
    const auto stage = [&](int s) { return Op::stage_at(smem + s * Op::stage_bytes); };
    // Resident slot r: its shared bytes and its full / empty barriers.
    const auto resident = [&](int r) { return smem + Stages * Op::stage_bytes + r * resident_slot_bytes<Op>; };
    const auto resident_full = [&](int r) { return bars + 8 * (2 * Stages + Consumers + r); };
    const auto resident_empty = [&](int r) { return bars + 8 * (2 * Stages + Consumers + resident_slots + r); };
    // Cooperative: the consumers share each work unit (Op::units == Consumers).
    // Alternating ("ping-pong"): consumer c takes the block's work units c,
    // c + Consumers, ... whole, so one's epilogue overlaps another's mainloop.
    constexpr bool alternating = Op::units == 1 && Consumers > 1;
    constexpr int consumer_warps = alternating ? 4 : 4 * Consumers;  // arrivals that empty a stage, per block
    if (ctx.thread() == 0) {
      for (int s = 0; s < Stages; ++s) {
        arch::mbarrier_init(full(s), 1);
        arch::mbarrier_init(empty(s), consumer_warps * Cluster);
      }
      for (int c = 0; c < Consumers; ++c) arch::mbarrier_init(turn(c), 1);
      if constexpr (has_resident<Op>)
        for (int r = 0; r < resident_slots; ++r) {
          arch::mbarrier_init(resident_full(r), 1);
          arch::mbarrier_init(resident_empty(r), consumer_warps);
        }
      arch::mbarrier_init_fence();
    }
    if constexpr (Cluster > 1) arch::cluster_sync();  // the peer's barriers exist before anyone arrives on them
    else ctx.sync();
    // Launched with programmatic stream serialization (waits_for_predecessor):
    // the kernel before may still run. Nothing above touched global memory (the
    // tensor maps are kernel parameters); everything below may.
    arch::grid_dependency_wait();
    if (!Persistent && ctx.thread() == 0) arch::grid_dependents_launch();  // see "stream" above

    const int tiles = Op::tiles(p);
    const long long work = (long long)tiles * Op::layers(p);
    const int rank = Cluster > 1 ? arch::cluster_rank() : 0;
    const long long first_pair = ctx.block_x() / Cluster, pair_stride = ctx.grid_x() / Cluster;
    const split_plan sp = plan<Op>(p, ctx.grid_x());
    if (!self_load && ctx.warp() < 4) {  // the producer warpgroup
      arch::setmaxnreg_dec<producer_registers>();
      if (ctx.thread() == 0) {
        for (int i = 0; i < Op::operand_count; ++i) arch::tma_prefetch_map(&pp.maps[i]);
        constexpr std::uint32_t bytes = stage_copy_bytes<Op>::value;
        int s = 0, phase = 0;
        TESSEL_SM90_TRACED(sm90_trace::rec tr; tr.begin(0);)
        walker<Op> units = unit_walk::template walk<Op>(p, sp, rank, work, tiles, first_pair, pair_stride);
        unit_of<Op> un;
        split_piece pc;
        for (long long mine = 0; units.next(un, pc); ++mine) {
          if constexpr (has_resident<Op>) {  // once the consumers are done with the unit two before
            const int r = int(mine % resident_slots), pass = int(mine / resident_slots) & 1;
            arch::mbarrier_wait(resident_empty(r), pass ^ 1);
            arch::mbarrier_arrive_expect_tx(resident_full(r), copy_bytes<Op, true>::value);
            tma_loader<Op> ld{pp, resident_full(r), rank, false};
            Op::load_resident(ld, resident(r), p, un.w);
          }
          for (int k = pc.k0; k < pc.k1; ++k) {
            arch::mbarrier_wait(empty(s), phase ^ 1);
            TESSEL_SM90_TRACED(tr.at('e', int(mine), k);)
            arch::mbarrier_arrive_expect_tx(full(s), bytes);
            tma_loader<Op> ld{pp, full(s), rank, un.multicast};
            Op::load(ld, stage(s), p, un.w, k);
            if (++s == Stages) s = 0, phase ^= 1;
          }
        }
        TESSEL_SM90_TRACED(tr.end();)
      }
    } else {
      if (Split && sp.splits() && pp.flags == nullptr) __trap();  // the launcher attaches the workspace the plan needs
      consume<Op>(ctx, pp, smem, full, empty, turn, stage, resident, resident_full, resident_empty, sp, work, tiles,
                  rank, first_pair, pair_stride);
    }
    // A block leaves only once its peer no longer arrives on its barriers or writes its stages.
    if constexpr (Cluster > 1) arch::cluster_sync();
  }

  // self_load's copies (thread 0 of the consumers): the block's steps in
  // order, each into stage s once its `empty` barrier says every consumer warp
  // has released it; start() fills the ring.
  template <class Op, class Full, class Empty, class Stage> struct self_loader {
    const params<Op>& pp;
    Full full;
    Empty empty;
    Stage stage;
    walker<Op> units;
    unit_of<Op> un{};
    split_piece pc{};
    bool more = false;
    int k = 0, s = 0, phase = 0;
    TESSEL_DEVICE void start() {
      for (int i = 0; i < Op::operand_count; ++i) arch::tma_prefetch_map(&pp.maps[i]);
      more = units.next(un, pc);
      k = more ? pc.k0 : 0;
      for (int i = 0; i < Stages; ++i) next();
    }
    TESSEL_DEVICE void next() {
      while (more && k == pc.k1) {
        more = units.next(un, pc);
        k = more ? pc.k0 : 0;
      }
      if (!more) return;
      arch::mbarrier_wait(empty(s), phase ^ 1);
      arch::mbarrier_arrive_expect_tx(full(s), stage_copy_bytes<Op>::value);
      tma_loader<Op> ld{pp, full(s), 0, false};
      Op::load(ld, stage(s), pp.problem, un.w, k++);
      if (++s == Stages) s = 0, phase ^= 1;
    }
  };
  struct no_loader {};

  template <class Op, class Ctx, class Full, class Empty, class Turn, class Stage, class Res, class ResFull,
            class ResEmpty>
  TESSEL_DEVICE static void consume(Ctx& ctx, const params<Op>& pp, char* smem, Full full, Empty empty, Turn turn,
                                    Stage stage, Res resident, ResFull resident_full, ResEmpty resident_empty,
                                    split_plan sp, long long work, int tiles, int rank, long long first_pair,
                                    long long pair_stride) {
    const typename Op::problem& p = pp.problem;
    constexpr bool alternating = Op::units == 1 && Consumers > 1;
    if constexpr (!self_load) arch::setmaxnreg_inc<consumer_registers>();
    const int me = arch::warp_uniform(ctx.warp() / 4 - (self_load ? 0 : 1));  // so the wgmma descriptors stay uniform
    // self_load: thread 0 copies each stage Stages steps ahead, into the stage
    // every consumer warp has just released (after its own release of it).
    const bool loader = self_load && ctx.thread() == 0;
    auto copies = [&] {
      if constexpr (self_load) {
        self_loader<Op, Full, Empty, Stage> l{
            pp, full, empty, stage, unit_walk::template walk<Op>(p, sp, rank, work, tiles, first_pair, pair_stride)};
        if (loader) l.start();
        __syncwarp();
        return l;
      } else {
        return no_loader{};
      }
    }();
    unit_context<Ctx, typename Op::unit, warp_lanes> u(ctx, alternating ? 0 : me);
    const bool signals = ctx.lane() == 0;  // one arrival per consumer warp (on every block of the cluster)
    const auto release = [&](int s) {
      if (!signals) return;
      if constexpr (Cluster == 1) {
        arch::mbarrier_arrive(empty(s));
      } else {
        arch::mbarrier_arrive(empty(s));
        TESSEL_UNROLL for (int r = 0; r < Cluster; ++r)
          if (r != rank) arch::mbarrier_arrive_remote(arch::peer_address(empty(s), r));
      }
    };
    const auto free_stage = [&](int s) {  // self_load: then the next copies (thread 0), which its warp waits for
      release(s);
      if constexpr (self_load) {
        if (loader) copies.next();
        __syncwarp();
      }
    };
    tma_storer<Op> out{pp, arch::shared_address(smem + epilogue_offset<Op> + me * epilogue_bytes), 1 + me,
                       u.lane() == 0};
    const int thread = me * 128 + u.lane();  // among all consumer threads (a split op's partial)
    int s = 0, phase = 0, turn_phase = 0;
    TESSEL_SM90_TRACED(sm90_trace::rec tr; if (ctx.warp() % 4 == 0 && u.lane() == 0 && me < 2) tr.begin(1 + me);
                       out.tr = &tr;)
    walker<Op> units = unit_walk::template walk<Op>(p, sp, rank, work, tiles, first_pair, pair_stride);
    unit_of<Op> un;
    split_piece pc;
    TESSEL_SM90_SPANNED(sm90_spans::rec spans; if (thread == 0) spans.start();)
    for (long long mine = 0; units.next(un, pc); ++mine) {
      const int steps = pc.k1 - pc.k0;
      if (alternating && mine % Consumers != me) {  // another consumer's: skip its stages in the ring
        const int end = s + steps;
        s = end % Stages;
        phase ^= (end / Stages) & 1;
        continue;
      }
      // Alternating: a unit's mainloop starts once the previous unit's consumer
      // has seen its last stage full, so that every full wait below is at most
      // one phase ahead of its barrier (what a parity wait can tell apart).
      if (alternating && mine > 0) {
        arch::mbarrier_wait(turn(me), turn_phase);
        turn_phase ^= 1;
      }
      const auto pass_turn = [&] {
        if (alternating && u.lane() == 0) arch::mbarrier_arrive(turn((me + 1) % Consumers));
      };
      if (steps == 0) pass_turn();
      typename Op::state st;
      int r = 0;
      if constexpr (has_resident<Op>) {  // this unit's resident operands have landed
        r = int(mine % resident_slots);
        Op::start(u, st, p, un.w, resident(r));
        arch::mbarrier_wait(resident_full(r), int(mine / resident_slots) & 1);
      } else {
        Op::start(u, st, p, un.w);
      }
      int previous = -1;
      TESSEL_SM90_TRACED(tr.at('S', int(mine), 0);)
      for (int k = pc.k0; k < pc.k1; ++k) {
        // Before the wait (the stage's addresses only): what it computes is
        // ready when the stage lands (H100: +0.4% mean, bench/notes/cuda_gemm.md).
        describe_step<Op>(u, st, stage(s), p, un.w, k);
        arch::mbarrier_wait(full(s), phase);
        TESSEL_SM90_TRACED(tr.at('f', int(mine), k);)
        if (k == pc.k1 - 1) pass_turn();
        Op::compute(u, st, stage(s), p, un.w, k);
        Op::template retire<1>(u, st);  // the MMAs of step k − 1 are done: free its stage
        TESSEL_SM90_TRACED(tr.at('r', int(mine), k);)
        if (previous >= 0) free_stage(previous);
        previous = s;
        if (++s == Stages) s = 0, phase ^= 1;
      }
      Op::template retire<0>(u, st);
      TESSEL_SM90_TRACED(tr.at('R', int(mine), 0);)
      if (previous >= 0) free_stage(previous);
      if constexpr (has_resident<Op>)
        if (signals) arch::mbarrier_arrive(resident_empty(r));  // its slot may take the unit after next
      if constexpr (Split) {
        if (pc.role != split_piece::whole) {  // a piece of a split unit: its blocks' partials meet
          const int block = ctx.block_x();
          int w0 = 0, w1 = 0;  // the tile's columns this block adds up and stores
          const bool scatter = scatters<Op>() && pp.out_tma;
          if (scatter) {  // a share of the tile's panels per block of the unit
            constexpr int cols = tma_storer<Op>::template panel_cols<partial_tile<Op>, output_type<Op>>;
            constexpr int panels = partial_tile<Op>::cols / cols;
            static_assert(cols % 32 == 0, "sm90 split: a window is whole 32-column spans (sm90_partials::inside)");
            const int n = sp.unit_blocks(), i = block % n;
            w0 = cols * (panels * i / n), w1 = cols * (panels * (i + 1) / n);
          } else if (pc.role == split_piece::finishes) {  // the finishing block, all of it
            w1 = partial_tile<Op>::cols;
          }
          // A lane whose values all lie in rows past C's moves no partials (they are never stored).
          const bool live = partials<Op>::live(u.lane(), Op::partial_rows(u, p, un.w));
          if (scatter || pc.role == split_piece::contributes) {  // what the other blocks add
            float* const slot = pp.partials + (long long)block * partial_floats<Op>;
            if (live) partials<Op>::save(Op::partial(st), slot, thread, w0, w1);
            arch::named_barrier<Consumers * 128>(split_barrier);
            if (thread == 0) arch::flag_release(pp.flags + block, 1);
          }
          if (w0 == w1) continue;  // nothing here to add up or store
          const int first = block - block % sp.unit_blocks(), end = first + sp.unit_blocks();  // the unit's blocks
          if (thread == 0)
            for (int c = first; c < end; ++c)
              if (c != block) arch::flag_wait(pp.flags + c);
          arch::named_barrier<Consumers * 128>(split_barrier);
          for (int c = first; c < end && live; ++c)  // each consumer thread its chunks, from global memory
            if (c != block)
              partials<Op>::add_global(Op::partial(st), pp.partials + (long long)c * partial_floats<Op>, thread, w0,
                                       w1);
          out.columns(w0, w1);  // (a split block runs this one piece: nothing after it takes the whole tile)
        }
      }
      TESSEL_SM90_TRACED(out.unit = int(mine);)
      if (un.store) Op::finish(u, out, st, p, un.w);
      TESSEL_SM90_TRACED(tr.at('F', int(mine), 0);)
      TESSEL_SM90_SPANNED(if (thread == 0) spans.unit_done();)
    }
    if (out.issuer) arch::bulk_wait<0>();  // every store of this block done before it exits
    TESSEL_SM90_SPANNED(if (thread == 0) spans.exit();)
    TESSEL_SM90_TRACED(tr.end();)
  }
};

}  // namespace tessel::cuda
