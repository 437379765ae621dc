// tessel/cuda/arch/ex2.hpp — exp2 on the SFU: ex2.approx.ftz.f32 (one instruction).
//
// Max error 2 ulp (PTX ISA), inputs and results below 2^-126 flushed to zero,
// ex2(−inf) = +0, ex2(+inf) = +inf, NaN stays NaN. Device code only.
#pragma once
#include "tessel/core/config.hpp"

namespace tessel::cuda::arch {

TESSEL_DEVICE float ex2_approx(float x) {
  float y = 0.0f;
#if TESSEL_DEVICE_PASS
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
#else
  (void)x;
#endif
  return y;
}

}  // namespace tessel::cuda::arch
