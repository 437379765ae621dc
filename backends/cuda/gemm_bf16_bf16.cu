// backends/cuda/gemm_bf16_bf16.cu — GEMM with bf16 inputs and bf16 output (all four majorness combinations).
#include "tessel/cuda/gemm_instance.hpp"

namespace tessel::cuda {
void gemm_bf16_bf16(const gemm_call& call, cudaStream_t stream) { gemm_instance<bf16, bf16>(call, stream); }
}  // namespace tessel::cuda
