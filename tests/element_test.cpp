// tests/element_test.cpp — fp16 / bf16 conversions: round to nearest even, NaN,
// infinities and subnormals, checked against an independent float64 rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "seed.hpp"
#include "tessel/core/element.hpp"

namespace tessel::test {
namespace {

// Nearest value of a binary format with `mant` fraction bits, exponent range
// [emin, emax], to x (float64), ties to even; overflow to ±inf per IEEE
// (values >= max + half an ulp of max round to inf).
double round_format(double x, int mant, int emin, int emax) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  const double ax = std::fabs(x);
  int e = std::ilogb(ax);
  if (e < emin) e = emin;  // subnormal range: fixed quantum
  const double quantum = std::ldexp(1.0, e - mant);
  double q = ax / quantum;
  double r = std::floor(q);
  const double frac = q - r;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0.0)) r += 1.0;
  double v = r * quantum;
  const double max = std::ldexp(2.0 - std::ldexp(1.0, -mant), emax);
  if (v > max) v = std::numeric_limits<double>::infinity();
  return std::copysign(v, x);
}

TEST(Element, Bf16RoundTripsEveryValue) {
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    const bf16 h = bf16::from_bits(std::uint16_t(bits));
    const float f = to_float(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(to_float(to_bf16(f))));
      continue;
    }
    EXPECT_EQ(to_bf16(f).bits, h.bits) << "bits " << bits;
  }
}

TEST(Element, Fp16RoundTripsEveryValue) {
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    const fp16 h = fp16::from_bits(std::uint16_t(bits));
    const float f = to_float(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(to_float(to_fp16(f))));
      continue;
    }
    EXPECT_EQ(to_fp16(f).bits, h.bits) << "bits " << bits;
  }
}

TEST(Element, RoundsToNearestEvenLikeFloat64Reference) {
  std::mt19937_64 rng(case_seed("element-rne"));
  std::uniform_int_distribution<std::uint32_t> any;
  for (int i = 0; i < 2000000; ++i) {
    const float f = bits_float(any(rng));
    if (std::isnan(f)) continue;
    const double want16 = round_format(f, 10, -14, 15);
    const double wantbf = round_format(f, 7, -126, 127);
    ASSERT_EQ(double(to_float(to_fp16(f))), want16) << "fp16 of " << f;
    ASSERT_EQ(double(to_float(to_bf16(f))), wantbf) << "bf16 of " << f;
  }
}

TEST(Element, TiesGoToEven) {
  // 1 + 2^-8 is halfway between bf16 1 and 1 + 2^-7: goes to 1 (even).
  EXPECT_EQ(to_float(to_bf16(1.0f + std::ldexp(1.0f, -8))), 1.0f);
  EXPECT_EQ(to_float(to_bf16(1.0f + 3 * std::ldexp(1.0f, -8))), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(to_float(to_fp16(1.0f + std::ldexp(1.0f, -11))), 1.0f);
  EXPECT_EQ(to_float(to_fp16(65520.0f)), std::numeric_limits<float>::infinity());
  EXPECT_EQ(to_float(to_fp16(65519.0f)), 65504.0f);
  EXPECT_EQ(to_float(to_fp16(std::ldexp(1.0f, -25))), 0.0f);                      // tie to even: 0
  EXPECT_EQ(to_float(to_fp16(std::ldexp(1.5f, -25))), std::ldexp(1.0f, -24));      // above the tie
  EXPECT_TRUE(std::isnan(to_float(to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(to_float(to_fp16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(to_float(to_bf16(-std::numeric_limits<float>::infinity())), -std::numeric_limits<float>::infinity());
}

}  // namespace
}  // namespace tessel::test
