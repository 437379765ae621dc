// bench/peers/widen.hpp — 16-bit operands widened to fp32 for the fp32 peers
// (OpenBLAS sgemm takes bf16 / fp16 inputs as the exact fp32 values).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessel/core/element.hpp"
#include "tessel/tensor.hpp"

namespace tessel::bench {

// n values of type t (bf16 or fp16) at p, as floats (exact).
inline std::vector<float> widen(const void* p, std::size_t n, dtype t) {
  std::vector<float> out(n);
  const auto* u = static_cast<const std::uint16_t*>(p);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = t == dtype::f16 ? to_float(fp16::from_bits(u[i])) : to_float(bf16::from_bits(u[i]));
  return out;
}

}  // namespace tessel::bench
