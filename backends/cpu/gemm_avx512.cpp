// backends/cpu/gemm_avx512.cpp — the AVX-512 GEMM path (compiled with -mavx512f/bw/dq/vl -mfma).
//
// Micro-tile 8 × 48: 24 zmm accumulators, 3 B vectors and one broadcast per k
// (11 loads per 24 FMAs). Block 128 × 192 × 256, two stages: a stage of packed
// A + B is 320 KiB and the accumulator 96 KiB, so the working set stays in the
// 1 MiB L2 (Zen 4/5) and the B micro-panel (256 × 48 floats, 48 KiB) streams
// through L1. bench/notes/cpu_gemm.md has the measurements behind the choice.
// GCC 12's AVX-512 intrinsic headers trip -Wmaybe-uninitialized on their own
// _mm512_undefined_*() placeholders (GCC bug 105593); nothing here is uninitialised.
#if defined(__GNUC__) && !defined(__clang__)  // (clang has no -Wmaybe-uninitialized)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "tessel/cpu/gemm_paths.hpp"
#include "tessel/cpu/policy_avx512.hpp"
#include "tessel/ops/gemm/dispatch.hpp"

namespace tessel::cpu {

void gemm_avx512(const gemm_call& call, int threads) {
  ops::gemm_dispatch<avx512_policy>(call, [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    avx512_policy::launch<K>(K::shape(problem), problem, threads);
  });
}

}  // namespace tessel::cpu
