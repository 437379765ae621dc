// tessel/hip/policy_cdna.hpp — the HIP policy for CDNA2 (gfx90a) and CDNA3 (gfx940…942).
//
// bf16 / fp16 GEMM runs on the 32×32×8 MFMA atom, fp32 on the 64-lane scalar
// atom; the tile ops are the CDNA fast paths (tile_ops_cdna.hpp) over the
// generic ones, the context and launcher are launch.hpp's. The two chips share
// every line: only the MFMA mnemonic differs, and the compiler picks it.
#pragma once
#include "tessel/hip/launch.hpp"
#include "tessel/hip/tile_ops_cdna.hpp"

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
  using layout_q = row_major<BQ, D, pad>;
  using layout_kt = col_major<D, BKV, pad>;
  using layout_v = col_major<BKV, D, pad>;
  using layout_p = row_major<BQ, BKV, pad>;
};

struct cdna_policy : cdna_tile_ops {
  static constexpr int lanes = wave_lanes;
  using context = hip::context;
  template <class TIn> using gemm_config = cdna_gemm_config<TIn>;
  static constexpr bool attention_fp32 = false;  // fp32 attention is CPU-only (refused by the API)
  template <class T, int D> using attention_config = cdna_attention_config<T, D>;
};

}  // namespace tessel::hip
