// backends/cuda/gemm_bf16_f32.cu — GEMM with bf16 inputs and float output (all four majorness combinations).
#include "tessel/cuda/gemm_instance.hpp"

namespace tessel::cuda {
void gemm_bf16_f32(const gemm_call& call, cudaStream_t stream) { gemm_instance<bf16, float>(call, stream); }
}  // namespace tessel::cuda
