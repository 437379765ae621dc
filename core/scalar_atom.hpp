// tessel/core/scalar_atom.hpp — the scalar atom: one fp32 multiply-add per lane.
//
// Every backend has it (each aliases it with its own lane count): it is the
// oracle the matrix-hardware atoms are checked against, and the path for
// element types the hardware does not multiply exactly (fp32 on tensor cores).
//   M = Lanes, N = 1, K = 1
//   A: (lane, 0) -> (lane, 0)     B: (lane, 0) -> (0, 0), in every lane
//   C: (lane, 0) -> (lane, 0)
#pragma once
#include "tessel/core/atom_traits.hpp"
#include "tessel/core/element.hpp"

namespace tessel {

template <int Lanes> struct scalar_atom {
  using a_type = float;
  using b_type = float;
  using c_type = float;
  static constexpr int M = Lanes, N = 1, K = 1;
  static constexpr int lanes = Lanes;
  static constexpr int a_values = 1, b_values = 1, c_values = 1;
  TESSEL_HOST_DEVICE static constexpr coord a_coord(int lane, int) { return {lane, 0}; }
  TESSEL_HOST_DEVICE static constexpr coord b_coord(int, int) { return {0, 0}; }
  TESSEL_HOST_DEVICE static constexpr coord c_coord(int lane, int) { return {lane, 0}; }
  TESSEL_HOST_DEVICE static void mma(float (&c)[1], const float (&a)[1], const float (&b)[1]) { c[0] += a[0] * b[0]; }

  // A C row lives in one lane; a C column spans all lanes.
  static constexpr int c_row_xor_count = 0;
  static constexpr int c_row_xor[1] = {0};
  static constexpr int c_col_xor_count = Lanes == 1 ? 0 : Lanes == 32 ? 5 : 6;
  static constexpr int c_col_xor[6] = {1, 2, 4, 8, 16, 32};
};

}  // namespace tessel
