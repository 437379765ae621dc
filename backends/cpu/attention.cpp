// backends/cpu/attention.cpp — the CPU backend's attention entry: picks the ISA path, launches.
#include "backend_entry.hpp"
#include "tessel/cpu/attention_paths.hpp"
#include "tessel/cpu/policy_scalar.hpp"
#include "tessel/ops/attention/dispatch.hpp"

namespace tessel::detail {

void cpu_attention(const attention_call& call, int threads) {
  switch (cpu_selected_isa()) {
    case cpu_isa_level::amx: cpu::attention_amx(call, threads); return;
    case cpu_isa_level::avx512: cpu::attention_avx512(call, threads); return;
    case cpu_isa_level::avx2: cpu::attention_avx2(call, threads); return;
    case cpu_isa_level::scalar: break;
  }
  ops::attention_dispatch<cpu::scalar_policy>(call, [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    cpu::launch<K>(K::shape(problem), problem, threads);
  });
}

}  // namespace tessel::detail
