// tessel/core/element.hpp — element types: fp32, fp16, bf16, and their conversions.
//
// Contract: fp16 and bf16 are 16-bit storage types. Conversion from float rounds
// to nearest, ties to even; NaN stays NaN (quiet), overflow goes to ±inf, fp16
// keeps subnormals. Conversion to float is exact. All functions are usable on
// host and device and are bit-exact on both (no hardware intrinsic is assumed),
// so a CPU result and a GPU result of the same rounding agree to the bit.
#pragma once
#include <cstdint>
#include <cstring>

#include "tessel/core/config.hpp"

namespace tessel {

enum class dtype : int { f32 = 0, f16 = 1, bf16 = 2 };

inline constexpr const char* dtype_name(dtype t) {
  return t == dtype::f32 ? "fp32" : t == dtype::f16 ? "fp16" : t == dtype::bf16 ? "bf16" : "unknown";
}
inline constexpr int dtype_size(dtype t) { return t == dtype::f32 ? 4 : 2; }

TESSEL_HOST_DEVICE std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
TESSEL_HOST_DEVICE float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

struct bf16 {
  std::uint16_t bits;
  TESSEL_HOST_DEVICE static bf16 from_bits(std::uint16_t b) { bf16 r; r.bits = b; return r; }
};
struct fp16 {
  std::uint16_t bits;
  TESSEL_HOST_DEVICE static fp16 from_bits(std::uint16_t b) { fp16 r; r.bits = b; return r; }
};

TESSEL_HOST_DEVICE float to_float(float x) { return x; }
TESSEL_HOST_DEVICE float to_float(bf16 x) { return bits_float(std::uint32_t(x.bits) << 16); }

TESSEL_HOST_DEVICE float to_float(fp16 x) {
  const std::uint32_t sign = std::uint32_t(x.bits & 0x8000u) << 16;
  std::uint32_t exp = (x.bits >> 10) & 0x1fu;
  std::uint32_t man = x.bits & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (man << 13));  // inf / nan
  if (exp == 0) {
    if (man == 0) return bits_float(sign);
    // subnormal: value = man * 2^-24, exact in float
    float v = float(man) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112u) << 23) | (man << 13));
}

TESSEL_HOST_DEVICE bf16 to_bf16(float f) {
  std::uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bf16::from_bits(std::uint16_t((u >> 16) | 0x40u));  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even; carries into the exponent (and to inf) correctly
  return bf16::from_bits(std::uint16_t(u >> 16));
}

TESSEL_HOST_DEVICE fp16 to_fp16(float f) {
  const std::uint32_t u = float_bits(f);
  const std::uint16_t sign = std::uint16_t((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return fp16::from_bits(std::uint16_t(sign | 0x7e00u));  // NaN
  if (a >= 0x477ff000u) return fp16::from_bits(std::uint16_t(sign | 0x7c00u));  // rounds to >= 65520: inf
  if (a < 0x38800000u) {
    // result is subnormal (or zero): value / 2^-24 rounded to nearest even integer
    if (a < 0x33000000u) return fp16::from_bits(sign);  // below half the smallest subnormal
    const std::uint32_t exp = a >> 23;
    const std::uint32_t man = (a & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - exp;  // 14 + (112 - exp) ... bits to drop from the 24-bit mantissa
    std::uint32_t r = man >> shift;
    const std::uint32_t rem = man & ((1u << shift) - 1u);
    const std::uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return fp16::from_bits(std::uint16_t(sign | r));
  }
  // normal: rebias the exponent, round 13 bits away
  std::uint32_t r = a - 0x38000000u;  // exponent 127 -> 15
  r += 0xfffu + ((r >> 13) & 1u);
  return fp16::from_bits(std::uint16_t(sign | (r >> 13)));
}

// convert<T>(float): the element type T from a float, rounded as above.
template <class T> struct element_traits;
template <> struct element_traits<float> {
  static constexpr dtype id = dtype::f32;
  TESSEL_HOST_DEVICE static float from_float(float f) { return f; }
};
template <> struct element_traits<bf16> {
  static constexpr dtype id = dtype::bf16;
  TESSEL_HOST_DEVICE static bf16 from_float(float f) { return to_bf16(f); }
};
template <> struct element_traits<fp16> {
  static constexpr dtype id = dtype::f16;
  TESSEL_HOST_DEVICE static fp16 from_float(float f) { return to_fp16(f); }
};

template <class T> TESSEL_HOST_DEVICE T convert(float f) { return element_traits<T>::from_float(f); }
template <class T> inline constexpr dtype dtype_of = element_traits<T>::id;

}  // namespace tessel
