// backends/hip/attention.hip — the HIP backend's attention entry (bf16 / fp16 on MFMA).
#include <hip/hip_runtime.h>

#include "backend_entry.hpp"
#include "tessel/hip/policy_cdna.hpp"
#include "tessel/ops/attention/dispatch.hpp"

namespace tessel::detail {

void hip_attention(const attention_call& call, void* stream) {
  const hip::device_scope on(call.device);
  ops::attention_dispatch<hip::cdna_policy>(call, [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    hip::launch<K>(K::shape(problem), problem, stream);
  });
}

}  // namespace tessel::detail
