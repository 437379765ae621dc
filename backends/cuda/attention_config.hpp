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
#include "tessel/cuda/atom/mma_m16n8k16.hpp"
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


// sm_90a: the same kernel on wgmma. Every warp owns 16 query rows, so each
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
