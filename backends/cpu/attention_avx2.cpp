// backends/cpu/attention_avx2.cpp — the AVX2 + FMA attention path (compiled with -mavx2 -mfma).
//
// Column atom of 24 rows (3 ymm), 4 broadcast columns: 12 ymm accumulators,
// 3 A vectors and 4 broadcasts per 12 FMAs (16 registers). Blocks of 96 query
// rows, 64 key/value rows, two stages (see attention_avx512.cpp).
#include "tessel/cpu/attention_paths.hpp"
#include "tessel/cpu/policy_avx2.hpp"
#include "tessel/ops/attention/dispatch.hpp"

namespace tessel::cpu {

void attention_avx2(const attention_call& call, int threads) {
  ops::attention_dispatch<avx2_policy>(call, [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    avx2_policy::launch<K>(K::shape(problem), problem, threads);
  });
}

}  // namespace tessel::cpu
