#!/usr/bin/env python3
"""bench/sm90_parts.py — copies of the source tree with parts of the sm90 GEMM pipeline taken out, for timing.

Usage: python3 bench/sm90_parts.py DEST [PART ...]   (run from the repository root)

Writes DEST/<part>/ for each part (default: nomma noload none aonly), a copy
of the tree (no build folders, .git, .devdeps or bench/results) with its edits:
  nomma  — the consumers wait for each stage and release it, but issue no
           wgmma: the loads alone (and an epilogue of zeros);
  noload — the producer arrives on `full` without copying: the MMAs alone,
           on stale stages;
  none   — neither: barriers and epilogue only;
  aonly  — only A's tile is copied (B's stays stale), the full barrier
           expecting A's bytes: the MMAs with a third of the load bytes;
  pairs  — not a removal: the default configs run cluster pairs
           (B multicast), correct C;
  wg     — not a removal: a stage is released by one arrival per consumer
           warpgroup and block (warp r of each warpgroup arrives on block r's
           empty barrier, after its own retire<1>), not one per warp; correct C;
  s4     — not a removal: 16-bit C on 4 stages and 2 × 16 KiB of epilogue
           staging (fp32 C's ring), correct C.
  order  — not a removal: a persistent grid of one block per SM takes its
           units in the order of the table bench/sm90_l2_sides.cu wrote to
           backends/cuda/sm90_unit_order.inc (device step `l2sides`; it must
           exist): single blocks by L2 partition, pairs (with `pairs`) as single
           blocks are placed; by %smid, so only for timing on the GPU that
           wrote the table (a block that lands elsewhere computes a wrong tile,
           which tessel-bench reports); correct C.
  wavesync — not a removal: each block's producer waits, before each work
           unit after its first, until every block of the grid has reached
           that unit (a counter in global memory per group, never reset: a
           block's ticket says its generation; blocks with fewer units arrive
           without waiting at the end), so that blocks reading the same tiles
           issue their copies together and the L2 request coalescer merges
           them; only for a grid of 132 single blocks (the H100's persistent
           grid; else it does nothing); correct C.
  quadsync — the same in groups of 4 consecutive blocks (their units are 4
           consecutive tiles, which share B's tile under the raster). The
           two sync parts do not combine with each other.
  f3     — not a removal: fp32 C on 3 stages and 2 × 32 KiB of epilogue
           staging (the 16-bit-C ring); correct C.
  lead3  — not a removal: where the ring has 4 stages, the producer stays at
           most 3 stages ahead once a unit is past its 4th step (it also
           waits for the release of the load 3 before); correct C.
  split  — with `pairs` (`pairs+split`): a pair's producer copies its own A
           as soon as its own consumers free a stage (a second empty
           barrier per stage, one arrival per local consumer warp) and its
           half of B once both blocks' consumers have; correct C.
  selfload — not a removal: the 2-consumer GEMM configs (single blocks,
           unsplit, with epilogue staging: not attention's) drop the producer
           warpgroup and load their own stages as the 3-consumer one does
           (schedule_sm90.hpp's self_load; 256 threads, no setmaxnreg);
           correct C. Session 32's `sl2`. For tessel-bench builds: the schedule
           tests' alternating configuration would fail its static_assert.
  fix2   — not a removal: the split plan's cost model charges 2 steps per
           partial, not 4 (more pieces where units are few: 16 units of 64
           steps in 8, not 5); correct C. With the partials copied through the
           finisher's ring (session 34's `ring`, taken out after it lost 1.6-3.3%
           on an H200, 2026-11-29), `ring+fix2` lost 15-16% at 128 × 4096² (bf16 C).
Parts combine with '+': `nomma+pairs` is the loads alone on cluster pairs
(written to DEST/nomma_pairs, named nomma_pairs). The removals' C is wrong (tessel-bench prints FAIL): they are for timing only, as the
device step `parts` does (bench/device.sh). Each edit must match the source
exactly once; otherwise this stops with the line it did not find, so a change
to the schedule cannot turn an experiment into a silent no-op. Prints
`name@DEST/name:` specs joined by ';' (for TESSEL_DEVICE_GEMM_VARIANTS).
"""
import pathlib
import shutil
import sys

SCHEDULE = "backends/cuda/schedule_sm90.hpp"
KERNEL = "ops/gemm/kernel.hpp"
NO_MMA = (SCHEDULE, "        Op::compute(u, st, stage(s), p, un.w, k);\n", "        // sm90_parts: no MMA\n")
NO_LOAD = [
    (SCHEDULE, "            arch::mbarrier_arrive_expect_tx(full(s), bytes);\n",
     "            arch::mbarrier_arrive(full(s));  // sm90_parts: no copies\n"),
    (SCHEDULE, "            Op::load(ld, stage(s), p, un.w, k);\n", "            (void)ld;\n"),
]
A_ONLY = [
    (KERNEL, "    ld.template copy<1>(s.b, at_layer(p.b, p.batch_b, w.layer), k * BK, w.bn * BN, w.layer);\n",
     "    // sm90_parts: B not copied\n"),
    (SCHEDULE, "        constexpr std::uint32_t bytes = stage_copy_bytes<Op>::value;\n",
     "        constexpr std::uint32_t bytes = operand_bytes<Op, 0>;  // sm90_parts: A only\n"),
]
CONFIG = "backends/cuda/gemm_config.hpp"
# The default config's Cluster (pairs) and its 16-bit-C ring (s4) are edited apart, so that both combine in any order.
PAIRS = [(CONFIG, "false, 1,\n", "false, 2,  // sm90_parts: pairs\n")]
STAGES4 = [(CONFIG, "sizeof(TOut) == 4 ? 4 : 3,", "4, /* sm90_parts: s4 */"),
           (CONFIG, "sizeof(TOut) == 4 ? 16 : 32,", "16,")]
PER_WARPGROUP = [
    (SCHEDULE, "        arch::mbarrier_init(empty(s), consumer_warps * Cluster);\n",
     "        arch::mbarrier_init(empty(s), consumer_warps / 4 * Cluster);  // sm90_parts: wg\n"),
    (SCHEDULE, """    const auto release = [&](int s) {
      if (!signals) return;
      if constexpr (Cluster == 1) {
        arch::mbarrier_arrive(empty(s));
      } else {
        arch::mbarrier_arrive(empty(s));
        TESSEL_UNROLL for (int r = 0; r < Cluster; ++r)
          if (r != rank) arch::mbarrier_arrive_remote(arch::peer_address(empty(s), r));
      }
    };
""", """    const int target = ctx.warp() % 4;  // sm90_parts wg: warp r of a warpgroup arrives on block r's empty barrier
    const auto release = [&](int s) {
      if (!signals || target >= Cluster) return;
      if (target == rank) arch::mbarrier_arrive(empty(s));
      else arch::mbarrier_arrive_remote(arch::peer_address(empty(s), target));
    };
""")]
ORDER_TABLE = "backends/cuda/sm90_unit_order.inc"
ORDER = [
    (SCHEDULE, '#include "tessel/cuda/tensor_map.hpp"\n',
     '#include "tessel/cuda/tensor_map.hpp"\n#include "tessel/cuda/sm90_unit_order.inc"  // sm90_parts: order\n'),
    (SCHEDULE, "    const long long first_pair = ctx.block_x() / Cluster, pair_stride = ctx.grid_x() / Cluster;\n",
     """    long long first_pair = ctx.block_x() / Cluster;
    const long long pair_stride = ctx.grid_x() / Cluster;
    if (!Split && Cluster <= 2 && ctx.grid_x() == (Cluster == 1 ? sm90_side_sm_count : sm90_pair_block_count)) {
      unsigned sm;  // sm90_parts: order
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      first_pair = (Cluster == 1 ? sm90_side_rank : sm90_pair_rank)[sm & 255];
    }
"""),
]
# wavesync / quadsync: the producer's unit loop, with a group barrier in global memory before each unit after the first.
SYNC_HELPER = (SCHEDULE, "template <int Stages, int Consumers, int Cluster = 1,", """// sm90_parts sync: blocks aligned at each unit start (a counter per group, never reset).
static __device__ unsigned sm90_wave_sync_count[64];
static __device__ __forceinline__ void sm90_wave_arrive(unsigned* c, unsigned members, bool wait) {
  const unsigned ticket = atomicAdd(c, 1u), target = (ticket / members + 1) * members;
  if (wait)
    while (int(*(volatile unsigned*)c - target) < 0) {
    }
}
template <int Stages, int Consumers, int Cluster = 1,""")


def unit_sync(members, slot):
    return [SYNC_HELPER,
            (SCHEDULE, "        for (long long mine = 0; units.next(un, pc); ++mine) {\n",
             f"""        const bool wsync = Cluster == 1 && !Split && !has_resident<Op> && ctx.grid_x() == 132;  // sm90_parts sync
        unsigned* const wcount = sm90_wave_sync_count + ({slot});
        const long long wmax = (work + ctx.grid_x() - 1) / ctx.grid_x();
        long long mine = 0;
        for (; units.next(un, pc); ++mine) {{
          if (wsync && mine > 0) sm90_wave_arrive(wcount, {members}, true);
"""),
            (SCHEDULE, "        TESSEL_SM90_TRACED(tr.end();)\n",
             f"""        if (wsync)  // every block arrives wmax − 1 times a launch
          for (long long d = mine > 0 ? mine : 1; d < wmax; ++d) sm90_wave_arrive(wcount, {members}, false);
        TESSEL_SM90_TRACED(tr.end();)
""")]


# selfload: the 2-consumer GEMM configs load their own stages too (no producer warpgroup), as 3 consumers do.
SELF_LOAD = [(SCHEDULE, "static constexpr bool self_load = Consumers == 3;",
              "static constexpr bool self_load =  // sm90_parts: selfload\n"
              "      Consumers == 3 || (Consumers == 2 && EpilogueKiB > 0 && Cluster == 1 && !Split);")]
# f3: fp32 C on the 16-bit-C ring.
FP32_3STAGES = [(CONFIG, "sizeof(TOut) == 4 ? 4 : 3,", "3, /* sm90_parts: f3 */"),
                (CONFIG, "sizeof(TOut) == 4 ? 16 : 32,", "32,")]
# lead3: the producer at most 3 stages ahead past a unit's 4th step (4-stage rings only).
LEAD3 = [(SCHEDULE, """            arch::mbarrier_wait(empty(s), phase ^ 1);
            TESSEL_SM90_TRACED(tr.at('e', int(mine), k);)
""", """            arch::mbarrier_wait(empty(s), phase ^ 1);
            if constexpr (Stages == 4) {  // sm90_parts lead3: the release of the load 3 before, too
              if (k - pc.k0 >= 4) arch::mbarrier_wait(empty(s + 1 == Stages ? 0 : s + 1), s + 1 == Stages ? phase : phase ^ 1);
            }
            TESSEL_SM90_TRACED(tr.at('e', int(mine), k);)
""")]
# split: pairs' own A on the local release, their half of B on the cluster's (empty_local after the other barriers).
SPLIT = [
    (SCHEDULE, "  static constexpr int barrier_bytes = (2 * Stages + Consumers + (has_resident<Op> ? 2 * resident_slots : 0)) * 8;",
     "  static constexpr int local_base = 2 * Stages + Consumers + (has_resident<Op> ? 2 * resident_slots : 0);  // sm90_parts split\n"
     "  template <class Op> static constexpr int barrier_bytes = (local_base<Op> + Stages) * 8;"),
    (SCHEDULE, """    bool multicast;
    template <int I, class T, int R, int C, bool CC, class Src>""", """    bool multicast;
    std::uint32_t pair_empty = 0;  // sm90_parts split: waited before the paired operand's copies
    int pair_parity = 0;
    template <int I, class T, int R, int C, bool CC, class Src>"""),
    (SCHEDULE, """      } else if constexpr (Cluster > 1 && I == paired_operand_of<Op>::value) {
""", """      } else if constexpr (Cluster > 1 && I == paired_operand_of<Op>::value) {
        if (pair_empty) arch::mbarrier_wait(pair_empty, pair_parity);
"""),
    (SCHEDULE, """        arch::mbarrier_init(empty(s), consumer_warps * Cluster);
      }
""", """        arch::mbarrier_init(empty(s), consumer_warps * Cluster);
        if constexpr (Cluster > 1) arch::mbarrier_init(bars + 8 * (local_base<Op> + s), consumer_warps);
      }
"""),
    (SCHEDULE, """            arch::mbarrier_wait(empty(s), phase ^ 1);
            TESSEL_SM90_TRACED(tr.at('e', int(mine), k);)
            arch::mbarrier_arrive_expect_tx(full(s), bytes);
            tma_loader<Op> ld{pp, full(s), rank, un.multicast};
""", """            if constexpr (Cluster > 1) arch::mbarrier_wait(bars + 8 * (local_base<Op> + s), phase ^ 1);  // own consumers
            else arch::mbarrier_wait(empty(s), phase ^ 1);
            TESSEL_SM90_TRACED(tr.at('e', int(mine), k);)
            arch::mbarrier_arrive_expect_tx(full(s), bytes);
            tma_loader<Op> ld{pp, full(s), rank, un.multicast};
            if constexpr (Cluster > 1) ld.pair_empty = empty(s), ld.pair_parity = phase ^ 1;
"""),
    (SCHEDULE, """        arch::mbarrier_arrive(empty(s));
        TESSEL_UNROLL for (int r = 0; r < Cluster; ++r)
""", """        arch::mbarrier_arrive(empty(s));
        arch::mbarrier_arrive(empty(s) + 8 * (local_base<Op> - Stages));  // sm90_parts split: empty_local(s)
        TESSEL_UNROLL for (int r = 0; r < Cluster; ++r)
"""),
]


# fix2: the cost model's steps per partial.
FIXUP2 = [(SCHEDULE, "static constexpr int fixup_steps = 4,",
           "static constexpr int fixup_steps = 2 /* sm90_parts: fix2 */,")]


PARTS = {"nomma": [NO_MMA], "noload": NO_LOAD, "none": [NO_MMA] + NO_LOAD, "aonly": A_ONLY, "pairs": PAIRS,
         "wg": PER_WARPGROUP, "s4": STAGES4, "order": ORDER,
         "wavesync": unit_sync("unsigned(ctx.grid_x())", "0"), "quadsync": unit_sync("4", "ctx.block_x() / 4"),
         "f3": FP32_3STAGES, "lead3": LEAD3, "split": SPLIT, "selfload": SELF_LOAD, "fix2": FIXUP2}
DEFAULT = ["nomma", "noload", "none", "aonly"]
SKIP = {".git", ".devdeps", "results"}


def ignore(folder, names):
    return [n for n in names if n in SKIP or n.startswith("build")]


def make(dest, part):
    name = part.replace("+", "_")
    tree = dest / name
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(".", tree, ignore=ignore)
    for path, old, new in [edit for name in part.split("+") for edit in PARTS[name]]:
        f = tree / path
        text = f.read_text()
        if text.count(old) != 1:
            sys.exit(f"sm90_parts.py: {part}: {path} holds {text.count(old)} copies of {old.strip()!r}, expected 1")
        f.write_text(text.replace(old, new))
    return f"{name}@{tree}:"


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    dest = pathlib.Path(argv[0]).resolve()
    here = pathlib.Path.cwd()
    if dest == here or (dest.is_relative_to(here) and not dest.relative_to(here).parts[0].startswith("build")):
        sys.exit(f"sm90_parts.py: DEST {argv[0]} lies inside the tree it copies; use a folder outside it "
                 "or one whose first component starts with 'build' (the copies skip those)")
    parts = argv[1:] or DEFAULT
    unknown = [p for p in parts if any(name not in PARTS for name in p.split("+"))]
    if unknown:
        sys.exit(f"sm90_parts.py: unknown part(s) {unknown}; known: {', '.join(PARTS)}")
    if not pathlib.Path(SCHEDULE).is_file():
        sys.exit("sm90_parts.py: run from the repository root")
    if any("order" in p.split("+") for p in parts) and not pathlib.Path(ORDER_TABLE).is_file():
        sys.exit(f"sm90_parts.py: part 'order' needs {ORDER_TABLE} (bench/sm90_l2_sides.cu, device step l2sides)")
    print(";".join(make(dest, p) for p in parts))


if __name__ == "__main__":
    main(sys.argv[1:])
