// tessel/cpu/arch/exp2.hpp — exp2 on a float batch of any xsimd arch (~1 ulp; or ~3e-6 for bf16 results).
//
// exp2(x) = 2^n · 2^f with n = nearbyint(x), f = x − n in [−0.5, 0.5] (exact);
// 2^f by a degree-6 polynomial (Cephes exp2f coefficients, relative error
// about 1.7e-7 over the interval; its multiply-adds the fma instruction,
// isa_ops<A>::fma, so that no compiler's contraction choice changes a bit),
// or, in exp2_batch_for_bf16, by a degree-4 one (a relative-error minimax
// fit, 2.9e-6 in float arithmetic: 1/700 of bf16's rounding, 2^-9, for values
// that are rounded to bf16 next, such as the AMX attention's P; two
// multiply-adds fewer), and 2^n applied by isa_ops<A>::scale2
// (AVX-512 vscalefps; AVX2 two exact power-of-two factors), so that subnormal
// results round once, like libm. Special values:
// −inf and x <= −151 give +0, +inf and x >= 128 give +inf, NaN stays NaN.
// exp2_weight_batch / exp2_weight_batch_for_bf16 (the softmax's weights): the
// same bits for x >= −125, and +0 for x < −125 (−inf included) without an
// underflowing instruction: x is clamped at −125, where 2^f · 2^n >= 2^-125.5
// is normal, and isa_ops<A>::scale2_or_zero zeroes the lanes below. A weight
// under 2^-125 of the row's largest (1) is below fp32's rounding of the row
// sums and of O; masked (−inf) scores are the common case, and an
// underflowing SIMD multiply or scalef may take a microcode assist where
// MXCSR's flush-to-zero bit is clear (the default).
// Templated on the arch tag (ODR: each ISA translation unit has its own copy).
#pragma once
#include <cstdint>

#include <xsimd/xsimd.hpp>

#include "tessel/core/config.hpp"
#include "tessel/cpu/arch/isa_ops.hpp"

namespace tessel::cpu {

// p · 2^n for integral n in [−151, 128], rounded once (the portable way, for
// isa_ops without a scalef instruction): 2^n = 2^n1 · 2^n2 with n1 = floor(n / 2),
// both factors normal floats, p · 2^n1 exact.
template <class A> TESSEL_HOST_DEVICE xsimd::batch<float, A> scale2_by_halves(xsimd::batch<float, A> p, xsimd::batch<float, A> n) {
  using F = xsimd::batch<float, A>;
  using I = xsimd::batch<std::int32_t, A>;
  const I ni = xsimd::batch_cast<std::int32_t>(n);
  const I n1 = ni >> 1, n2 = ni - n1;
  const F s1 = xsimd::bitwise_cast<F>((n1 + I(127)) << 23), s2 = xsimd::bitwise_cast<F>((n2 + I(127)) << 23);
  return (p * s1) * s2;
}

// 2^x with 2^f by the polynomial of the given degree (6 or 4; see above);
// Weight: +0 below −125 (see above).
template <int Degree, bool Weight, class A>
TESSEL_HOST_DEVICE xsimd::batch<float, A> exp2_batch_of_degree(xsimd::batch<float, A> x) {
  static_assert(Degree == 6 || Degree == 4, "exp2: a polynomial of degree 6 or 4");
  using F = xsimd::batch<float, A>;
  constexpr float low = Weight ? -125.0f : -151.0f;
  const F given = x;
  // clamp into [low, 128] (a NaN goes through unchanged)
  x = isa_ops<A>::max_or_x(F(low), x);
  x = isa_ops<A>::min_or_x(F(128.0f), x);
  const F n = xsimd::nearbyint(x);
  const F f = x - n;
  F p;
  if constexpr (Degree == 6) {
    p = F(1.535336188319500e-4f);
    p = isa_ops<A>::fma(p, f, F(1.339887440266574e-3f));
    p = isa_ops<A>::fma(p, f, F(9.618437357674640e-3f));
    p = isa_ops<A>::fma(p, f, F(5.550332471162809e-2f));
    p = isa_ops<A>::fma(p, f, F(2.402264791363012e-1f));
    p = isa_ops<A>::fma(p, f, F(6.931472028550421e-1f));
  } else {
    p = F(9.582829714e-3f);
    p = isa_ops<A>::fma(p, f, F(5.590639981e-2f));
    p = isa_ops<A>::fma(p, f, F(2.402409886e-1f));
    p = isa_ops<A>::fma(p, f, F(6.931241964e-1f));
  }
  p = isa_ops<A>::fma(p, f, F(1.0f));
  if constexpr (Weight)
    return isa_ops<A>::scale2_or_zero(p, n, given, F(low));
  else
    return isa_ops<A>::scale2(p, n);
}
template <class A> TESSEL_HOST_DEVICE xsimd::batch<float, A> exp2_batch(xsimd::batch<float, A> x) {
  return exp2_batch_of_degree<6, false>(x);
}
template <class A> TESSEL_HOST_DEVICE xsimd::batch<float, A> exp2_batch_for_bf16(xsimd::batch<float, A> x) {
  return exp2_batch_of_degree<4, false>(x);
}
template <class A> TESSEL_HOST_DEVICE xsimd::batch<float, A> exp2_weight_batch(xsimd::batch<float, A> x) {
  return exp2_batch_of_degree<6, true>(x);
}
template <class A> TESSEL_HOST_DEVICE xsimd::batch<float, A> exp2_weight_batch_for_bf16(xsimd::batch<float, A> x) {
  return exp2_batch_of_degree<4, true>(x);
}

}  // namespace tessel::cpu
