// tessel/hip/attention_config.hpp — the CDNA attention configuration (contract: core/attention_contract.hpp).
#pragma once
#include "tessel/core/shared_tile.hpp"
#include "tessel/hip/atom/mfma_32x32x8.hpp"

namespace tessel::hip {

// Attention (bf16 / fp16): 64 query rows per block, 2 waves of 32 rows (one
// MFMA atom high), K/V tiles of 32 keys in 2 stages. Every operand is kept
// K-contiguous in LDS so the MFMA fragment reads are the 8-byte fast paths:
// Q and P row-major, Kᵀ and V column-major, rows padded by 8 elements.
// LDS at head_dim 128: 17 + 2·(8.5 + 10) + 5 KiB ≈ 60 KiB of the 64.
template <class T, int D> struct cdna_attention_config {
  using atom = mfma_32x32x8<T>;
  using smem_type = T;
  static constexpr int BQ = 64, BKV = 32, warps = 2, stages = 2, pad = 8;
  // Registers: O (D/2 fp32), S (16), m and l (16 each), the causal-mask rows
  // and the LDS fragments in flight take 192–195 VGPRs at head_dim 64 and 228–251
  // at 128 (gfx90a / gfx940): 2 waves per SIMD (256 each) hold them without
  // scratch; 3 waves (168) spill at both head dims. c·max is recomputed each
  // tile rather than kept (16 more VGPRs: the hd128 kernel spilled on gfx940).
  static constexpr int waves_per_simd = 2;
  static constexpr bool keep_scaled_max = false;
  using layout_q = row_major<BQ, D, pad>;
  using layout_kt = col_major<D, BKV, pad>;
  using layout_v = col_major<BKV, D, pad>;
  using layout_p = row_major<BQ, BKV, pad>;
};

}  // namespace tessel::hip
