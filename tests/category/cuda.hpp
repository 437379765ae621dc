// tests/category/cuda.hpp — the tile-op tests on the CUDA sm80 policy: every atom it has.
#pragma once
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "device_buffer.hpp"
#include "tessel/cuda/policy_sm80.hpp"
#include "tessel/tensor.hpp"

namespace tessel::test {
template <class Policy, class Atom> struct tile_config;
namespace backend {
inline constexpr const char* name = "cuda";
inline device dev() { return device::cuda(0); }
inline bool available() { return support::device_available(); }
// One warp per test kernel (32 threads); waits and surfaces kernel errors.
template <class Kernel, class Params> void run_kernel(const launch_shape& s, const Params& p) {
  cuda::launch<Kernel, 32>(s, p, nullptr);
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) throw std::runtime_error(std::string("test kernel failed: ") + cudaGetErrorString(e));
}
}  // namespace backend
}  // namespace tessel::test

#define TESSEL_TILE_CONFIGS                                                   \
  ::tessel::test::tile_config<::tessel::cuda::sm80, ::tessel::cuda::scalar>, \
      ::tessel::test::tile_config<::tessel::cuda::sm80, ::tessel::cuda::mma_m16n8k16<::tessel::bf16>>, \
      ::tessel::test::tile_config<::tessel::cuda::sm80, ::tessel::cuda::mma_m16n8k16<::tessel::fp16>>
