// tessel/hip/atom/scalar.hpp — the HIP scalar atom (64 lanes, one fp32 FMA per
// lane): the fp32 path and the oracle the MFMA atom is checked against.
//   A: (lane, 0) -> (lane, 0)   B: (lane, 0) -> (0, 0)   C: (lane, 0) -> (lane, 0)
#pragma once
#include "tessel/core/scalar_atom.hpp"

namespace tessel::hip {
using scalar = scalar_atom<64>;
static_assert(valid_atom<scalar>(), "hip scalar atom: maps must cover its tiles");
}  // namespace tessel::hip
