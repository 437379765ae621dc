// tessel/cuda/policy_sm80.hpp — the CUDA policy for sm_80 and newer (A100, H100 via mma.sync).
//
// bf16 / fp16 run on the mma_m16n8k16 tensor-core atom with the fast paths of
// tile_ops_sm80.hpp; fp32 GEMM on the 32-lane scalar atom (FFMA) through the
// generic tile ops, since tf32 tensor cores miss the fp32 tolerance. The
// configurations are gemm_config.hpp's and attention_config.hpp's; the
// context and launcher are launch.hpp's.
#pragma once
#include <type_traits>

#include "tessel/cuda/attention_config.hpp"
#include "tessel/cuda/gemm_config.hpp"
#include "tessel/cuda/launch.hpp"
#include "tessel/cuda/tile_ops_sm80.hpp"

namespace tessel::cuda {

struct sm80 : sm80_tile_ops {
  static constexpr int lanes = 32;
  using context = cuda::context;
  template <class TIn, class TOut = TIn> using gemm_config = sm80_gemm_config<TIn>;
  static constexpr bool attention_fp32 = false;  // fp32 attention is CPU-only (refused by the API)
  template <class T, int D> using attention_config = sm80_attention_config<T, D>;
};

}  // namespace tessel::cuda
