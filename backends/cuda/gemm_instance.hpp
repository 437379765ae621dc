// tessel/cuda/gemm_instance.hpp — the body of each gemm_<in>_<out>.cu: the sm80
// policy's GEMM for one type pair, launched through launch.hpp.
#pragma once
#include "tessel/cuda/gemm_paths.hpp"
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "tessel/cuda/policy_sm80.hpp"
#include "tessel/cuda/policy_sm90.hpp"
#include "tessel/ops/gemm/dispatch.hpp"

namespace tessel::cuda {

template <class Tag, class Problem> void gemm_launcher::operator()(Tag, const Problem& problem) const {
  using K = typename Tag::type;
  constexpr int threads = K::cfg::warps_m * K::cfg::warps_n * warp_lanes;
  launch<K, threads>(K::shape(problem), problem, stream);
}

// Whether the current device runs the sm90 policy: compute capability 9.0 and
// the sm90 kernel built for it (sm_90a machine code, not a PTX-JIT fallback).
// Decided once per device and kernel type pair. TESSEL_CUDA_POLICY=sm80 in the
// environment keeps every device on the sm80 policy (to test that path on Hopper).
template <class Kernel> bool use_sm90() {
  static const bool forced_sm80 = [] {
    const char* e = std::getenv("TESSEL_CUDA_POLICY");
    return e != nullptr && std::strcmp(e, "sm80") == 0;
  }();
  if (forced_sm80) return false;
  static std::atomic<unsigned long long> known{0}, yes{0};
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice", launch_shape{});
  const unsigned long long bit = device < 64 ? 1ull << device : 0;
  if (known.load(std::memory_order_acquire) & bit) return yes.load(std::memory_order_acquire) & bit;
  int major = 0, minor = 0;
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute", launch_shape{});
  check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), "cudaDeviceGetAttribute", launch_shape{});
  bool ok = major == 9 && minor == 0;
  if (ok) {
    constexpr int threads = Kernel::cfg::warps_m * Kernel::cfg::warps_n * warp_lanes;
    cudaFuncAttributes attr{};
    check(cudaFuncGetAttributes(&attr, &kernel_entry<Kernel, typename Kernel::problem, threads>), "cudaFuncGetAttributes",
          launch_shape{});
    ok = attr.binaryVersion == 90;
  }
  if (ok) yes.fetch_or(bit, std::memory_order_acq_rel);
  known.fetch_or(bit, std::memory_order_acq_rel);
  return ok;
}

template <class TIn, class TOut> void gemm_instance(const gemm_call& call, cudaStream_t stream) {
  gemm_launcher launch{stream};
  if constexpr (sizeof(TIn) == 2) {
    if (use_sm90<ops::gemm_kernel<sm90, TIn, TOut, true, true>>()) {
      ops::gemm_typed<sm90, TIn, TOut>(call, launch);
      return;
    }
  }
  ops::gemm_typed<sm80, TIn, TOut>(call, launch);
}

}  // namespace tessel::cuda
