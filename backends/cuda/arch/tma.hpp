// tessel/cuda/arch/tma.hpp — the raw Hopper tensor-copy (TMA) and register-reallocation instructions.
//
// tma_load_3d (tma_load_4d): one thread asks the copy engine for the box at coordinates
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
// Also: TMA stores and their bulk groups, named barriers, shared stores.
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

// The same for a 4-D tensor (coordinates c0 .. c3, innermost first).
TESSEL_DEVICE void tma_load_4d(std::uint32_t dst, const void* map, int c0, int c1, int c2, int c3, std::uint32_t bar) {
#if TESSEL_CUDA_SM90_ASYNC
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
      "[%6];\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
#else
  (void)dst, (void)map, (void)c0, (void)c1, (void)c2, (void)c3, (void)bar;
#endif
}

// The reverse copy: the box at (c0, c1, c2) of the tensor is written from
// shared memory at `src` (1024-byte aligned, 128-byte swizzled per the map);
// parts outside the tensor are not written. Completes in bulk groups:
// bulk_commit() closes a group, bulk_wait_read<N>() returns once at most N
// groups still read shared memory, bulk_wait<N>() once at most N are unfinished.
TESSEL_DEVICE void tma_store_3d(const void* map, int c0, int c1, int c2, std::uint32_t src) {
#if TESSEL_CUDA_SM90_ASYNC
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(c0), "r"(c1), "r"(c2), "r"(src)
               : "memory");
#else
  (void)map, (void)c0, (void)c1, (void)c2, (void)src;
#endif
}
TESSEL_DEVICE void bulk_commit() {
#if TESSEL_CUDA_SM90_ASYNC
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}
template <int N> TESSEL_DEVICE void bulk_wait_read() {
#if TESSEL_CUDA_SM90_ASYNC
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
#endif
}
template <int N> TESSEL_DEVICE void bulk_wait() {
#if TESSEL_CUDA_SM90_ASYNC
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}
// A barrier for the `Threads` threads (whole warps) that name barrier `id` (1 .. 15; 0 is the block's).
template <int Threads> TESSEL_DEVICE void named_barrier(int id) {
#if TESSEL_DEVICE_PASS
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "n"(Threads) : "memory");
#else
  (void)id;
#endif
}
// Arrive on barrier `id` for `Threads` threads without waiting (its other threads bar.sync on it).
template <int Threads> TESSEL_DEVICE void named_barrier_arrive(int id) {
#if TESSEL_DEVICE_PASS
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "n"(Threads) : "memory");
#else
  (void)id;
#endif
}
// 4 or 8 bytes to shared memory at a shared-window address.
TESSEL_DEVICE void st_shared(std::uint32_t addr, std::uint32_t v) {
#if TESSEL_DEVICE_PASS
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
#else
  (void)addr, (void)v;
#endif
}
TESSEL_DEVICE void st_shared(std::uint32_t addr, float v0, float v1) {
#if TESSEL_DEVICE_PASS
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(v0), "f"(v1) : "memory");
#else
  (void)addr, (void)v0, (void)v1;
#endif
}

// Four 8 × 8 matrices of 16-bit values to shared memory (sm_90): lane l gives
// the address of row l % 8 of matrix l / 8 (16 contiguous bytes); register k
// of lane l holds row l / 4, columns 2·(l % 4) .. +1 of matrix k (the mma C
// fragment layout).
TESSEL_DEVICE void stmatrix_x4(std::uint32_t addr, const std::uint32_t (&r)[4]) {
#if TESSEL_CUDA_SM90_ASYNC
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r[0]), "r"(r[1]),
               "r"(r[2]), "r"(r[3])
               : "memory");
#else
  (void)addr, (void)r;
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
