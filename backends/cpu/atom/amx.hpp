// tessel/cpu/atom/amx.hpp — the AMX bf16 atom: one tdpbf16ps, C[16×16] fp32 += A[16×32] · B[32×16] bf16.
//
// One lane (the thread that owns the tile registers) holds whole operands, in
// the byte order of the tile registers (64-byte rows):
//   A: (0, v) -> (v / 32, v % 32)                          16 rows of 32 bf16
//   B: (0, v) -> (2·(v / 32) + v % 2, (v % 32) / 2)        VNNI: row k/2 holds the
//                                                          pairs (k, k+1) of all 16 columns
//   C: (0, v) -> (v / 16, v % 16)                          16 rows of 16 fp32
// so a C fragment of a register tile is a 1 KiB row-major block that tileloadd
// / tilestored move with a 64-byte stride (policy_amx.hpp). mma is the
// instruction's scalar definition (arch/amx.hpp, amx_dp_reference): the
// oracle the generic tile ops run on these maps.
#pragma once
#include "tessel/core/atom_traits.hpp"
#include "tessel/core/element.hpp"
#include "tessel/cpu/arch/amx.hpp"

namespace tessel::cpu {

struct amx_atom {
  using a_type = bf16;
  using b_type = bf16;
  using c_type = float;
  static constexpr int M = 16, N = 16, K = 32;
  static constexpr int lanes = 1;
  static constexpr int a_values = M * K, b_values = K * N, c_values = M * N;
  TESSEL_HOST_DEVICE static constexpr coord a_coord(int, int v) { return {v / 32, v % 32}; }
  TESSEL_HOST_DEVICE static constexpr coord b_coord(int, int v) { return {2 * (v / 32) + v % 2, (v % 32) / 2}; }
  TESSEL_HOST_DEVICE static constexpr coord c_coord(int, int v) { return {v / 16, v % 16}; }
  TESSEL_HOST_DEVICE static constexpr int c_first_in_row(int v) { return v - v % 16; }

  static void mma(float (&c)[c_values], const bf16 (&a)[a_values], const bf16 (&b)[b_values]) {
    amx_dp_reference(c, a, b);
  }

  // One lane holds the whole tile: no cross-lane exchange.
  static constexpr int c_row_xor_count = 0;
  static constexpr int c_row_xor[1] = {0};
  static constexpr int c_col_xor_count = 0;
  static constexpr int c_col_xor[1] = {0};
};

}  // namespace tessel::cpu
