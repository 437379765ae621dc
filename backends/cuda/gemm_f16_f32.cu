// backends/cuda/gemm_f16_f32.cu — GEMM with fp16 inputs and float output (all four majorness combinations).
#include "tessel/cuda/gemm_instance.hpp"

namespace tessel::cuda {
void gemm_f16_f32(const gemm_call& call, cudaStream_t stream) { gemm_instance<fp16, float>(call, stream); }
}  // namespace tessel::cuda
