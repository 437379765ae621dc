// backends/cuda/gemm_f16_f16.cu — GEMM with fp16 inputs and fp16 output (all four majorness combinations).
#include "tessel/cuda/gemm_instance.hpp"

namespace tessel::cuda {
void gemm_f16_f16(const gemm_call& call, cudaStream_t stream) { gemm_instance<fp16, fp16>(call, stream); }
}  // namespace tessel::cuda
