// tessel/cuda/arch/wgmma.hpp — the raw Hopper warpgroup MMA instructions (sm_90a only).
//
// wgmma.mma_async: a warpgroup (4 consecutive warps, the first one's index a
// multiple of 4) computes D[64×N] += A[64×16]·B[16×N], B (and A, or A from
// registers) read from shared memory through 64-bit matrix descriptors, D in
// registers: lane l of warp w of the group holds, for n8 tile j, d[4j + v] at
//   (row 16w + l/4 + 8·(v/2), col 8j + 2·(l%4) + v%2)
// — the C fragment of mma_m16n8k16, once per n8 tile. TransA / TransB = 1
// read A / B "MN-major" (M / N contiguous), 0 K-major. The instructions are
// asynchronous: fence() before the first, commit() after the last, wait<N>()
// before D is read or the shared tiles are overwritten. Shared memory written
// by the generic proxy (st.shared, cp.async) must be made visible to them with
// fence_proxy_async() by each writing thread before the block barrier.
// Device code only; the bodies exist when compiling for sm_90a and trap on any
// other target (the host dispatch never launches them there).
#pragma once
#include <cstdint>

#include "tessel/core/config.hpp"
#include "tessel/core/element.hpp"
#include "tessel/cuda/arch/wgmma_operands.hpp"

// sm_90a's architecture-specific features (wgmma) are present in this device pass.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TESSEL_CUDA_WGMMA 1
#else
#define TESSEL_CUDA_WGMMA 0
#endif
#if TESSEL_DEVICE_PASS
#define TESSEL_CUDA_NO_WGMMA() __trap()  // wgmma on a target without it: never launched there
#else
#define TESSEL_CUDA_NO_WGMMA() ((void)0)
#endif

namespace tessel::cuda::arch {

TESSEL_DEVICE void wgmma_fence() {
#if TESSEL_CUDA_WGMMA
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
TESSEL_DEVICE void wgmma_commit() {
#if TESSEL_CUDA_WGMMA
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
template <int N> TESSEL_DEVICE void wgmma_wait() {
#if TESSEL_CUDA_WGMMA
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}
// Generic-proxy writes to shared memory become visible to the async proxy (wgmma).
TESSEL_DEVICE void fence_proxy_async() {
#if TESSEL_CUDA_WGMMA
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
// Stops the kernel (a violated precondition): the launch fails with an error.
TESSEL_DEVICE void trap() { TESSEL_CUDA_NO_WGMMA(); }

// Keeps the compiler from moving accesses to r across an asynchronous wgmma.
TESSEL_DEVICE void fence_register(float& r) {
#if TESSEL_DEVICE_PASS
  asm volatile("" : "+f"(r)::"memory");
#else
  (void)r;
#endif
}

// The same for a 64-bit value: it is computed before this point of the
// program and not moved past later asm (the sm90 consumers' descriptors,
// built before the wait for their stage).
TESSEL_DEVICE void fence_register(std::uint64_t& r) {
#if TESSEL_DEVICE_PASS
  asm volatile("" : "+l"(r)::"memory");
#else
  (void)r;
#endif
}

// A shared-memory matrix descriptor for the 128-byte swizzle (address bits
// 4..6 xor 7..9 within 1024-byte aligned atoms): start address, leading and
// stride byte offsets (>> 4), layout type 1 = 128B swizzle (bits 62..63).
TESSEL_HOST_DEVICE constexpr std::uint64_t smem_descriptor_sw128(std::uint32_t smem_addr, std::uint32_t lead_bytes,
                                                                 std::uint32_t stride_bytes) {
  return std::uint64_t((smem_addr & 0x3ffffu) >> 4) | (std::uint64_t((lead_bytes >> 4) & 0x3fffu) << 16) |
         (std::uint64_t((stride_bytes >> 4) & 0x3fffu) << 32) | (std::uint64_t(1) << 62);
}

// The wgmma instructions, for N = 64, 128, 192, 256 (accumulator d of N/2 fp32
// registers per lane, the overload chosen by its size) and T = bf16 or fp16
// (the tag argument):
//   wgmma_ss<TransA, TransB>(d, desc_a, desc_b, T{}): A and B from shared memory;
//   wgmma_rs<TransB>(d, a, desc_b, T{}): A from registers — a[0..3] of lane l of
//     warp w hold the mma_m16n8k16 A fragment (atom/mma_m16n8k16.hpp, two
//     16-bit values per register) of rows 16w .. 16w+15 of the 64 × 16 A slice.
// wgmma_ss: D = A·B + (scale_d ? D : 0); wgmma_rs: D always accumulates; scale-a = scale-b = 1.
#if TESSEL_CUDA_WGMMA
#define TESSEL_WGMMA_ASM(NREG, SHAPE, TYPE, SCALE, OPERANDS, ...)                                          \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SCALE ", 0;\nwgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE \
               "." TYPE " " TESSEL_WGMMA_D##NREG ", " OPERANDS ";\n}\n"                                     \
               : TESSEL_WGMMA_OUT##NREG                                                                   \
               : __VA_ARGS__)
#else
#define TESSEL_WGMMA_ASM(NREG, SHAPE, TYPE, SCALE, OPERANDS, ...) TESSEL_CUDA_NO_WGMMA()
#endif

// One shape: the shared × shared and register × shared forms, for bf16 and fp16.
// SS / RS: the operand text after the accumulator list (%NREG.. numbered on).
#define TESSEL_WGMMA_SHAPE(NREG, SHAPE, SS, SS_SCALE, RS)                                                        \
  template <int TransA, int TransB>                                                                              \
  TESSEL_DEVICE void wgmma_ss(float(&d)[NREG], std::uint64_t desc_a, std::uint64_t desc_b, bf16, int scale_d = 1) { \
    TESSEL_WGMMA_ASM(NREG, SHAPE, "bf16", SS_SCALE, SS, "l"(desc_a), "l"(desc_b), "n"(TransA), "n"(TransB),       \
                     "r"(scale_d));                                                                              \
    (void)d, (void)desc_a, (void)desc_b, (void)scale_d;                                                          \
  }                                                                                                              \
  template <int TransA, int TransB>                                                                              \
  TESSEL_DEVICE void wgmma_ss(float(&d)[NREG], std::uint64_t desc_a, std::uint64_t desc_b, fp16, int scale_d = 1) { \
    TESSEL_WGMMA_ASM(NREG, SHAPE, "f16", SS_SCALE, SS, "l"(desc_a), "l"(desc_b), "n"(TransA), "n"(TransB),        \
                     "r"(scale_d));                                                                              \
    (void)d, (void)desc_a, (void)desc_b, (void)scale_d;                                                          \
  }                                                                                                              \
  template <int TransB>                                                                                          \
  TESSEL_DEVICE void wgmma_rs(float(&d)[NREG], const std::uint32_t(&a)[4], std::uint64_t desc_b, bf16) {         \
    TESSEL_WGMMA_ASM(NREG, SHAPE, "bf16", "1", RS, "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),       \
                     "n"(TransB));                                                                               \
    (void)d, (void)a, (void)desc_b;                                                                              \
  }                                                                                                              \
  template <int TransB>                                                                                          \
  TESSEL_DEVICE void wgmma_rs(float(&d)[NREG], const std::uint32_t(&a)[4], std::uint64_t desc_b, fp16) {         \
    TESSEL_WGMMA_ASM(NREG, SHAPE, "f16", "1", RS, "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),        \
                     "n"(TransB));                                                                               \
    (void)d, (void)a, (void)desc_b;                                                                              \
  }

TESSEL_WGMMA_SHAPE(32, "m64n64k16", "%32, %33, p, 1, 1, %34, %35", "%36", "{%32, %33, %34, %35}, %36, p, 1, 1, %37")
TESSEL_WGMMA_SHAPE(64, "m64n128k16", "%64, %65, p, 1, 1, %66, %67", "%68",
                   "{%64, %65, %66, %67}, %68, p, 1, 1, %69")
TESSEL_WGMMA_SHAPE(96, "m64n192k16", "%96, %97, p, 1, 1, %98, %99", "%100",
                   "{%96, %97, %98, %99}, %100, p, 1, 1, %101")
TESSEL_WGMMA_SHAPE(128, "m64n256k16", "%128, %129, p, 1, 1, %130, %131", "%132",
                   "{%128, %129, %130, %131}, %132, p, 1, 1, %133")
#undef TESSEL_WGMMA_SHAPE
#undef TESSEL_WGMMA_ASM

}  // namespace tessel::cuda::arch
