// tessel/cuda/arch/mma_sm80.hpp — the raw mma.sync instruction (sm_80 and newer).
//
// Only the instruction: D = A·B + C for one m16n8k16 tile, A and B 16-bit
// (bf16 or fp16), C and D fp32, operands in the registers PTX names. Which
// lane holds which element is the atom's business (atom/mma_m16n8k16.hpp).
// Device code only: the bodies exist in the device pass of nvcc (a host pass
// sees empty functions that nothing on the host calls).
#pragma once
#include <cstdint>

#include "tessel/core/config.hpp"
#include "tessel/core/element.hpp"

namespace tessel::cuda::arch {

// d[4] += a[4]·b[2]: a holds 8 and b 4 packed 16-bit values, two per register.
TESSEL_DEVICE void mma_m16n8k16(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2], bf16) {
#if TESSEL_DEVICE_PASS
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  (void)d, (void)a, (void)b;
#endif
}

TESSEL_DEVICE void mma_m16n8k16(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2], fp16) {
#if TESSEL_DEVICE_PASS
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  (void)d, (void)a, (void)b;
#endif
}

}  // namespace tessel::cuda::arch
