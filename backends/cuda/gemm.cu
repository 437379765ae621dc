// backends/cuda/gemm.cu — the CUDA backend's entry points: GEMM and pointer checks.
//
// cuda_gemm picks the translation unit of the call's type pair (gemm_paths.hpp);
// each one runs the shared dispatch (ops/gemm/dispatch.hpp) on the sm80 policy.
#include <string>

#include "backend_entry.hpp"
#include "tessel/cuda/gemm_paths.hpp"
#include "tessel/cuda/launch.hpp"
#include "tessel/error.hpp"

namespace tessel::detail {

void cuda_gemm(const gemm_call& call, void* native_stream) {
  const cuda::device_scope on(call.device);
  const auto stream = static_cast<cudaStream_t>(native_stream);
  const bool f32_out = call.out == dtype::f32;
  switch (call.in) {
    case dtype::f32: cuda::gemm_f32_f32(call, stream); return;
    case dtype::f16: f32_out ? cuda::gemm_f16_f32(call, stream) : cuda::gemm_f16_f16(call, stream); return;
    case dtype::bf16: f32_out ? cuda::gemm_bf16_f32(call, stream) : cuda::gemm_bf16_bf16(call, stream); return;
  }
  throw Error("tessel cuda backend: gemm: unknown input dtype value " + std::to_string(int(call.in)));
}

bool cuda_pointer_on_device(const void* p, int device) {
  cudaPointerAttributes attr{};
  const cudaError_t e = cudaPointerGetAttributes(&attr, p);
  if (e == cudaErrorInvalidValue) {  // not a pointer CUDA knows (older runtimes say so for host memory)
    (void)cudaGetLastError();
    return false;
  }
  if (e != cudaSuccess)
    throw Error(std::string("tessel cuda backend: cudaPointerGetAttributes failed: ") + cudaGetErrorName(e) + " (" +
                cudaGetErrorString(e) + ")");
  return (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) && attr.device == device;
}

}  // namespace tessel::detail
