// backends/cpu/attention.cpp — the CPU backend's attention entry: picks the ISA path, launches.
#include "backend_entry.hpp"
#include "tessel/cpu/policy_scalar.hpp"
#include "tessel/ops/attention/dispatch.hpp"

namespace tessel::detail {

void cpu_attention(const attention_call& call, int threads) {
  ops::attention_dispatch<cpu::scalar_policy>(call, [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    cpu::launch<K>(K::shape(problem), problem, threads);
  });
}

}  // namespace tessel::detail
