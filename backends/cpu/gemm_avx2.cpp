// backends/cpu/gemm_avx2.cpp — PLACEHOLDER until the SIMD policy lands: runs the scalar policy.
#include "tessel/cpu/gemm_paths.hpp"
#include "tessel/cpu/policy_scalar.hpp"
#include "tessel/ops/gemm/dispatch.hpp"

namespace tessel::cpu {
void gemm_avx2(const gemm_call& call, int threads) {
  ops::gemm_dispatch<scalar_policy>(call, [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    launch<K>(K::shape(problem), problem, threads);
  });
}
}  // namespace tessel::cpu
