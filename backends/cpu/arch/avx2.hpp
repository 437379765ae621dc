// tessel/cpu/arch/avx2.hpp — isa_ops for AVX2 + FMA (8 floats per register).
//
// Include only from a translation unit compiled with -mavx2 -mfma.
#pragma once
#include <immintrin.h>

#include "tessel/core/config.hpp"
#include "tessel/cpu/arch/exp2.hpp"
#include "tessel/cpu/arch/isa_ops.hpp"

namespace tessel::cpu {

// The 8 × 8 float transpose: in[l] holds line l; out + k·ld receives column k.
// (l, k) -> (k, l). Always inlined: it is shared by the AVX2 and AVX-512 paths.
TESSEL_HOST_DEVICE void transpose8x8_ps(const __m256 (&r)[8], float* out, int ld) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps(out + 0 * ld, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(out + 1 * ld, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(out + 2 * ld, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(out + 3 * ld, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(out + 4 * ld, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(out + 5 * ld, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(out + 6 * ld, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(out + 7 * ld, _mm256_permute2f128_ps(u3, u7, 0x31));
}

template <> struct isa_ops<xsimd::fma3<xsimd::avx2>> {
  using arch = xsimd::fma3<xsimd::avx2>;
  using f32 = xsimd::batch<float, arch>;
  using i32 = xsimd::batch<std::int32_t, arch>;
  TESSEL_HOST_DEVICE static f32 fma(f32 x, f32 y, f32 z) { return _mm256_fmadd_ps(x, y, z); }  // one rounding

  TESSEL_HOST_DEVICE static i32 load_u16(const std::uint16_t* p) {
    return _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  TESSEL_HOST_DEVICE static void store_u16(std::uint16_t* p, i32 v) {
    const __m256i low = _mm256_and_si256(v, _mm256_set1_epi32(0xffff));  // packus saturates: keep 0..65535
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(low, low), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
  }
  // p · 2^n, n integral in [−151, 128] (exp2.hpp)
  TESSEL_HOST_DEVICE static f32 scale2(f32 p, f32 n) { return scale2_by_halves<arch>(p, n); }
  // +0 where x < low (LT_OQ: false for NaN), else scale2
  TESSEL_HOST_DEVICE static f32 scale2_or_zero(f32 p, f32 n, f32 x, f32 low) {
    return _mm256_andnot_ps(_mm256_cmp_ps(x, low, _CMP_LT_OQ), scale2(p, n));
  }
  // vmaxps / vminps return their second operand where either is NaN (or where equal)
  TESSEL_HOST_DEVICE static f32 max_or_x(f32 c, f32 x) { return _mm256_max_ps(c, x); }
  TESSEL_HOST_DEVICE static f32 min_or_x(f32 c, f32 x) { return _mm256_min_ps(c, x); }
  TESSEL_HOST_DEVICE static void transpose8(const f32 (&in)[8], float* out, int ld) {
    const __m256 r[8] = {in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7]};
    transpose8x8_ps(r, out, ld);
  }
  // (isa_ops.hpp) Lanes after each level: a[r] row r, c < 8; b[k] half h: row
  // 2k + h, c < 4; c[k] half h: rows 4k + h (c < 2), 4k + 2 + h; d[k] lane
  // 4h + j: row 8k + h + 2j.
  template <class Op> TESSEL_HOST_DEVICE static void fold16(const f32 (&x)[32], Op op, float* out) {
    f32 a[16], b[8], c[4], d[2];
    for (int r = 0; r < 16; ++r) a[r] = op(x[2 * r], x[2 * r + 1]);
    for (int k = 0; k < 8; ++k)
      b[k] = op(f32(_mm256_permute2f128_ps(a[2 * k], a[2 * k + 1], 0x20)),
                f32(_mm256_permute2f128_ps(a[2 * k], a[2 * k + 1], 0x31)));
    for (int k = 0; k < 4; ++k) {
      const __m256d lo = _mm256_unpacklo_pd(_mm256_castps_pd(b[2 * k]), _mm256_castps_pd(b[2 * k + 1]));
      const __m256d hi = _mm256_unpackhi_pd(_mm256_castps_pd(b[2 * k]), _mm256_castps_pd(b[2 * k + 1]));
      c[k] = op(f32(_mm256_castpd_ps(lo)), f32(_mm256_castpd_ps(hi)));
    }
    for (int k = 0; k < 2; ++k)
      d[k] = op(f32(_mm256_shuffle_ps(c[2 * k], c[2 * k + 1], 0x88)),   // e0, e2 of each half
                f32(_mm256_shuffle_ps(c[2 * k], c[2 * k + 1], 0xdd)));  // e1, e3
    alignas(32) float lane[16];
    d[0].store_aligned(lane);
    d[1].store_aligned(lane + 8);
    for (int k = 0; k < 2; ++k)
      for (int h = 0; h < 2; ++h)
        for (int j = 0; j < 4; ++j) out[8 * k + h + 2 * j] = lane[8 * k + 4 * h + j];
  }
};

}  // namespace tessel::cpu
