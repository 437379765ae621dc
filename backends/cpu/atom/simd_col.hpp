// tessel/cpu/atom/simd_col.hpp — the CPU's column SIMD atom: C[M×1] += A[M×1] · B[1×1].
//
// One lane (the SIMD thread) holds a column of M rows (M / W vector registers,
// W = the arch's float lanes): an A column times one broadcast B value. The maps
// (lanes = 1):
//   A: (0, v) -> (v, 0)      v < M    (the vector column)
//   B: (0, 0) -> (0, 0)               (the broadcast value)
//   C: (0, v) -> (v, 0)      v < M
// so a register tile rt<atom, c, TM, TN> is M-row panels, column-major inside a
// panel: frag[i][j][v] is (i·M + v, j) — the packed A layout itself — and a
// row reduction is a vertical one (one vector op per column), a col_vector one
// value per row. Used by the attention path of policy_simd.hpp.
// Templated on the xsimd arch tag (ODR: one copy per ISA translation unit).
#pragma once
#include <xsimd/xsimd.hpp>

#include "tessel/core/atom_traits.hpp"

namespace tessel::cpu {

template <class Arch, int M_> struct simd_col_atom {
  using arch = Arch;
  using vec = xsimd::batch<float, Arch>;
  static constexpr int width = int(vec::size);
  static_assert(M_ % width == 0, "simd_col_atom: M must be a whole number of vectors");

  using a_type = float;
  using b_type = float;
  using c_type = float;
  static constexpr int M = M_, N = 1, K = 1;
  static constexpr int lanes = 1;
  static constexpr int a_values = M_, b_values = 1, c_values = M_;
  TESSEL_HOST_DEVICE static constexpr coord a_coord(int, int v) { return {v, 0}; }
  TESSEL_HOST_DEVICE static constexpr coord b_coord(int, int) { return {0, 0}; }
  TESSEL_HOST_DEVICE static constexpr coord c_coord(int, int v) { return {v, 0}; }
  TESSEL_HOST_DEVICE static constexpr int c_first_in_row(int v) { return v; }  // each value its own row

  // c(v) = fma(a(v), b, c(v)): one fused rounding, like the micro-kernels.
  TESSEL_HOST_DEVICE static void mma(float (&c)[c_values], const float (&a)[a_values], const float (&b)[b_values]) {
    const vec bv(b[0]);
    for (int v = 0; v < M_; v += width)
      xsimd::fma(vec::load_unaligned(&a[v]), bv, vec::load_unaligned(&c[v])).store_unaligned(&c[v]);
  }

  static constexpr int c_row_xor_count = 0;
  static constexpr int c_row_xor[1] = {0};
  static constexpr int c_col_xor_count = 0;
  static constexpr int c_col_xor[1] = {0};
};

}  // namespace tessel::cpu
