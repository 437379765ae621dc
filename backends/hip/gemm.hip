// backends/hip/gemm.hip — the HIP backend's entry points: GEMM and the pointer check.
#include <string>

#include <hip/hip_runtime.h>

#include "backend_entry.hpp"
#include "tessel/error.hpp"
#include "tessel/hip/policy_cdna.hpp"
#include "tessel/ops/gemm/dispatch.hpp"

namespace tessel::detail {

void hip_gemm(const gemm_call& call, void* stream) {
  const hip::device_scope on(call.device);
  ops::gemm_dispatch<hip::cdna_policy>(call, [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    hip::launch<K>(K::shape(problem), problem, stream);
  });
}

// True when p is device (or managed) memory of HIP device `device`. A pointer
// HIP does not know (plain host memory) is not; any other failure throws.
bool hip_pointer_on_device(const void* p, int device) {
  hipPointerAttribute_t attr;
  const hipError_t e = hipPointerGetAttributes(&attr, p);
  if (e == hipErrorInvalidValue) {
    (void)hipGetLastError();  // the expected answer for unregistered host memory: not sticky
    return false;
  }
  if (e != hipSuccess)
    throw Error(std::string("tessel hip backend: hipPointerGetAttributes failed: ") + hipGetErrorName(e) + " (" +
                hipGetErrorString(e) + ")");
  return (attr.memoryType == hipMemoryTypeDevice || attr.isManaged) && attr.device == device;
}

}  // namespace tessel::detail
