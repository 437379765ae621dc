// tests/cpu/amx_test_policies.hpp — the AMX policy on emulated tiles, over the SIMD policy of this test build.
//
// tests/cpu/amx_test.cpp and amx_attention_test.cpp are built twice
// (tests/CMakeLists.txt): with the AVX2 flags, where the SIMD side is
// avx2_policy, and with TESSEL_AMX_TEST_AVX512, where it is avx512_policy
// (the library's AMX path's). Both builds also see avx2_policy.
#pragma once
#include "tessel/cpu/policy_amx.hpp"
#include "tessel/cpu/policy_avx2.hpp"
#if TESSEL_AMX_TEST_AVX512
#include "tessel/cpu/policy_avx512.hpp"
#endif

namespace tessel::test {

#if TESSEL_AMX_TEST_AVX512
using amx_simd_base = cpu::avx512_policy;
#else
using amx_simd_base = cpu::avx2_policy;
#endif
using amx_emulated_policy = cpu::amx_policy<amx_simd_base, cpu::amx_emulated, cpu::amx_default_tuning>;

}  // namespace tessel::test
