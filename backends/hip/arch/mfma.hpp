// tessel/hip/arch/mfma.hpp — the raw MFMA instructions the HIP backend uses.
//
// Contract: one function per instruction, operands in the builtin's own vector
// types, no layout knowledge (that is atom/mfma_32x32x8.hpp). cbsz = abid =
// blgp = 0 (no broadcast, no lane-group rotation), so the operand layouts are
// exactly the ones in AMD's Matrix Instruction Calculator.
//
//   mfma_32x32x8_bf16: D = A·B + C, A 32×8 bf16, B 8×32 bf16, C/D 32×32 fp32
//     gfx90a: v_mfma_f32_32x32x8bf16_1k   gfx940+: v_mfma_f32_32x32x8_bf16
//   mfma_32x32x8_f16:  the same with fp16 inputs
//     gfx90a: v_mfma_f32_32x32x8f16       gfx940+: v_mfma_f32_32x32x8_f16
//
// The instructions exist on CDNA2 and CDNA3 only. The device pass for any other
// chip stops with #error: `__has_builtin` says yes there and the backend then
// crashes ("Cannot select: intrinsic"), so chips are named explicitly. The host
// pass (clang's, and g++ for host-only tests) sees bodies that are never run.
// This header is the one place of the backend that tests chip macros.
#pragma once
#include "tessel/core/config.hpp"

#if TESSEL_DEVICE_PASS
#if defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define TESSEL_HIP_MFMA_32X32X8 1
#else
#error "tessel HIP backend: MFMA 32x32x8 bf16/f16 needs gfx90a or gfx940/gfx941/gfx942; set CMAKE_HIP_ARCHITECTURES"
#endif
#endif

namespace tessel::hip::arch {

// GCC-style vectors: the builtins' own operand types, and parseable by g++.
typedef float f32x16 __attribute__((__vector_size__(64)));
typedef short i16x4 __attribute__((__vector_size__(8)));  // 4 bf16 bit patterns
typedef _Float16 f16x4 __attribute__((__vector_size__(8)));

// c = a·b + c. (The accumulator goes by reference: a 64-byte vector by value
// would change the host ABI under g++ without AVX-512.)
TESSEL_DEVICE void mfma_32x32x8_bf16(f32x16& c, i16x4 a, i16x4 b) {
#if defined(TESSEL_HIP_MFMA_32X32X8)
  c = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, c, 0, 0, 0);
#else
  (void)a, (void)b, (void)c;
  __builtin_trap();  // host pass: never called (MFMA is a wavefront instruction)
#endif
}

TESSEL_DEVICE void mfma_32x32x8_f16(f32x16& c, f16x4 a, f16x4 b) {
#if defined(TESSEL_HIP_MFMA_32X32X8)
  c = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c, 0, 0, 0);
#else
  (void)a, (void)b, (void)c;
  __builtin_trap();
#endif
}

}  // namespace tessel::hip::arch
