// tessel/cuda/policy_sm90.hpp — the CUDA policy for sm_90a (H100, H200): TMA + wgmma.
//
// bf16 / fp16 GEMM: 128 × 256 × 64 blocks under the TMA schedule
// (schedule_sm90.hpp): a producer warpgroup and 2 consumer warpgroups, each
// consumer a group_scope<4> unit owning 64 × 256 of C in one wgmma m64n256k16
// accumulator (128 fp32 registers per lane); 3 stages of 16 + 32 KiB
// swizzle128 tiles and 2 × 32 KiB of epilogue staging (208 KiB of the H100's
// 227 KiB; 4 stages measured no faster without the staging); a persistent
// grid. fp32 is
// sm80's SIMT configuration. Chosen at run time only for a device of compute
// capability 9.0 whose kernels were built for sm_90a, and operands a tensor map
// can describe (gemm_instance.hpp); any other call runs the sm80 policy.
#pragma once
#include "tessel/cuda/atom/wgmma.hpp"
#include "tessel/cuda/policy_sm80.hpp"
#include "tessel/cuda/schedule_sm90.hpp"
#include "tessel/cuda/tile_ops_sm90.hpp"

namespace tessel::cuda {

template <class TIn> struct sm90_gemm_config : sm80_gemm_config<TIn> {};

// Alternating: each consumer warpgroup owns whole work units (BM × BN of C,
// in BM/64 wgmma accumulators), the consumers taking turns ("ping-pong");
// else they split each BM × BN unit into Consumers row bands of 64. Measured
// on the H100 (bench/notes/cuda_gemm.md): alternating 128 × 128 units, 5
// stages, ran 0.90-0.95x cuBLAS where the cooperative 128 × 256 default ran
// 0.94-1.00x, so the default is cooperative.
template <class T, int BM_, int BN_, int BK_, int Consumers, int Stages, bool Alternating = false>
struct sm90_tma_gemm_config {
  using atom = wgmma_m64k16<T, BN_>;
  using smem_type = T;
  using unit = group_scope<4>;
  using schedule = sm90_tma_schedule<Stages, Consumers>;
  static constexpr int BM = BM_, BN = BN_, BK = BK_, warps_m = Alternating ? 1 : Consumers, warps_n = 1;
  static constexpr int stages = Stages;
  template <bool KContiguous> using layout_a = swizzle128<BM, BK, KContiguous>;
  template <bool NContiguous> using layout_b = swizzle128<BK, BN, NContiguous>;
};
template <> struct sm90_gemm_config<bf16> : sm90_tma_gemm_config<bf16, 128, 256, 64, 2, 3> {};
template <> struct sm90_gemm_config<fp16> : sm90_tma_gemm_config<fp16, 128, 256, 64, 2, 3> {};

struct sm90 : sm90_tile_ops {
  static constexpr int lanes = 32;
  using context = cuda::context;
  template <class TIn> using gemm_config = sm90_gemm_config<TIn>;
};

}  // namespace tessel::cuda
