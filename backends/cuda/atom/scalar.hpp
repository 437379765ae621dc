// tessel/cuda/atom/scalar.hpp — the CUDA scalar atom (32 lanes): fp32 inputs and the oracle.
//
// Tensor cores multiply fp32 only as tf32 (10-bit mantissa), which misses
// tessel's fp32 tolerance, so fp32 GEMMs run on this atom: one FFMA per lane.
//   A: (lane, 0) -> (lane, 0)   B: (lane, 0) -> (0, 0) in every lane   C: (lane, 0) -> (lane, 0)
#pragma once
#include "tessel/core/scalar_atom.hpp"

namespace tessel::cuda {
using scalar = scalar_atom<32>;
static_assert(valid_atom<scalar>(), "cuda scalar atom: maps must cover its tiles");
}  // namespace tessel::cuda
