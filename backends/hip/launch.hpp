// tessel/hip/launch.hpp — blocks and wavefronts on AMD GPUs (HIP), and the kernel launcher.
//
// A block is `warps` wavefronts of 64 lanes (wave64: CDNA's only mode) on one
// CU; its shared arena is the dynamic LDS allocation of the launch. The grid is
// grid_x × grid_y × grid_z blocks. launch<Kernel>() runs Kernel::run(ctx, params)
// in every block; every HIP call is checked and a failure throws tessel::Error
// naming the call and the kernel's launch shape. Include only from HIP
// translation units (device code).
#pragma once
#include <string>
#include <type_traits>

#include <hip/hip_runtime.h>

#include "tessel/core/scope.hpp"
#include "tessel/error.hpp"

namespace tessel::hip {

inline constexpr int wave_lanes = 64;
// Every tessel HIP kernel runs at most this many threads per block, and asks for
// at least 2 waves per SIMD unless its configuration says otherwise (below).
// The entry point is compiled with both as its launch bounds: 2 waves cap a lane
// at 256 registers, which lets the compiler keep MFMA accumulators in VGPRs
// (gfx90a+) instead of copying them to AGPRs and back.
inline constexpr int max_block_threads = 256;
inline constexpr int min_waves_per_simd = 2;

// The waves per SIMD a kernel asks for: its configuration's `waves_per_simd`
// (Kernel::cfg, the policy's gemm_config / attention_config) where it has one,
// else min_waves_per_simd. The register budget per lane follows from it
// (512 / waves, in granules of 8): a config that needs more registers asks for
// fewer waves, one that fits in fewer asks for more and gets them checked.
template <class Kernel, class = void> struct kernel_waves_per_simd {
  static constexpr int value = min_waves_per_simd;
};
template <class Kernel>
struct kernel_waves_per_simd<Kernel, std::void_t<decltype(Kernel::cfg::waves_per_simd)>> {
  static constexpr int value = Kernel::cfg::waves_per_simd;
  static_assert(value >= 1 && value <= 8, "waves_per_simd: 1 to 8 waves per SIMD");
};
// LDS per block on CDNA2/CDNA3 (64 KiB, no opt-in beyond it).
inline constexpr int max_lds_bytes = 65536;

struct context {
  TESSEL_DEVICE int block_x() const { return int(blockIdx.x); }
  TESSEL_DEVICE int block_y() const { return int(blockIdx.y); }
  TESSEL_DEVICE int block_z() const { return int(blockIdx.z); }
  TESSEL_DEVICE int grid_z() const { return int(gridDim.z); }
  // The wave index is the same in all lanes: readfirstlane tells the compiler
  // so, and everything derived from it (a wave's rows, its LDS offsets) stays in
  // SGPRs.
  TESSEL_DEVICE int warp() const { return __builtin_amdgcn_readfirstlane(int(threadIdx.x) / wave_lanes); }
  TESSEL_DEVICE int lane() const { return int(threadIdx.x) % wave_lanes; }
  TESSEL_DEVICE int thread() const { return int(threadIdx.x); }
  TESSEL_DEVICE int threads() const { return int(blockDim.x); }
  TESSEL_DEVICE void sync() const { __syncthreads(); }
  TESSEL_DEVICE float shfl_xor(float v, int mask) const { return __shfl_xor(v, mask, wave_lanes); }
  TESSEL_DEVICE char* smem() const {
    extern __shared__ __attribute__((aligned(16))) char tessel_lds[];
    return tessel_lds;
  }
};

template <class Kernel, class Params>
__global__ void __launch_bounds__(max_block_threads, kernel_waves_per_simd<Kernel>::value)
    kernel_entry(Params params) {
  context ctx;
  Kernel::run(ctx, params);
}

inline void check(hipError_t e, const char* call, const launch_shape& s) {
  if (e == hipSuccess) return;
  throw Error(std::string("tessel hip backend: ") + call + " failed: " + hipGetErrorName(e) + " (" +
              hipGetErrorString(e) + "), launch grid " + std::to_string(s.grid_x) + "x" + std::to_string(s.grid_y) +
              "x" + std::to_string(s.grid_z) + ", " + std::to_string(s.warps) + " waves, " +
              std::to_string(s.smem_bytes) + " bytes LDS");
}

// Makes `device` current for the scope of an op and restores the caller's
// current device afterwards (tensors on hip:1 run on hip:1).
class device_scope {
 public:
  explicit device_scope(int device) {
    const hipError_t e = hipGetDevice(&previous_);
    if (e != hipSuccess) throw Error(std::string("tessel hip backend: hipGetDevice failed: ") + hipGetErrorString(e));
    if (previous_ != device) {
      const hipError_t s = hipSetDevice(device);
      if (s != hipSuccess)
        throw Error("tessel hip backend: hipSetDevice(" + std::to_string(device) + ") failed: " + hipGetErrorString(s));
    }
  }
  ~device_scope() {
    int now = previous_;
    if (hipGetDevice(&now) == hipSuccess && now != previous_) (void)hipSetDevice(previous_);
  }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;

 private:
  int previous_ = 0;
};

// Enqueues Kernel on `stream` (a hipStream_t; nullptr: the default stream) and
// returns without waiting. Errors of the launch itself are thrown here;
// errors while the kernel runs surface at the caller's next synchronisation.
template <class Kernel, class Params> void launch(const launch_shape& shape, const Params& params, void* stream) {
  if (long(shape.grid_x) * shape.grid_y * shape.grid_z == 0) return;
  if (shape.warps < 1 || shape.warps * wave_lanes > max_block_threads)
    throw Error("tessel hip backend: a block of " + std::to_string(shape.warps) + " waves exceeds the launch bound of " +
                std::to_string(max_block_threads) + " threads");
  if (shape.smem_bytes < 0 || shape.smem_bytes > max_lds_bytes)
    throw Error("tessel hip backend: " + std::to_string(shape.smem_bytes) + " bytes of LDS per block exceed " +
                std::to_string(max_lds_bytes));
  if (shape.cluster_x != 1) throw Error("tessel hip backend: no block clusters (a schedule asked for them)");
  (void)hipGetLastError();  // clears an error of an earlier, unrelated call: the check below is ours
  hipLaunchKernelGGL((kernel_entry<Kernel, Params>), dim3(shape.grid_x, shape.grid_y, shape.grid_z),
                     dim3(shape.warps * wave_lanes), shape.smem_bytes, static_cast<hipStream_t>(stream), params);
  check(hipGetLastError(), "hipLaunchKernelGGL", shape);
}

}  // namespace tessel::hip
