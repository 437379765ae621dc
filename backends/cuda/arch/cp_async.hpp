// tessel/cuda/arch/cp_async.hpp — the raw cp.async instructions (sm_80 and newer).
//
// cp_async_16 copies 16 bytes global -> shared without passing through
// registers; only the first `src_bytes` (0..16) are read, the rest of the 16
// shared bytes are filled with zeros (PTX's src-size operand), so a partial or
// absent vector at a matrix edge is a zero-padded copy, not an out-of-bounds
// read. Copies are grouped by commit and awaited by wait<N> (at most N groups
// of this thread still pending). Device code only.
#pragma once
#include <cstdint>

#include "tessel/core/config.hpp"

namespace tessel::cuda::arch {

TESSEL_DEVICE void cp_async_16(std::uint32_t smem_addr, const void* gmem, int src_bytes) {
#if TESSEL_DEVICE_PASS
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr), "l"(gmem), "r"(src_bytes));
#else
  (void)smem_addr, (void)gmem, (void)src_bytes;
#endif
}

TESSEL_DEVICE void cp_async_commit() {
#if TESSEL_DEVICE_PASS
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int N> TESSEL_DEVICE void cp_async_wait() {
#if TESSEL_DEVICE_PASS
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

}  // namespace tessel::cuda::arch
