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
  // the lanes where x < low are zeroed by the mask, not computed (NLT_UQ keeps NaN)
  TESSEL_HOST_DEVICE static f32 scale2_or_zero(f32 p, f32 n, f32 x, f32 low) {
    return _mm512_maskz_scalef_ps(_mm512_cmp_ps_mask(x, low, _CMP_NLT_UQ), p, n);
  }
  // vmaxps / vminps return their second operand where either is NaN (or where equal)
  TESSEL_HOST_DEVICE static f32 max_or_x(f32 c, f32 x) { return _mm512_max_ps(c, x); }
  TESSEL_HOST_DEVICE static f32 min_or_x(f32 c, f32 x) { return _mm512_min_ps(c, x); }
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
  // 16 bf16 patterns by vcvtneps2bf16 (AVX512_BF16; written by its encoding,
  // so no -m flag: run only where the CPU has it, as on every CPU with AMX).
  TESSEL_HOST_DEVICE static void store_bf16_ne(std::uint16_t* p, f32 v) {
    __m256i r;
    asm("vcvtneps2bf16 %1, %0" : "=v"(r) : "v"(__m512(v)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), r);
  }
  // (isa_ops.hpp) Lanes after each level (quad q = lanes 4q..4q+3): a[k] quads
  // 0, 1: row 2k, c < 8; quads 2, 3: row 2k + 1; b[k] quad q: row 4k + q, c < 4;
  // c[k] quad q: rows 8k + q (c < 2), 8k + 4 + q; d lane 4q + j: row q + 4j.
  template <class Op> TESSEL_HOST_DEVICE static void fold16(const f32 (&x)[16], Op op, float* out) {
    f32 a[8], b[4], c[2];
    for (int k = 0; k < 8; ++k)
      a[k] = op(f32(_mm512_shuffle_f32x4(x[2 * k], x[2 * k + 1], 0x44)),   // quads 0, 1 of each: c < 8
                f32(_mm512_shuffle_f32x4(x[2 * k], x[2 * k + 1], 0xee)));  // quads 2, 3: c + 8
    for (int k = 0; k < 4; ++k)
      b[k] = op(f32(_mm512_shuffle_f32x4(a[2 * k], a[2 * k + 1], 0x88)),   // quads 0, 2: c < 4
                f32(_mm512_shuffle_f32x4(a[2 * k], a[2 * k + 1], 0xdd)));  // quads 1, 3: c + 4
    for (int k = 0; k < 2; ++k) {
      const __m512d lo = _mm512_unpacklo_pd(_mm512_castps_pd(b[2 * k]), _mm512_castps_pd(b[2 * k + 1]));
      const __m512d hi = _mm512_unpackhi_pd(_mm512_castps_pd(b[2 * k]), _mm512_castps_pd(b[2 * k + 1]));
      c[k] = op(f32(_mm512_castpd_ps(lo)), f32(_mm512_castpd_ps(hi)));
    }
    const f32 d = op(f32(_mm512_shuffle_ps(c[0], c[1], 0x88)), f32(_mm512_shuffle_ps(c[0], c[1], 0xdd)));
    alignas(64) float lane[16];
    d.store_aligned(lane);
    for (int q = 0; q < 4; ++q)
      for (int j = 0; j < 4; ++j) out[q + 4 * j] = lane[4 * q + j];
  }
};

}  // namespace tessel::cpu
