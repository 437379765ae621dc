// tessel/cuda/arch/convert.hpp — float -> fp16 / bf16 with the cvt instruction (sm_80 and newer).
//
// Bit-exact with core/element.hpp's to_fp16 / to_bf16 for every input: cvt.rn
// rounds to nearest even, keeps fp16 subnormals and overflows to ±inf like the
// software path; only NaN differs (cvt gives the canonical NaN), so a NaN is
// re-encoded as element.hpp does it (quiet, sign and high payload kept). One
// instruction per pair instead of the software path's integer sequence, which
// keeps the unrolled epilogue small; cvt_pack4 converts four pairs and takes
// the NaN path only where one of them holds a NaN, cvt_pack_groups does so for
// G groups of four pairs with one test (the sm90 epilogue's round). Device code only.
#pragma once
#include <cstdint>

#include "tessel/core/config.hpp"
#include "tessel/core/element.hpp"

namespace tessel::cuda::arch {

// {lo, hi} rounded to T by cvt alone, packed: lo in bits 0..15, hi in bits
// 16..31 (a NaN comes out as cvt's canonical NaN).
TESSEL_DEVICE std::uint32_t cvt_pack_raw(float lo, float hi, fp16) {
  std::uint32_t r = 0;
#if TESSEL_DEVICE_PASS
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#else
  (void)lo, (void)hi;
#endif
  return r;
}
TESSEL_DEVICE std::uint32_t cvt_pack_raw(float lo, float hi, bf16) {
  std::uint32_t r = 0;
#if TESSEL_DEVICE_PASS
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#else
  (void)lo, (void)hi;
#endif
  return r;
}

// {lo, hi} rounded to T, packed as cvt_pack_raw, a NaN encoded as element.hpp does.
TESSEL_DEVICE std::uint32_t cvt_pack(float lo, float hi, fp16) {
  std::uint32_t r = cvt_pack_raw(lo, hi, fp16{});
  // element.hpp's fp16 NaN: sign | 0x7e00
  if (lo != lo) r = (r & 0xffff0000u) | ((float_bits(lo) >> 16) & 0x8000u) | 0x7e00u;
  if (hi != hi) r = (r & 0x0000ffffu) | (float_bits(hi) & 0x80000000u) | 0x7e000000u;
  return r;
}
TESSEL_DEVICE std::uint32_t cvt_pack(float lo, float hi, bf16) {
  std::uint32_t r = cvt_pack_raw(lo, hi, bf16{});
  // element.hpp's bf16 NaN: the high half, quieted
  if (lo != lo) r = (r & 0xffff0000u) | (float_bits(lo) >> 16) | 0x40u;
  if (hi != hi) r = (r & 0x0000ffffu) | (float_bits(hi) & 0xffff0000u) | 0x400000u;
  return r;
}

// Whether any of v[0..7] is a NaN: one unordered compare per pair, chained in
// one predicate.
TESSEL_DEVICE bool any_nan(const float (&v)[8]) {
  std::uint32_t r = 0;
#if TESSEL_DEVICE_PASS
  asm("{\n.reg .pred p;\nsetp.nan.f32 p, %1, %2;\nsetp.nan.or.f32 p, %3, %4, p;\nsetp.nan.or.f32 p, %5, %6, p;\n"
      "setp.nan.or.f32 p, %7, %8, p;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(r)
      : "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3]), "f"(v[4]), "f"(v[5]), "f"(v[6]), "f"(v[7]));
#else
  for (float f : v) r |= f != f;
#endif
  return r != 0;
}

// r[g][m] = cvt_pack(v[g][2m], v[g][2m + 1], T) for g < G, m < 4: four cvt a
// group, then the NaN encoding only where any_nan finds one in some group:
// a cvt and a setp a pair, one branch for all G groups, where cvt_pack's
// per-pair encoding costs ~10 instructions a pair NaN or not (H100: +1.5-2%
// for the GEMM with 16-bit C; one branch per round of 64 values instead of
// one per 8: another +0-1.8%, bench/notes/cuda_gemm.md).
template <class T, int G>
TESSEL_DEVICE void cvt_pack_groups(const float (&v)[G][8], std::uint32_t (&r)[G][4], T) {
  bool nan = false;
  TESSEL_UNROLL for (int g = 0; g < G; ++g) {
    TESSEL_UNROLL for (int m = 0; m < 4; ++m) r[g][m] = cvt_pack_raw(v[g][2 * m], v[g][2 * m + 1], T{});
    nan |= any_nan(v[g]);
  }
  if (nan)
    TESSEL_UNROLL for (int g = 0; g < G; ++g)
      TESSEL_UNROLL for (int m = 0; m < 4; ++m) r[g][m] = cvt_pack(v[g][2 * m], v[g][2 * m + 1], T{});
}
// One group: r[m] = cvt_pack(v[2m], v[2m + 1], T) for m < 4.
template <class T> TESSEL_DEVICE void cvt_pack4(const float (&v)[8], std::uint32_t (&r)[4], T) {
  float g[1][8];
  std::uint32_t out[1][4];
  TESSEL_UNROLL for (int i = 0; i < 8; ++i) g[0][i] = v[i];
  cvt_pack_groups(g, out, T{});
  TESSEL_UNROLL for (int m = 0; m < 4; ++m) r[m] = out[0][m];
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
