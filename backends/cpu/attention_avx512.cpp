// backends/cpu/attention_avx512.cpp — the AVX-512 attention path (compiled with the gemm_avx512.cpp flags).
//
// Column atom of 64 rows (4 zmm), 4 broadcast columns: 16 zmm accumulators,
// 4 A vectors and 4 broadcasts per 16 FMAs. Blocks of 128 query rows, 64
// key/value rows, two stages (policy_avx512.hpp; attention_simd.hpp has the
// tile ops; bench/notes/cpu_attention.md the measurements behind the choice).
// GCC 12's AVX-512 intrinsic headers trip -Wmaybe-uninitialized on their own
// _mm512_undefined_*() placeholders (GCC bug 105593); nothing here is uninitialised.
#if defined(__GNUC__) && !defined(__clang__)  // (clang has no -Wmaybe-uninitialized)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "tessel/cpu/attention_paths.hpp"
#include "tessel/cpu/policy_avx512.hpp"
#include "tessel/ops/attention/dispatch.hpp"

namespace tessel::cpu {

void attention_avx512(const attention_call& call, int threads) {
  ops::attention_dispatch<avx512_policy>(call, [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    avx512_policy::launch<K>(K::shape(problem), problem, threads);
  });
}

}  // namespace tessel::cpu
