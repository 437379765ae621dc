// tessel/hip/gemm_config.hpp — the CDNA GEMM configurations (contract: core/gemm_contract.hpp).
#pragma once
#include "tessel/core/shared_tile.hpp"
#include "tessel/hip/atom/mfma_32x32x8.hpp"
#include "tessel/hip/atom/scalar.hpp"

namespace tessel::hip {

// bf16 / fp16: 128×128×16 blocks, 4 waves in 2×2, each 64×64 = 2×2 MFMA atoms
// (64 fp32 accumulators per lane), 2 stages of 12 KiB. Both operands are kept
// K-contiguous in LDS whatever their global majorness; 8 elements (16 bytes) of
// padding per line keep 16-byte stores aligned and shift rows across banks.
// Why BK = 16: the generic K loop copies global -> LDS synchronously, so global
// latency is hidden only by other blocks on the CU; 24 KiB of LDS per block
// lets 2 blocks share a CU's 64 KiB (BK = 32 would allow one), and ~170 VGPRs
// allow 2–3 waves per SIMD. Each stage has one 16-byte vector per thread per operand.
template <class TIn> struct cdna_gemm_config {
  using atom = mfma_32x32x8<TIn>;
  using smem_type = TIn;
  static constexpr int BM = 128, BN = 128, BK = 16, warps_m = 2, warps_n = 2, stages = 2;
  static constexpr int pad = 8;
  template <bool KContiguous> using layout_a = row_major<BM, BK, pad>;
  template <bool NContiguous> using layout_b = col_major<BK, BN, pad>;
};
// fp32: the 64-lane scalar atom (a lane owns one row of a 64×32 warp tile):
// A is kept M-contiguous (lanes read consecutive rows), B N-contiguous (all
// lanes read the same element: a broadcast).
template <> struct cdna_gemm_config<float> {
  using atom = scalar;
  using smem_type = float;
  static constexpr int BM = 128, BN = 64, BK = 16, warps_m = 2, warps_n = 2, stages = 2;
  static constexpr int pad = 4;
  template <bool KContiguous> using layout_a = col_major<BM, BK, pad>;
  template <bool NContiguous> using layout_b = row_major<BK, BN, pad>;
};

}  // namespace tessel::hip
