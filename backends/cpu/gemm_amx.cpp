// backends/cpu/gemm_amx.cpp — the AMX GEMM path: bf16 in on the tile registers (compiled with the AVX-512 flags).
//
// Inputs other than bf16 take the AVX-512 path (AMX-BF16 multiplies bf16
// only). The policy (policy_amx.hpp) is the AVX-512 one plus the AMX
// configuration for bf16; the tile instructions are inline assembly, so this
// unit needs no -mamx-* flags, and it runs only where cpu_best_isa() found AMX
// usable (isa.cpp). Shapes: policy_amx.hpp's amx_default_tuning.
// GCC 12's AVX-512 intrinsic headers trip -Wmaybe-uninitialized on their own
// _mm512_undefined_*() placeholders (GCC bug 105593); nothing here is uninitialised.
#if defined(__GNUC__) && !defined(__clang__)  // (clang has no -Wmaybe-uninitialized)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "tessel/cpu/gemm_paths.hpp"
#include "tessel/cpu/policy_amx.hpp"
#include "tessel/cpu/policy_avx512.hpp"
#include "tessel/ops/gemm/dispatch.hpp"

namespace tessel::cpu {

using amx_avx512_policy = amx_policy<avx512_policy, amx_hw, amx_default_tuning>;

void gemm_amx(const gemm_call& call, int threads) {
  if (call.in != dtype::bf16) {
    gemm_avx512(call, threads);
    return;
  }
  auto launch = [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    amx_avx512_policy::launch<K>(K::shape(problem), problem, threads);
  };
  ops::gemm_input<amx_avx512_policy, bf16>(call, launch);
}

}  // namespace tessel::cpu
