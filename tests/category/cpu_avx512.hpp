// tests/category/cpu_avx512.hpp — the tile-op tests on the CPU's avx512 policy (skipped on CPUs without it).
#pragma once
#include <gtest/gtest.h>

#include "tessel/backend.hpp"
#include "tessel/error.hpp"
#include "tessel/cpu/policy_avx512.hpp"
#include "tessel/tensor.hpp"

namespace tessel::test {
template <class Policy, class Atom> struct tile_config;
namespace backend {
inline constexpr const char* name = "cpu_avx512";
inline device dev() { return device::host(); }
inline bool available() {
  const std::string best = cpu_isa();
  try {
    set_cpu_isa("avx512");  // throws if this CPU lacks it
    set_cpu_isa(best);
    return true;
  } catch (const Error&) {
    return false;
  }
}
template <class Kernel, class Params> void run_kernel(const launch_shape& s, const Params& p) {
  cpu::avx512_policy::launch<Kernel>(s, p, 1);
}
}  // namespace backend
}  // namespace tessel::test

#define TESSEL_TILE_CONFIGS \
  ::tessel::test::tile_config<::tessel::cpu::avx512_policy, ::tessel::cpu::avx512_policy::gemm_config<float>::atom>, \
      ::tessel::test::tile_config<::tessel::cpu::avx512_policy,                                  \
                                  ::tessel::cpu::avx512_policy::attention_config<float, 64>::atom>
