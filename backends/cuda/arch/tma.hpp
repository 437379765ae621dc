// tessel/cuda/arch/tma.hpp — the raw Hopper tensor-copy (TMA) and register-reallocation instructions.
//
// tma_load_3d: one thread asks the copy engine for the box at coordinates
// (c0, c1, c2) (innermost first, in elements) of the tensor a tensor map
// describes (tensor_map.hpp builds it on the host; it must live in kernel
// parameter, constant or global memory), written to shared memory at `dst`
// (128-byte swizzled per the map, so 1024-byte aligned), completing its bytes
// on mbarrier `bar`. Elements outside the tensor arrive as zeros, and still
// count towards the bytes.
// setmaxnreg: a warpgroup gives registers back (dec) or takes them (inc), so
// that a producer warpgroup runs on few and the consumers on many; every warp
// of the warpgroup executes it, and the kernel must be launched with a block
// register budget that covers the new totals.
// Device code only; empty below sm_90 (never launched there).
#pragma once
#include <cstdint>

#include "tessel/core/config.hpp"
#include "tessel/cuda/arch/mbarrier.hpp"

namespace tessel::cuda::arch {

TESSEL_DEVICE void tma_load_3d(std::uint32_t dst, const void* map, int c0, int c1, int c2, std::uint32_t bar) {
#if TESSEL_CUDA_SM90_ASYNC
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
#else
  (void)dst, (void)map, (void)c0, (void)c1, (void)c2, (void)bar;
#endif
}

// Fetches a tensor map into the copy engine's cache ahead of its first use.
TESSEL_DEVICE void tma_prefetch_map(const void* map) {
#if TESSEL_CUDA_SM90_ASYNC
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
#else
  (void)map;
#endif
}

template <int Registers> TESSEL_DEVICE void setmaxnreg_dec() {
#if TESSEL_CUDA_SM90_ASYNC && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
#endif
}
template <int Registers> TESSEL_DEVICE void setmaxnreg_inc() {
#if TESSEL_CUDA_SM90_ASYNC && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
#endif
}

}  // namespace tessel::cuda::arch
