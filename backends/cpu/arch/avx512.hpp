// tessel/cpu/arch/avx512.hpp — isa_ops for AVX-512 F/BW/DQ (16 floats per register).
//
// Include only from a translation unit compiled with -mavx512f -mavx512bw -mavx512dq.
#pragma once
#include <immintrin.h>

#include "tessel/cpu/arch/avx2.hpp"  // transpose8x8_ps (ymm halves)

namespace tessel::cpu {

template <> struct isa_ops<xsimd::avx512bw> {
  using arch = xsimd::avx512bw;
  using f32 = xsimd::batch<float, arch>;
  using i32 = xsimd::batch<std::int32_t, arch>;

  TESSEL_HOST_DEVICE static i32 load_u16(const std::uint16_t* p) {
    return _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  TESSEL_HOST_DEVICE static void store_u16(std::uint16_t* p, i32 v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(v));  // truncates to 16 bits
  }
  // x · y + z with one rounding. (xsimd 8's fma has no AVX-512 kernel: its
  // generic x * y + z leaves the fusing to the compiler, which may fuse either
  // product of fma(b, c, a * t).)
  TESSEL_HOST_DEVICE static f32 fma(f32 x, f32 y, f32 z) { return _mm512_fmadd_ps(x, y, z); }
  // p · 2^n, n integral (vscalefps: one rounding, subnormals and ±inf handled)
  TESSEL_HOST_DEVICE static f32 scale2(f32 p, f32 n) { return _mm512_scalef_ps(p, n); }
  // 8 lines × 16: the low halves give rows 0..7, the high halves rows 8..15.
  TESSEL_HOST_DEVICE static void transpose8(const f32 (&in)[8], float* out, int ld) {
    __m256 lo[8], hi[8];
    for (int l = 0; l < 8; ++l) {
      lo[l] = _mm512_castps512_ps256(in[l]);
      hi[l] = _mm512_extractf32x8_ps(in[l], 1);
    }
    transpose8x8_ps(lo, out, ld);
    transpose8x8_ps(hi, out + 8 * ld, ld);
  }
};

}  // namespace tessel::cpu
