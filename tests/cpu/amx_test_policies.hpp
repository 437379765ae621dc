// tests/cpu/amx_test_policies.hpp — the AMX policy on emulated tiles, over the SIMD policy of this test build.
//
// tests/cpu/amx_test.cpp and amx_attention_test.cpp are built twice
// (tests/CMakeLists.txt): with the AVX2 flags, where the SIMD side is
// avx2_policy, and with TESSEL_AMX_TEST_AVX512, where it is avx512_policy
// (the library's AMX path's). Both builds also see avx2_policy. amx_isa_scope:
// the library on cpu isa "amx" while it lives, where the machine allows it.
#pragma once
#include <string>

#include "tessel/cpu/policy_amx.hpp"
#include "tessel/cpu/policy_avx2.hpp"
#if TESSEL_AMX_TEST_AVX512
#include "tessel/cpu/policy_avx512.hpp"
#endif
#include "tessel/tessel.hpp"

namespace tessel::test {

#if TESSEL_AMX_TEST_AVX512
using amx_simd_base = cpu::avx512_policy;
#else
using amx_simd_base = cpu::avx2_policy;
#endif
using amx_emulated_policy = cpu::amx_policy<amx_simd_base, cpu::amx_emulated, cpu::amx_default_tuning>;

// Selects cpu isa "amx" (available() says whether the CPU and OS allowed it) and
// restores the isa before it at the end of the scope, however the test leaves.
class amx_isa_scope {
 public:
  amx_isa_scope() : before_(cpu_isa()) {
    try {
      set_cpu_isa("amx");
      available_ = true;
    } catch (const Error&) {
    }
  }
  ~amx_isa_scope() { set_cpu_isa(before_); }
  amx_isa_scope(const amx_isa_scope&) = delete;
  amx_isa_scope& operator=(const amx_isa_scope&) = delete;
  bool available() const { return available_; }
  const std::string& before() const { return before_; }

 private:
  std::string before_;
  bool available_ = false;
};

}  // namespace tessel::test
