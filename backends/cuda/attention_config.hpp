// tessel/cuda/attention_config.hpp — the CUDA attention configurations (contract:
// core/attention_contract.hpp).
//
// sm80: 128 query rows per block,
// K/V tiles of 64 keys in 2 stages, every shared tile in the swizzle128 layout
// so that Q·Kᵀ and P·V read their fragments with ldmatrix; P stays in registers
// (p_in_registers: the C fragment of mma_m16n8k16 is its A fragment).
// head_dim 64: 4 warps of 32 rows (two atoms high, so every K/V fragment read
// by ldmatrix feeds two mma.sync: shared bandwidth bounded 16-row warps);
// 16 + 2·(8 + 8) = 48 KiB. head_dim 128: 8 warps of 16 rows — 32-row warps
// need a 32 × 128 fp32 accumulator and spill past 255 registers (measured
// slower, bench/notes/cuda_attention.md); 32 + 2·(16 + 16) = 96 KiB.
#pragma once
#include <type_traits>

#include "tessel/core/attention_contract.hpp"
#include "tessel/core/scope.hpp"
#include "tessel/cuda/atom/mma_m16n8k16.hpp"
#include "tessel/cuda/atom/wgmma.hpp"
#include "tessel/cuda/schedule_sm90.hpp"
#include "tessel/cuda/swizzle.hpp"

namespace tessel::cuda {

template <class T, int D> struct sm80_attention_config {
  using atom = mma_m16n8k16<T>;
  using smem_type = T;
  // Warps of 32 rows at head_dim 64, of 16 rows at 128 (see the header).
  static constexpr int BQ = 128, BKV = 64, warps = D >= 128 ? 8 : 4, stages = 2;
  static constexpr bool p_in_registers = true;
  using layout_q = swizzle128<BQ, D, true>;    // A: K (= D) contiguous
  using layout_kt = swizzle128<D, BKV, false>; // B = Kᵀ: K (= D) contiguous, as K's rows are
  using layout_v = swizzle128<BKV, D, true>;   // B: N (= D) contiguous
  using layout_p = swizzle128<BQ, BKV, false>;  // unused: P stays in registers
};


// sm_90a, the default: the Hopper TMA schedule (schedule_sm90.hpp), cooperative.
// A producer warpgroup (one thread issuing TMA) fills a ring of K/V stages and,
// once per work unit, its resident Q slot; Consumers warpgroups (unit
// = group_scope<4>) each own 64 whole query rows of the BQ = 64·Consumers block,
// with their own softmax state, masks and epilogue, and share each K/V stage.
// Per step a warpgroup issues S = Q·Kᵀ (m64n{BKV}k16, both from shared), waits
// for it, runs the softmax, and issues O += P·V (m64n{D}k16, P from
// registers) asynchronously: it runs on the tensor cores while the warpgroup
// starts the next step. The two warpgroups take turns issuing their GEMMs
// (take_turns, FlashAttention-3's ping-pong; ops/attention/kernel.hpp): one's
// P·V and next S are issued while the other runs its softmax. Left to the warp
// schedulers instead, both tended to issue at once and run their softmax at
// once (H100, 2026-12-06: turns +5-13%, bench/notes/cuda_attention.md Run 8). The atom is wgmma n64; a
// row of n64 tiles issues as one wider instruction (tile_ops_sm90.hpp). Out
// and LSE are stored through the policy (any strides). Needs operands a tensor
// map can describe (16-byte aligned base and strides); other calls take the
// ring configuration below (attention.cu).
// Grid, head_dim 128, causal calls: one block per work unit (not persistent),
// so one resident Q slot. The hardware's block scheduler hands each free SM the
// next unit in the op's order (a list schedule): head by head, each head's query
// tiles last to first. With a causal mask the units' costs differ up to
// q_len / BQ times; a persistent grid's fixed stride over them left blocks up
// to 3× apart (bench/notes/cuda_attention.md Run 7; again Run 14, one run:
// −7 % at seq 1k, −31 % at 16k), and dealt in one heaviest-first group they ran
// −14 / −9 / −4.5 % at seq 1k / 4k / 16k (Run 14, three runs; likely K/V
// re-read from HBM at every level, not measured).
// At head_dim 128 two Q slots leave room for two 128-key stages only; on
// 64-key stages the persistent grid ran 5-20 % slower.
// Grid, head_dim 128, calls without a causal mask (`non_causal`): persistent
// with one Q slot, 3 stages, 192 + 32 KiB; head by head on the fixed stride
// (units of equal cost). The next unit's Q is copied while a unit's epilogue
// runs. H100, 2026-12-08, three runs against one block per unit (Run 14):
// +6.9-8.5 % at seq 1k, +1.6-2.7 % at 4k, −0.1 to +0.8 % at 16k.
// Grid, head_dim 64: persistent (one block per SM, two Q slots: the next unit's
// Q and first K/V tiles load while a unit ends), 5 stages, 160 + 32 KiB. Calls
// without a causal mask take `non_causal`: head by head on a fixed stride
// (H100, 2026-12-06, against one block per unit: +14 % at seq 1k, +5 % at 4k,
// level at 16k; Run 9). Causal calls take the units heaviest first in one
// group of every head (HeaviestFirstBytes = heaviest_first_all_heads, core/
// attention_contract.hpp; ops/attention/unit_order.hpp: level by level, the
// last query tiles first), dealt in
// rounds alternately forwards and backwards (core/pipeline.hpp dealt_unit), so
// each block's units sum to within one unit of the mean. H100, 2026-12-07,
// four runs against one block per unit head by head (Run 13): +5.6-7.7 % at
// seq 1k, +1.6-6.4 % at 4k, −0.5 to −1.0 % at 16k (where every level re-reads
// K/V from HBM: a level's units are different heads).
// HeaviestFirstBytes between 0 and heaviest_first_all_heads: groups of heads
// whose K and V fit in that many bytes. On one block per unit (the hardware's list
// schedule) the model (tests/attention_order_test.cpp) said 24 MiB groups
// would shorten the causal tail by 3-6 %; measured (Run 13, medians at seq
// 1k / 4k / 16k) they ran −5.2 / −2.7 / −4.0 % at hd 64 and −4.6 / +1.8 / 0.0 %
// at hd 128, 4 MiB groups (one run) −2.3 / +1.2 / −3.9 % at hd 64: not used.
// Shared memory: Stages × BKV·D·4 bytes of K/V + BQ·D·2 of Q:
// hd128, BKV 128, 3 stages: 192 + 32 KiB (of 227); hd64, BKV 128, 5 stages
// and two Q slots: 160 + 32 KiB. A stage is freed one step after its use (its
// P·V is still in flight), so 2 stages left no load in flight ahead of the
// consumers (hd128 at 0.51-0.54× cuDNN in Run 7, hd64 on 3 stages at
// 0.69-0.73×).
// Consumers = 3 (an option at head_dim 64, not timed yet): BQ 192, three
// warpgroups taking turns in a ring beside the producer (152 registers a
// consumer lane: no spill at hd 64; at hd 128 O alone takes 64: not tried), 5
// stages and two Q slots in 160 + 48 KiB — FlashAttention-3's hd 64 block.
// QSlots: Q's resident slots (sm90_tma_schedule's ResidentSlots): two in a
// persistent grid at head_dim 64, else one (at head_dim 128, 3 stages and two
// slots would not fit). With one slot, copying a unit's first K/V stages before
// its Q (so that only Q waits for the unit before to retire) measured level
// (Run 14: −1.3 to +1.6 % at seq 1k): not built.
template <class T, int D, int BKV_ = 128, int Stages = (D >= 128 ? 3 : 5), int Consumers = 2,
          bool Persistent = (D < 128), bool Turns = true,
          long long HeaviestFirstBytes = (D < 128 ? heaviest_first_all_heads : 0),
          int QSlots = (Persistent && D < 128 ? 2 : 1)>
struct sm90_tma_attention_config {
  using atom = wgmma_m64k16<T, 64>;
  using smem_type = T;
  using unit = group_scope<4>;
  // A producer warpgroup beside the consumers, three of them too (Q is resident: never self_load).
  using schedule = sm90_tma_schedule<Stages, Consumers, 1, 0, Persistent, false, false, QSlots, false>;
  static constexpr int warps = 4 * Consumers, BQ = 64 * Consumers, BKV = BKV_, stages = Stages;
  static constexpr bool p_in_registers = true, take_turns = Turns;
  using layout_q = swizzle128<BQ, D, true>;
  using layout_kt = swizzle128<D, BKV, false>;
  using layout_v = swizzle128<BKV, D, true>;
  using layout_p = swizzle128<BQ, BKV, false>;  // unused: P stays in registers
  static constexpr long long heaviest_first_bytes = HeaviestFirstBytes;
  // Calls without a causal mask: a persistent grid, head by head on the fixed
  // stride (hd 64: 5 stages and two Q slots; hd 128: the same stages, one slot).
  using non_causal = sm90_tma_attention_config<T, D, BKV_, (Persistent || D >= 128 ? Stages : 5), Consumers, true,
                                               Turns, 0, (Persistent ? QSlots : D < 128 ? 2 : 1)>;
};

// sm_90a on the ring schedule (sm90_ring_attention policy): the same kernel on
// per-warp wgmma. Every warp owns 16 query rows, so each
// warpgroup owns 64 and Q·Kᵀ (m64n128k16, both operands from shared memory)
// and P·V (m64nDk16, P from registers) are one wgmma per 16-wide K slice
// (tile_ops_sm90.hpp). 8 warps = 2 warpgroups, BQ 128, BKV 128, 2 stages, one
// block per SM (hd128: 234 registers, 32 + 2·(32 + 32) = 160 KiB). Measured on
// the H100 (2026-11-22) against BKV 64 with two blocks per SM (≤ 128
// registers), BKV 64 with 3 stages and 12 warps (BQ 192): this one is the
// fastest at seq ≥ 4k, by 1-8 %.
// The tuning values are template parameters (a variant to time is another
// instantiation, e.g. sm90_attention_config<T, D, 8, 64, 3>).
template <class T, int D, int Warps = 8, int BKV_ = 128, int Stages = 2, int BlocksPerSM = 1>
struct sm90_attention_config {
  using atom = mma_m16n8k16<T>;
  using smem_type = T;
  static constexpr int warps = Warps, BQ = 16 * warps, BKV = BKV_;
  static constexpr int stages = Stages, blocks_per_sm = BlocksPerSM;
  static constexpr bool p_in_registers = true;
  using layout_q = swizzle128<BQ, D, true>;
  using layout_kt = swizzle128<D, BKV, false>;
  using layout_v = swizzle128<BKV, D, true>;
  using layout_p = swizzle128<BQ, BKV, false>;  // unused: P stays in registers
};

}  // namespace tessel::cuda
