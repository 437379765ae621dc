// tessel/cuda/policy_sm80.hpp — the CUDA policy for sm_80 and newer (A100, H100 via mma.sync).
//
// bf16 / fp16 GEMM runs on the mma_m16n8k16 tensor-core atom with the fast
// paths of tile_ops_sm80.hpp; fp32 runs on the 32-lane scalar atom (FFMA)
// through the generic tile ops, since tf32 tensor cores miss the fp32
// tolerance. The context and launcher are launch.hpp's.
//
// bf16 / fp16 block: 128 × 256 × 64, 8 warps as 2 × 4, each warp a 64 × 64
// accumulator (4 × 8 atoms, 128 fp32 registers per lane); 3 stages of
// 16 + 32 KiB in swizzle128 tiles, 144 KiB, within an A100's 164 KiB. On
// Hopper the sm90 policy (wgmma) replaces this one; measured there on this
// mma.sync path (H200, 4096³ bf16): 339 TFLOP/s, 354 for 256 × 128, 380 for
// 128 × 128 with two blocks per SM — a shape that would fit only once in an
// A100's shared memory, hence not the default.
#pragma once
#include <type_traits>

#include "tessel/cuda/atom/scalar.hpp"
#include "tessel/cuda/launch.hpp"
#include "tessel/cuda/tile_ops_sm80.hpp"

namespace tessel::cuda {

template <class TIn> struct sm80_gemm_config {
  static_assert(sizeof(TIn) == 0, "sm80 policy: no GEMM configuration for this input type (fp32, fp16, bf16 only)");
};

// fp32: a plain SIMT GEMM. 64 × 64 × 16 block, 4 warps of 32 × 32; A rows are
// read one per lane (padded so a K-contiguous tile has no bank conflicts), B
// values are broadcast to the warp.
template <> struct sm80_gemm_config<float> {
  using atom = scalar;
  using smem_type = float;
  static constexpr int BM = 64, BN = 64, BK = 16, warps_m = 2, warps_n = 2, stages = 2;
  template <bool KContiguous>
  using layout_a = std::conditional_t<KContiguous, row_major<BM, BK, 1>, col_major<BM, BK>>;
  template <bool NContiguous>
  using layout_b = std::conditional_t<NContiguous, row_major<BK, BN>, col_major<BK, BN, 1>>;
};

// A 16-bit tensor-core GEMM configuration: the mma_m16n8k16 atom (the sm90
// policy's wgmma keeps its accumulator layout), swizzle128 shared tiles.
template <class T, int BM_, int BN_, int BK_, int WarpsM, int WarpsN, int Stages> struct tensor_core_config {
  using atom = mma_m16n8k16<T>;
  using smem_type = T;
  static constexpr int BM = BM_, BN = BN_, BK = BK_, warps_m = WarpsM, warps_n = WarpsN, stages = Stages;
  template <bool KContiguous> using layout_a = swizzle128<BM, BK, KContiguous>;
  template <bool NContiguous> using layout_b = swizzle128<BK, BN, NContiguous>;
};
template <class T> using sm80_tensor_core_config = tensor_core_config<T, 128, 256, 64, 2, 4, 3>;
template <> struct sm80_gemm_config<bf16> : sm80_tensor_core_config<bf16> {};
template <> struct sm80_gemm_config<fp16> : sm80_tensor_core_config<fp16> {};

struct sm80 : sm80_tile_ops {
  static constexpr int lanes = 32;
  using context = cuda::context;
  template <class TIn> using gemm_config = sm80_gemm_config<TIn>;
};

}  // namespace tessel::cuda
