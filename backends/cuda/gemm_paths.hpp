// tessel/cuda/gemm_paths.hpp — the CUDA GEMM instantiations, one translation unit per
// (input, output) type pair (gemm_<in>_<out>.cu), so that nvcc builds them in parallel.
//
// Each runs ops::gemm_typed<sm80, TIn, TOut> — the shared dispatch of
// ops/gemm/dispatch.hpp, majorness included — with the launcher below.
#pragma once
#include <cuda_runtime.h>

#include "tessel/ops/gemm/call.hpp"

namespace tessel::cuda {

void gemm_f32_f32(const gemm_call& call, cudaStream_t stream);
void gemm_f16_f16(const gemm_call& call, cudaStream_t stream);
void gemm_f16_f32(const gemm_call& call, cudaStream_t stream);
void gemm_bf16_bf16(const gemm_call& call, cudaStream_t stream);
void gemm_bf16_f32(const gemm_call& call, cudaStream_t stream);

// What ops::gemm_* hand each kernel to: a launch on `stream` with the kernel's
// block size as its compile-time bound.
struct gemm_launcher {
  cudaStream_t stream;
  template <class Tag, class Problem> void operator()(Tag, const Problem& problem) const;
};

}  // namespace tessel::cuda
