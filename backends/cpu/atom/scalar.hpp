// tessel/cpu/atom/scalar.hpp — the CPU's scalar atom (one lane): the oracle.
#pragma once
#include "tessel/core/scalar_atom.hpp"

namespace tessel::cpu {
using scalar = scalar_atom<1>;
static_assert(valid_atom<scalar>(), "cpu scalar atom: maps must cover its tiles");
}  // namespace tessel::cpu
