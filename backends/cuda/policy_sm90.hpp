// tessel/cuda/policy_sm90.hpp — the CUDA policy for sm_90a (H100, H200): TMA + wgmma.
//
// The sm80 policy's tile ops plus tile_ops_sm90's wgmma paths (the
// group-scope atom for the GEMM and attention, the per-warp form for the
// ring attention). GEMM: bf16 / fp16 on the TMA schedule with 2 consumer
// warpgroups (3 for sm90_wide_store's 192 × 256 blocks, 1 for
// sm90_split_short's 64 × 128; gemm_config.hpp);
// fp32 as sm80. Attention: bf16 / fp16 on the
// TMA schedule (attention_config.hpp), or on the ring (sm90_ring_attention)
// where a tensor map cannot describe the operands. Chosen at run time only for a device of compute capability
// 9.0 whose kernels were built for sm_90a, and (GEMM) operands a tensor map can
// describe (gemm_instance.hpp); any other call runs the sm80 policy.
#pragma once
#include "tessel/cuda/policy_sm80.hpp"
#include "tessel/cuda/tile_ops_sm90.hpp"

namespace tessel::cuda {

struct sm90 : sm90_tile_ops {
  static constexpr int lanes = 32;
  static constexpr bool sm90a_only = true;  // its kernels are traps in any other device pass (launch.hpp)
  using context = cuda::context;
  template <class TIn, class TOut = TIn> using gemm_config = sm90_gemm_config<TIn, TOut>;
  static constexpr bool attention_fp32 = false;
  template <class T, int D> using attention_config = sm90_tma_attention_config<T, D>;
};
// The GEMM with its units split by steps, for calls with few units (gemm_instance.hpp).
struct sm90_split_units : sm90 {
  template <class TIn, class TOut = TIn> using gemm_config = sm90_split_gemm_config<TIn, TOut>;
};
// The same on 128 × 128 units: for few-unit calls of more than 128 rows, and
// of fewer where its blocks keep more of B in flight (gemm_instance.hpp's
// choose_split_tile); units whole where they all fit one wave, or where its
// waves cost less than the unsplit kernel's (cheaper_whole_tile).
struct sm90_split_narrow : sm90 {
  template <class TIn, class TOut = TIn> using gemm_config = sm90_split_narrow_gemm_config<TIn, TOut>;
};
// The same on 64 × 128 units (one consumer warpgroup): for few-unit calls of
// at most 64 rows, 96-128, and more where all its units run at once, in
// pieces or whole (gemm_instance.hpp's choose_split_tile).
struct sm90_split_short : sm90 {
  template <class TIn, class TOut = TIn> using gemm_config = sm90_split_short_gemm_config<TIn, TOut>;
};
// The GEMM whose epilogue stores C = A·B as it is (alpha 1, beta 0) through
// TMA only: for the calls that allow it (gemm_instance.hpp).
struct sm90_plain_store : sm90 {
  template <class TIn, class TOut = TIn> using gemm_config = sm90_plain_gemm_config<TIn, TOut>;
};
// The same on 192 × 256 blocks (3 consumer warpgroups): for the calls whose
// waves it fills better (gemm_instance.hpp's wide_tile_pays).
struct sm90_wide_store : sm90 {
  template <class TIn, class TOut = TIn> using gemm_config = sm90_wide_gemm_config<TIn, TOut>;
};
// The same on 128 × 192 blocks: for the calls whose waves they fill better
// (gemm_instance.hpp's cheaper_whole_tile).
struct sm90_n192_store : sm90 {
  template <class TIn, class TOut = TIn> using gemm_config = sm90_n192_gemm_config<TIn, TOut>;
};
// Attention on the ring schedule with per-warp wgmma: for operands a tensor
// map cannot describe, and as a measured variant of the TMA configuration.
struct sm90_ring_attention : sm90 {
  template <class T, int D> using attention_config = sm90_attention_config<T, D>;
};

}  // namespace tessel::cuda
