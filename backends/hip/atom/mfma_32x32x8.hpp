// tessel/hip/atom/mfma_32x32x8.hpp — the 32×32×8 MFMA atom (bf16 or fp16 in, fp32 accumulate).
//
// One wavefront of 64 lanes computes C[32×32] += A[32×8] · B[8×32]. Per lane:
// 4 A values, 4 B values (16-bit, packed in two VGPRs: value e in register e/2,
// bits 16·(e%2)), 16 fp32 C values. The maps (AMD Matrix Instruction
// Calculator, CDNA2 = CDNA3, bf16 = fp16; l = lane, e / r = value index):
//
//   A: (l, e) -> (row l % 32,                      col 4·(l / 32) + e)
//   B: (l, e) -> (row 4·(l / 32) + e,              col l % 32)
//   C: (l, r) -> (row 8·(r / 4) + 4·(l / 32) + r % 4, col l % 32)
//
// A C row lives in the 32 lanes of one half-wave (lane bits 0–4 vary): row
// reductions xor lanes with 1, 2, 4, 8, 16. A C column lives in lanes j and
// j + 32: column reductions xor with 32. The maps are constexpr and host-callable;
// mma() is device code (the host pass only parses it).
#pragma once
#include <type_traits>

#include "tessel/core/atom_traits.hpp"
#include "tessel/core/element.hpp"
#include "tessel/hip/arch/mfma.hpp"

namespace tessel::hip {

template <class T> struct mfma_32x32x8 {
  static_assert(std::is_same_v<T, bf16> || std::is_same_v<T, fp16>, "mfma_32x32x8: inputs are bf16 or fp16");
  using a_type = T;
  using b_type = T;
  using c_type = float;
  static constexpr int M = 32, N = 32, K = 8;
  static constexpr int lanes = 64;
  static constexpr int a_values = 4, b_values = 4, c_values = 16;

  TESSEL_HOST_DEVICE static constexpr coord a_coord(int l, int e) { return {l % 32, 4 * (l / 32) + e}; }
  TESSEL_HOST_DEVICE static constexpr coord b_coord(int l, int e) { return {4 * (l / 32) + e, l % 32}; }
  TESSEL_HOST_DEVICE static constexpr coord c_coord(int l, int r) { return {8 * (r / 4) + 4 * (l / 32) + r % 4, l % 32}; }
  TESSEL_HOST_DEVICE static constexpr int c_first_in_row(int r) { return r; }  // each value its own row

  static constexpr int c_row_xor_count = 5;
  static constexpr int c_row_xor[5] = {1, 2, 4, 8, 16};
  static constexpr int c_col_xor_count = 1;
  static constexpr int c_col_xor[1] = {32};

  TESSEL_DEVICE static void mma(float (&c)[16], const T (&a)[4], const T (&b)[4]) {
    using in_vec = std::conditional_t<std::is_same_v<T, bf16>, arch::i16x4, arch::f16x4>;
    in_vec va, vb;
    __builtin_memcpy(&va, a, sizeof va);
    __builtin_memcpy(&vb, b, sizeof vb);
    arch::f32x16 acc;
    TESSEL_UNROLL for (int r = 0; r < 16; ++r) acc[r] = c[r];
    if constexpr (std::is_same_v<T, bf16>) arch::mfma_32x32x8_bf16(acc, va, vb);
    else arch::mfma_32x32x8_f16(acc, va, vb);
    TESSEL_UNROLL for (int r = 0; r < 16; ++r) c[r] = acc[r];
  }
};

static_assert(valid_atom<mfma_32x32x8<bf16>>(), "mfma_32x32x8<bf16>: maps must cover A, B and C (C exactly once)");
static_assert(valid_atom<mfma_32x32x8<fp16>>(), "mfma_32x32x8<fp16>: maps must cover A, B and C (C exactly once)");

}  // namespace tessel::hip
