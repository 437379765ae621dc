// tessel/cuda/arch/wgmma.hpp — the raw Hopper warpgroup MMA instructions (sm_90a only).
//
// wgmma.mma_async: a warpgroup (4 consecutive warps, the first one's index a
// multiple of 4) computes D[64×256] += A[64×16]·B[16×256], A and B read from
// shared memory through 64-bit matrix descriptors, D in registers: lane l of
// warp w of the group holds, for n8 tile j, d[4j + v] at
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

// A shared-memory matrix descriptor for the 128-byte swizzle (address bits
// 4..6 xor 7..9 within 1024-byte aligned atoms): start address, leading and
// stride byte offsets (>> 4), layout type 1 = 128B swizzle (bits 62..63).
TESSEL_HOST_DEVICE constexpr std::uint64_t smem_descriptor_sw128(std::uint32_t smem_addr, std::uint32_t lead_bytes,
                                                                 std::uint32_t stride_bytes) {
  return std::uint64_t((smem_addr & 0x3ffffu) >> 4) | (std::uint64_t((lead_bytes >> 4) & 0x3fffu) << 16) |
         (std::uint64_t((stride_bytes >> 4) & 0x3fffu) << 32) | (std::uint64_t(1) << 62);
}

template <int TransA, int TransB>
TESSEL_DEVICE void wgmma_m64n256k16(float (&d)[128], std::uint64_t desc_a, std::uint64_t desc_b, bf16) {
#if TESSEL_CUDA_WGMMA
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, p, 1, 1, %130, %131;\n}\n"
      :
        "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "n"(TransA), "n"(TransB));
#else
  (void)d, (void)desc_a, (void)desc_b;
  TESSEL_CUDA_NO_WGMMA();
#endif
}

template <int TransA, int TransB>
TESSEL_DEVICE void wgmma_m64n256k16(float (&d)[128], std::uint64_t desc_a, std::uint64_t desc_b, fp16) {
#if TESSEL_CUDA_WGMMA
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, p, 1, 1, %130, %131;\n}\n"
      :
        "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "n"(TransA), "n"(TransB));
#else
  (void)d, (void)desc_a, (void)desc_b;
  TESSEL_CUDA_NO_WGMMA();
#endif
}

}  // namespace tessel::cuda::arch
