// backends/cpu/gemm.cpp — the CPU backend's GEMM entry: picks the ISA path, launches.
#include "backend_entry.hpp"
#include "tessel/cpu/gemm_paths.hpp"
#include "tessel/cpu/policy_scalar.hpp"
#include "tessel/ops/gemm/dispatch.hpp"

namespace tessel::detail {

void cpu_gemm(const gemm_call& call, int threads) {
  switch (cpu_selected_isa()) {
    case cpu_isa_level::amx: cpu::gemm_amx(call, threads); return;
    case cpu_isa_level::avx512: cpu::gemm_avx512(call, threads); return;
    case cpu_isa_level::avx2: cpu::gemm_avx2(call, threads); return;
    case cpu_isa_level::scalar: break;
  }
  ops::gemm_dispatch<cpu::scalar_policy>(call, [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    cpu::launch<K>(K::shape(problem), problem, threads);
  });
}

}  // namespace tessel::detail
