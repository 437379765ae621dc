// tessel/cuda/policy_sm90.hpp — the CUDA policy for sm_90a (H100, H200): wgmma tensor cores.
//
// bf16 / fp16 GEMM: 128 × 256 × 64 blocks, 8 warps = 2 warpgroups of 64 × 256
// (warps_m = 8: each warp owns 16 rows × 256 columns, 128 fp32 registers per
// lane), 4 stages of 48 KiB (192 KiB of the H100's 227 KiB), the same
// swizzle128 tiles and cp.async copies as sm80; the mma is tile_ops_sm90's
// wgmma. fp32 is sm80's SIMT configuration. Chosen at run time only for a
// device of compute capability 9.0 whose kernels were built for sm_90a
// (gemm_instance.hpp); any other device runs the sm80 policy.
#pragma once
#include "tessel/cuda/policy_sm80.hpp"
#include "tessel/cuda/tile_ops_sm90.hpp"

namespace tessel::cuda {

template <class TIn> struct sm90_gemm_config : sm80_gemm_config<TIn> {};

template <class T> using sm90_tensor_core_config = tensor_core_config<T, 128, 256, 64, 8, 1, 4>;
template <> struct sm90_gemm_config<bf16> : sm90_tensor_core_config<bf16> {};
template <> struct sm90_gemm_config<fp16> : sm90_tensor_core_config<fp16> {};

struct sm90 : sm90_tile_ops {
  static constexpr int lanes = 32;
  using context = cuda::context;
  template <class TIn> using gemm_config = sm90_gemm_config<TIn>;
};

}  // namespace tessel::cuda
