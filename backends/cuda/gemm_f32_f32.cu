// backends/cuda/gemm_f32_f32.cu — GEMM with float inputs and float output (all four majorness combinations).
#include "tessel/cuda/gemm_instance.hpp"

namespace tessel::cuda {
void gemm_f32_f32(const gemm_call& call, cudaStream_t stream) { gemm_instance<float, float>(call, stream); }
}  // namespace tessel::cuda
