// tessel/cpu/atom/simd.hpp — the CPU's SIMD FMA atom: an MR × NR outer-product step.
//
// One lane (the SIMD thread) computes C[MR×NR] += A[MR×1] · B[1×NR]: a column
// of A broadcast against a row of B held in NR / W vector registers (W = the
// arch's float lanes). The maps (lanes = 1):
//   A: (0, v) -> (v, 0)          v < MR   (the broadcast column)
//   B: (0, v) -> (0, v)          v < NR   (the vector row)
//   C: (0, v) -> (v / NR, v % NR)         (a row-major micro-tile)
// so a C fragment is a contiguous row-major MR × NR block: the policy's
// micro-kernel (policy_simd.hpp) keeps it in registers across a packed K chunk.
// Templated on the xsimd arch tag: every ISA translation unit instantiates its
// own copy (no out-of-line symbol is shared between -m flags).
#pragma once
#include <xsimd/xsimd.hpp>

#include "tessel/core/atom_traits.hpp"

namespace tessel::cpu {

template <class Arch, int MR_, int NR_> struct simd_atom {
  using arch = Arch;
  using vec = xsimd::batch<float, Arch>;
  static constexpr int width = int(vec::size);
  static_assert(NR_ % width == 0, "simd_atom: NR must be a whole number of vectors");

  using a_type = float;
  using b_type = float;
  using c_type = float;
  static constexpr int M = MR_, N = NR_, K = 1;
  static constexpr int lanes = 1;
  static constexpr int a_values = MR_, b_values = NR_, c_values = MR_ * NR_;
  TESSEL_HOST_DEVICE static constexpr coord a_coord(int, int v) { return {v, 0}; }
  TESSEL_HOST_DEVICE static constexpr coord b_coord(int, int v) { return {0, v}; }
  TESSEL_HOST_DEVICE static constexpr coord c_coord(int, int v) { return {v / NR_, v % NR_}; }
  TESSEL_HOST_DEVICE static constexpr int c_first_in_row(int v) { return v - v % NR_; }

  // c(r, n) = fma(a(r), b(n), c(r, n)): one fused rounding, like the micro-kernel.
  TESSEL_HOST_DEVICE static void mma(float (&c)[c_values], const float (&a)[a_values], const float (&b)[b_values]) {
    for (int r = 0; r < MR_; ++r) {
      const vec ar(a[r]);
      for (int n = 0; n < NR_; n += width) {
        const vec acc = vec::load_unaligned(&c[r * NR_ + n]);
        xsimd::fma(ar, vec::load_unaligned(&b[n]), acc).store_unaligned(&c[r * NR_ + n]);
      }
    }
  }

  // One lane holds the whole micro-tile: no cross-lane exchange.
  static constexpr int c_row_xor_count = 0;
  static constexpr int c_row_xor[1] = {0};
  static constexpr int c_col_xor_count = 0;
  static constexpr int c_col_xor[1] = {0};
};

}  // namespace tessel::cpu
