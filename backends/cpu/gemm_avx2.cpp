// backends/cpu/gemm_avx2.cpp — the AVX2 + FMA GEMM path (compiled with -mavx2 -mfma).
//
// Micro-tile 4 × 24: 12 ymm accumulators, 3 B vectors and one broadcast
// (16 registers in all). Block 128 × 192 × 256, two stages (see gemm_avx512.cpp).
#include "tessel/cpu/gemm_paths.hpp"
#include "tessel/cpu/policy_avx2.hpp"
#include "tessel/ops/gemm/dispatch.hpp"

namespace tessel::cpu {

void gemm_avx2(const gemm_call& call, int threads) {
  ops::gemm_dispatch<avx2_policy>(call, [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    avx2_policy::launch<K>(K::shape(problem), problem, threads);
  });
}

}  // namespace tessel::cpu
