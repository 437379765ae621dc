// tests/category/cpu_scalar.hpp — the tile-op tests on the CPU's scalar policy.
#pragma once
#include <gtest/gtest.h>

#include "tessel/cpu/policy_scalar.hpp"
#include "tessel/tensor.hpp"

namespace tessel::test {
template <class Policy, class Atom> struct tile_config;
namespace backend {
inline constexpr const char* name = "cpu_scalar";
inline device dev() { return device::host(); }
inline bool available() { return true; }
template <class Kernel, class Params> void run_kernel(const launch_shape& s, const Params& p) {
  cpu::launch<Kernel>(s, p, 1);
}
}  // namespace backend
}  // namespace tessel::test

#define TESSEL_TILE_CONFIGS ::tessel::test::tile_config<::tessel::cpu::scalar_policy, ::tessel::cpu::scalar>
