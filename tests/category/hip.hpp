// tests/category/hip.hpp — the tile-op tests on the HIP CDNA policy: every atom it has.
// (Built in HIP builds; with no AMD GPU present they report themselves skipped.)
#pragma once
#include <gtest/gtest.h>

#include <hip/hip_runtime.h>

#include <stdexcept>
#include <string>

#include "device_buffer.hpp"
#include "tessel/hip/policy_cdna.hpp"
#include "tessel/tensor.hpp"

namespace tessel::test {
template <class Policy, class Atom> struct tile_config;
namespace backend {
inline constexpr const char* name = "hip";
inline device dev() { return device::hip(0); }
inline bool available() { return support::device_available(); }
template <class Kernel, class Params> void run_kernel(const launch_shape& s, const Params& p) {
  hip::launch<Kernel>(s, p, nullptr);
  const hipError_t e = hipDeviceSynchronize();
  if (e != hipSuccess) throw std::runtime_error(std::string("test kernel failed: ") + hipGetErrorString(e));
}
}  // namespace backend
}  // namespace tessel::test

#define TESSEL_TILE_CONFIGS                                                  \
  ::tessel::test::tile_config<::tessel::hip::cdna_policy, ::tessel::hip::scalar>, \
      ::tessel::test::tile_config<::tessel::hip::cdna_policy, ::tessel::hip::mfma_32x32x8<::tessel::bf16>>, \
      ::tessel::test::tile_config<::tessel::hip::cdna_policy, ::tessel::hip::mfma_32x32x8<::tessel::fp16>>
