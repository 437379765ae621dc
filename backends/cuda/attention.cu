// backends/cuda/attention.cu — the CUDA backend's attention entry (bf16 / fp16):
// on a device that runs the sm90 policy (policy_choice.hpp), the TMA schedule
// where tensor maps can describe q, k and v, else the ring schedule with
// per-warp wgmma (sm90_ring_attention); mma.sync (sm80 policy) elsewhere and for
// kernel_path::portable. The configurations are attention_config.hpp's.
#include <cuda_runtime.h>

#include "backend_entry.hpp"
#include "tessel/cuda/attention_launch.hpp"
#include "tessel/cuda/policy_choice.hpp"
#include "tessel/cuda/policy_sm80.hpp"
#include "tessel/cuda/policy_sm90.hpp"
#include "tessel/ops/attention/dispatch.hpp"

namespace tessel::detail {

void cuda_attention(const attention_call& call, void* stream) {
  const cuda::device_scope on(call.device);
  const cuda::attention_launcher launch{static_cast<cudaStream_t>(stream)};
  using probe = ops::attention_kernel<cuda::sm90, bf16, 128>;
  if (!call.portable && cuda::use_sm90<probe, probe::warps * cuda::warp_lanes>()) {
    bool tma = false;
    ops::attention_dispatch<cuda::sm90>(call, cuda::attention_tma_applies{tma});
    if (tma) ops::attention_dispatch<cuda::sm90>(call, launch);
    else ops::attention_dispatch<cuda::sm90_ring_attention>(call, launch);
  } else {
    ops::attention_dispatch<cuda::sm80>(call, launch);
  }
}

}  // namespace tessel::detail
