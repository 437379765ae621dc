// tests/p_rounding_bias.hpp — the bound on one error of GPU attention that is not the rescaling's.
//
// Where P is rounded to a 16-bit type for P·V while the row sum l adds the
// unrounded values (as FlashAttention does), equal scores all give
// p = 2^δ, δ the rounding error of c·max (at most half an ulp of c·max, here
// c·max = logit·log2 e), all rounded alike: out is biased by at most
// min(u, 2^δ − 1), u the unit roundoff of P's type (2^-8 bf16, 2^-11 fp16).
// Below logits ~1e4 that is under 4e-4.
#pragma once
#include <algorithm>
#include <cmath>

namespace tessel::test {

inline double p_rounding_bias(bool p_is_bf16, double logit) {
  const double u = std::ldexp(1.0, p_is_bf16 ? -8 : -11);
  const double half_ulp = std::ldexp(1.0, std::ilogb(logit * 1.4426950408889634) - 24);
  return std::min(u, std::exp2(half_ulp) - 1);
}

}  // namespace tessel::test
