// tessel/cuda/arch/cluster.hpp — the raw thread-block-cluster instructions (sm_90).
//
// A cluster is a group of blocks launched together on neighbouring SMs; each
// can read, write and arrive on the others' shared memory ("distributed shared
// memory"). Here:
//   cluster_rank()              this block's rank in its cluster (%cluster_ctarank)
//   cluster_sync()              every non-exited thread of every block of the
//                               cluster arrives (release) and waits (acquire):
//                               after barrier init, before any remote access;
//                               and before a block exits while a peer may still
//                               touch its shared memory
//   peer_address(addr, rank)    the shared::cluster address of `addr` (a
//                               shared-window address of this block) in block `rank`
//   mbarrier_arrive_remote(a)   one arrival on the mbarrier at shared::cluster
//                               address `a` (release at CTA scope, the default)
//   tma_load_3d_multicast       a TMA box copy written to the same offset `dst`
//                               in every block of `mask` (bit r: rank r), its
//                               bytes completing on the mbarrier at offset
//                               `bar` in each of them (sm_90a only)
// Device code only; empty below sm_90 (never launched there).
#pragma once
#include <cstdint>

#include "tessel/core/config.hpp"
#include "tessel/cuda/arch/mbarrier.hpp"

namespace tessel::cuda::arch {

TESSEL_DEVICE int cluster_rank() {
#if TESSEL_CUDA_SM90_ASYNC
  std::uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return int(r);
#else
  return 0;
#endif
}

TESSEL_DEVICE void cluster_sync() {
#if TESSEL_CUDA_SM90_ASYNC
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
#endif
}

TESSEL_DEVICE std::uint32_t peer_address(std::uint32_t addr, int rank) {
#if TESSEL_CUDA_SM90_ASYNC
  std::uint32_t out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(out) : "r"(addr), "r"(rank));
  return out;
#else
  (void)rank;
  return addr;
#endif
}

TESSEL_DEVICE void mbarrier_arrive_remote(std::uint32_t cluster_addr) {
#if TESSEL_CUDA_SM90_ASYNC
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_addr) : "memory");
#else
  (void)cluster_addr;
#endif
}

TESSEL_DEVICE void tma_load_3d_multicast(std::uint32_t dst, const void* map, int c0, int c1, int c2, std::uint32_t bar,
                                         std::uint16_t mask) {
#if TESSEL_CUDA_SM90_ASYNC && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, "
      "{%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask)
      : "memory");
#else
  (void)dst, (void)map, (void)c0, (void)c1, (void)c2, (void)bar, (void)mask;
#endif
}

}  // namespace tessel::cuda::arch
