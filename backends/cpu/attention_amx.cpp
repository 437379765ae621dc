// backends/cpu/attention_amx.cpp — the AMX attention path: bf16 in on the tile registers (compiled with the AVX-512 flags).
//
// S = Q·Kᵀ and O += P·V run tdpbf16ps on bf16 panels (policy_amx.hpp's loads
// and mma), the softmax on AVX-512 vectors (attention_amx.hpp); P is rounded
// to bf16 for P·V, as on the GPUs. Inputs other than bf16 take the AVX-512
// path. Like gemm_amx.cpp, it runs only where cpu_best_isa() found AMX usable
// (isa.cpp). Shapes: policy_amx.hpp's amx_default_attention_tuning (64 keys a
// step), or amx_wide_attention_tuning (128) where amx_wide_attention_pays.
// GCC 12's AVX-512 intrinsic headers trip -Wmaybe-uninitialized on their own
// _mm512_undefined_*() placeholders (GCC bug 105593); nothing here is uninitialised.
#if defined(__GNUC__) && !defined(__clang__)  // (clang has no -Wmaybe-uninitialized)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "tessel/cpu/attention_paths.hpp"
#include "tessel/cpu/policy_amx.hpp"
#include "tessel/cpu/policy_avx512.hpp"
#include "tessel/ops/attention/dispatch.hpp"

namespace tessel::cpu {

using amx_avx512_attention_policy = amx_policy<avx512_policy, amx_hw, amx_default_tuning>;
using amx_avx512_wide_attention_policy =
    amx_policy<avx512_policy, amx_hw, amx_default_tuning, amx_wide_attention_tuning>;

template <class Policy> void attention_on(const attention_call& call, int threads) {
  auto launch = [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    Policy::template launch<K>(K::shape(problem), problem, threads);
  };
  ops::attention_typed<Policy, bf16>(call, launch);
}

void attention_amx(const attention_call& call, int threads) {
  if (call.type != dtype::bf16) {
    attention_avx512(call, threads);
  } else if (amx_wide_attention_pays(call.kv_len)) {
    attention_on<amx_avx512_wide_attention_policy>(call, threads);
  } else {
    attention_on<amx_avx512_attention_policy>(call, threads);
  }
}

}  // namespace tessel::cpu
