// tessel/cpu/arch/convert.hpp — fp32 <-> fp16 / bf16 on SIMD registers, bit-exact
// with core/element.hpp (round to nearest even, fp16 subnormals kept, overflow
// to ±inf, NaN -> the same quiet NaN as the scalar code).
//
// Written once on xsimd int32 / float batches of any arch; only the 16-bit
// memory access comes from isa_ops<Arch>. No F16C instruction is used, so the
// AVX2 path needs nothing beyond -mavx2 -mfma, and the results do not depend
// on the MXCSR flush-to-zero / denormals-are-zero bits.
#pragma once
#include <cstdint>

#include <xsimd/xsimd.hpp>

#include "tessel/core/element.hpp"
#include "tessel/cpu/arch/isa_ops.hpp"

namespace tessel::cpu {

template <class A> using f32v = xsimd::batch<float, A>;
template <class A> using i32v = xsimd::batch<std::int32_t, A>;

// ---- 16-bit patterns (one per int32 lane, 0..65535) -> float --------------------
template <class A> TESSEL_HOST_DEVICE f32v<A> bf16_bits_to_float(i32v<A> h) {
  return xsimd::bitwise_cast<f32v<A>>(h << 16);
}
template <class A> TESSEL_HOST_DEVICE f32v<A> fp16_bits_to_float(i32v<A> h) {
  using I = i32v<A>;
  const I e = h & I(0x7c00), m = h & I(0x3ff), sign = (h & I(0x8000)) << 16;
  const I normal = ((h & I(0x7fff)) << 13) + I(112 << 23);
  const I infnan = I(0x7f800000) | (m << 13);
  // subnormal or zero: man · 2^-24, exact (a normal float)
  const I sub = xsimd::bitwise_cast<I>(xsimd::batch_cast<float>(m) * f32v<A>(1.0f / 16777216.0f));
  const I r = xsimd::select(e == I(0), sub, xsimd::select(e == I(0x7c00), infnan, normal));
  return xsimd::bitwise_cast<f32v<A>>(r | sign);
}

// ---- float -> 16-bit patterns (in the low half of each int32 lane) --------------
template <class A> TESSEL_HOST_DEVICE i32v<A> float_to_bf16_bits(f32v<A> f) {
  using I = i32v<A>;
  const I u = xsimd::bitwise_cast<I>(f);
  const I hi = (u >> 16) & I(0xffff);  // arithmetic shift: mask back to the logical value
  const I rounded = ((u + I(0x7fff) + (hi & I(1))) >> 16) & I(0xffff);
  const I nan = hi | I(0x40);
  return xsimd::select((u & I(0x7fffffff)) > I(0x7f800000), nan, rounded);
}
template <class A> TESSEL_HOST_DEVICE i32v<A> float_to_fp16_bits(f32v<A> f) {
  using I = i32v<A>;
  const I u = xsimd::bitwise_cast<I>(f);
  const I sign = (u >> 16) & I(0x8000);
  const I a = u & I(0x7fffffff);  // non-negative: signed compares are exact
  // normal: rebias the exponent, round 13 bits away (ties to even)
  const I r = a - I(0x38000000);
  const I normal = (r + I(0xfff) + ((r >> 13) & I(1))) >> 13;
  // subnormal: |f| + 0.5 rounds |f| to a multiple of 2^-24 (the fp16 subnormal step) by RNE
  const I sub = xsimd::bitwise_cast<I>(xsimd::bitwise_cast<f32v<A>>(a) + f32v<A>(0.5f)) - I(0x3f000000);
  I out = xsimd::select(a < I(0x38800000), sub, normal);
  out = xsimd::select(a >= I(0x477ff000), I(0x7c00), out);
  out = xsimd::select(a > I(0x7f800000), I(0x7e00), out);
  return (out | sign) & I(0xffff);
}

// ---- W elements of T in memory <-> a float batch ------------------------------
template <class A> TESSEL_HOST_DEVICE f32v<A> load_as_float(const float* p) { return f32v<A>::load_unaligned(p); }
template <class A> TESSEL_HOST_DEVICE f32v<A> load_as_float(const bf16* p) {
  return bf16_bits_to_float<A>(isa_ops<A>::load_u16(reinterpret_cast<const std::uint16_t*>(p)));
}
template <class A> TESSEL_HOST_DEVICE f32v<A> load_as_float(const fp16* p) {
  return fp16_bits_to_float<A>(isa_ops<A>::load_u16(reinterpret_cast<const std::uint16_t*>(p)));
}
template <class A> TESSEL_HOST_DEVICE void store_from_float(float* p, f32v<A> v) { v.store_unaligned(p); }
template <class A> TESSEL_HOST_DEVICE void store_from_float(bf16* p, f32v<A> v) {
  isa_ops<A>::store_u16(reinterpret_cast<std::uint16_t*>(p), float_to_bf16_bits<A>(v));
}
template <class A> TESSEL_HOST_DEVICE void store_from_float(fp16* p, f32v<A> v) {
  isa_ops<A>::store_u16(reinterpret_cast<std::uint16_t*>(p), float_to_fp16_bits<A>(v));
}

}  // namespace tessel::cpu
