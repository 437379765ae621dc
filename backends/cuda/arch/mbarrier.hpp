// tessel/cuda/arch/mbarrier.hpp — the raw shared-memory barrier instructions (sm_90).
//
// An mbarrier is a 64-bit object in shared memory with an expected arrival
// count and a phase bit. A phase completes when `count` arrivals have been made
// and every byte announced with expect_tx has landed (TMA copies complete bytes
// on it); then the phase bit flips and the count resets. wait(bar, parity)
// returns once the phase with that parity has completed — a fresh barrier is in
// phase 0, so wait(bar, 1) returns at once (the "previous" phase counts as done).
// Addresses are shared-window addresses (arch::shared_address). Device code
// only; on targets before sm_90 the bodies are empty and never launched.
#pragma once
#include <cstdint>

#include "tessel/core/config.hpp"

#if TESSEL_DEVICE_PASS && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define TESSEL_CUDA_SM90_ASYNC 1
#else
#define TESSEL_CUDA_SM90_ASYNC 0
#endif

namespace tessel::cuda::arch {

TESSEL_DEVICE void mbarrier_init(std::uint32_t bar, int count) {
#if TESSEL_CUDA_SM90_ASYNC
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
#else
  (void)bar, (void)count;
#endif
}
// Makes initialised barriers visible to the other threads and to the async proxy (TMA).
TESSEL_DEVICE void mbarrier_init_fence() {
#if TESSEL_CUDA_SM90_ASYNC
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}
// One arrival that also announces `bytes` more to land on this phase.
TESSEL_DEVICE void mbarrier_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
#if TESSEL_CUDA_SM90_ASYNC
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
#else
  (void)bar, (void)bytes;
#endif
}
TESSEL_DEVICE void mbarrier_arrive(std::uint32_t bar) {
#if TESSEL_CUDA_SM90_ASYNC
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
#else
  (void)bar;
#endif
}
// Blocks until the phase of parity `parity` has completed.
TESSEL_DEVICE void mbarrier_wait(std::uint32_t bar, int parity) {
#if TESSEL_CUDA_SM90_ASYNC
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
#else
  (void)bar, (void)parity;
#endif
}

}  // namespace tessel::cuda::arch
