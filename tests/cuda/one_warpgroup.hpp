// tests/cuda/one_warpgroup.hpp — launching a tile test's kernel as one block of one warpgroup.
//
// Case: a kernel body (run(ctx, params)) with its params and smem_bytes, as
// cuda::launch takes it; the block is 4 warps (128 threads, what a wgmma needs).
#pragma once
#include <cuda_runtime.h>

#include "tessel/core/scope.hpp"
#include "tessel/cuda/launch.hpp"

namespace tessel::test {

// Launches Case on one warpgroup and waits: the launch's and the kernel's error.
template <class Case> cudaError_t run_one_warpgroup(const typename Case::params& p) {
  launch_shape s;
  s.warps = 4;
  s.smem_bytes = Case::smem_bytes;
  cuda::launch<Case, 128>(s, p, nullptr);
  return cudaDeviceSynchronize();
}

}  // namespace tessel::test
