// tessel/cuda/arch/convert.hpp — float -> fp16 / bf16 with the cvt instruction (sm_80 and newer).
//
// Bit-exact with core/element.hpp's to_fp16 / to_bf16 for every input: cvt.rn
// rounds to nearest even, keeps fp16 subnormals and overflows to ±inf like the
// software path; only NaN differs (cvt gives the canonical NaN), so a NaN is
// re-encoded as element.hpp does it (quiet, sign and high payload kept). One
// instruction per pair instead of the software path's integer sequence, which
// keeps the unrolled epilogue small. Device code only.
#pragma once
#include <cstdint>

#include "tessel/core/config.hpp"
#include "tessel/core/element.hpp"

namespace tessel::cuda::arch {

// {lo, hi} rounded to T, packed: lo in bits 0..15, hi in bits 16..31.
TESSEL_DEVICE std::uint32_t cvt_pack(float lo, float hi, fp16) {
  std::uint32_t r = 0;
#if TESSEL_DEVICE_PASS
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#endif
  // element.hpp's fp16 NaN: sign | 0x7e00
  if (lo != lo) r = (r & 0xffff0000u) | ((float_bits(lo) >> 16) & 0x8000u) | 0x7e00u;
  if (hi != hi) r = (r & 0x0000ffffu) | (float_bits(hi) & 0x80000000u) | 0x7e000000u;
  return r;
}
TESSEL_DEVICE std::uint32_t cvt_pack(float lo, float hi, bf16) {
  std::uint32_t r = 0;
#if TESSEL_DEVICE_PASS
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#endif
  // element.hpp's bf16 NaN: the high half, quieted
  if (lo != lo) r = (r & 0xffff0000u) | (float_bits(lo) >> 16) | 0x40u;
  if (hi != hi) r = (r & 0x0000ffffu) | (float_bits(hi) & 0xffff0000u) | 0x400000u;
  return r;
}

// fp16 -> float by cvt: exact, as to_float (a NaN stays a NaN, payload not kept).
TESSEL_DEVICE float widen(fp16 h) {
  float f = 0.0f;
#if TESSEL_DEVICE_PASS
  asm("cvt.f32.f16 %0, %1;\n" : "=f"(f) : "h"(h.bits));
#else
  (void)h;
#endif
  return f;
}
TESSEL_DEVICE float widen(bf16 h) { return to_float(h); }
TESSEL_DEVICE float widen(float f) { return f; }

// One value: T(v), as convert<T>(v).
template <class T> TESSEL_DEVICE T cvt(float v) { return T::from_bits(std::uint16_t(cvt_pack(v, 0.0f, T{}) & 0xffffu)); }
template <> TESSEL_DEVICE float cvt<float>(float v) { return v; }

}  // namespace tessel::cuda::arch
