// tessel/cuda/policy_choice.hpp — which CUDA policy runs an op on the current device.
//
// The sm80 policy (mma.sync) runs everywhere from compute capability 8.0; the
// sm90 policy (wgmma) needs sm_90a machine code, which runs only on devices of
// compute capability 9.0. Both are compiled; the host picks per device at run
// time. Include only from CUDA translation units.
#pragma once
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include "tessel/cuda/launch.hpp"

namespace tessel::cuda {

// Whether the current device runs the sm90 policy: compute capability 9.0 and
// the sm90 kernel built for it (sm_90a machine code, not a PTX-JIT fallback).
// Decided once per device and kernel (Threads: its block size, as launched).
// TESSEL_CUDA_POLICY=sm80 in the environment keeps every device on the sm80
// policy (to test that path on Hopper).
template <class Kernel, int Threads> bool use_sm90() {
  static const bool forced_sm80 = [] {
    const char* e = std::getenv("TESSEL_CUDA_POLICY");
    return e != nullptr && std::strcmp(e, "sm80") == 0;
  }();
  if (forced_sm80) return false;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice", launch_shape{});
  const void* entry = reinterpret_cast<const void*>(&kernel_entry<Kernel, params_of<Kernel>, Threads>);
  const int known = entry_fact(entry, device, fact::runs_sm90);
  if (known >= 0) return known == 1;
  int major = 0, minor = 0;
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute", launch_shape{});
  check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), "cudaDeviceGetAttribute", launch_shape{});
  bool ok = major == 9 && minor == 0;
  if (ok) {
    cudaFuncAttributes attr{};
    check(cudaFuncGetAttributes(&attr, entry), "cudaFuncGetAttributes", launch_shape{});
    ok = attr.binaryVersion == 90;
  }
  set_entry_fact(entry, device, fact::runs_sm90, ok ? 1 : 0);
  return ok;
}

}  // namespace tessel::cuda
