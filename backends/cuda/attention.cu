// backends/cuda/attention.cu — the CUDA backend's attention entry (bf16 / fp16):
// wgmma (sm90 policy) on compute capability 9.0, mma.sync (sm80 policy) elsewhere;
// the configurations are attention_config.hpp's.
#include <cuda_runtime.h>

#include "backend_entry.hpp"
#include "tessel/cuda/policy_choice.hpp"
#include "tessel/cuda/policy_sm80.hpp"
#include "tessel/cuda/policy_sm90.hpp"
#include "tessel/ops/attention/dispatch.hpp"

namespace tessel::detail {

void cuda_attention(const attention_call& call, void* stream) {
  const cuda::device_scope on(call.device);
  auto launch = [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    cuda::launch<K, K::cfg::warps * cuda::warp_lanes>(K::shape(problem), problem, static_cast<cudaStream_t>(stream));
  };
  using probe = ops::attention_kernel<cuda::sm90, bf16, 128>;
  if (!call.portable && cuda::use_sm90<probe, probe::cfg::warps * cuda::warp_lanes>())
    ops::attention_dispatch<cuda::sm90>(call, launch);
  else ops::attention_dispatch<cuda::sm80>(call, launch);
}

}  // namespace tessel::detail
