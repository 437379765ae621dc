// tessel/cuda/atom/mma_m16n8k16.hpp — the tensor-core atom: mma.sync m16n8k16, 16-bit in, fp32 out.
//
// One warp (32 lanes) computes C[16×8] += A[16×16]·B[16×8], T = bf16 or fp16.
// With g = lane/4 and t = lane%4 (PTX ISA, "Matrix Fragments for mma.m16n8k16"):
//   A (8 values): (lane, v) -> (g + 8·((v/2)%2),  2t + v%2 + 8·(v/4))
//   B (4 values): (lane, v) -> (2t + v%2 + 8·(v/2),  g)
//   C (4 values): (lane, v) -> (g + 8·(v/2),  2t + v%2)
// Values 2i and 2i+1 of A and B travel in one 32-bit register (low half first).
// A C row is spread over the 4 lanes of one g (lane xor 1, 2); a C column over
// the 8 lanes of one t (lane xor 4, 8, 16).
// The maps are constexpr and host-callable; mma() is the warp-wide instruction
// and exists on the device only.
#pragma once
#include <cstdint>

#include "tessel/core/atom_traits.hpp"
#include "tessel/core/element.hpp"
#include "tessel/cuda/arch/mma_sm80.hpp"

namespace tessel::cuda {

template <class T> struct mma_m16n8k16 {
  static_assert(sizeof(T) == 2, "mma_m16n8k16: inputs are bf16 or fp16");
  using a_type = T;
  using b_type = T;
  using c_type = float;
  static constexpr int M = 16, N = 8, K = 16;
  static constexpr int lanes = 32;
  static constexpr int a_values = 8, b_values = 4, c_values = 4;

  TESSEL_HOST_DEVICE static constexpr coord a_coord(int lane, int v) {
    return {lane / 4 + 8 * ((v / 2) % 2), 2 * (lane % 4) + v % 2 + 8 * (v / 4)};
  }
  TESSEL_HOST_DEVICE static constexpr coord b_coord(int lane, int v) {
    return {2 * (lane % 4) + v % 2 + 8 * (v / 2), lane / 4};
  }
  TESSEL_HOST_DEVICE static constexpr coord c_coord(int lane, int v) {
    return {lane / 4 + 8 * (v / 2), 2 * (lane % 4) + v % 2};
  }
  TESSEL_HOST_DEVICE static constexpr int c_first_in_row(int v) { return v & 2; }  // rows g (v 0, 1), g + 8 (v 2, 3)

  static constexpr int c_row_xor_count = 2;
  static constexpr int c_row_xor[2] = {1, 2};
  static constexpr int c_col_xor_count = 3;
  static constexpr int c_col_xor[3] = {4, 8, 16};

  // Two 16-bit values in one register, the first in the low half.
  TESSEL_HOST_DEVICE static std::uint32_t pack(T lo, T hi) { return std::uint32_t(lo.bits) | (std::uint32_t(hi.bits) << 16); }
  TESSEL_HOST_DEVICE static void unpack(std::uint32_t r, T& lo, T& hi) {
    lo.bits = std::uint16_t(r & 0xffffu);
    hi.bits = std::uint16_t(r >> 16);
  }

  TESSEL_DEVICE static void mma(float (&c)[4], const T (&a)[8], const T (&b)[4]) {
    const std::uint32_t ra[4] = {pack(a[0], a[1]), pack(a[2], a[3]), pack(a[4], a[5]), pack(a[6], a[7])};
    const std::uint32_t rb[2] = {pack(b[0], b[1]), pack(b[2], b[3])};
    arch::mma_m16n8k16(c, ra, rb, T{});
  }
};

static_assert(valid_atom<mma_m16n8k16<bf16>>(), "mma_m16n8k16<bf16>: maps must cover A, B and C (C exactly once)");
static_assert(valid_atom<mma_m16n8k16<fp16>>(), "mma_m16n8k16<fp16>: maps must cover A, B and C (C exactly once)");

}  // namespace tessel::cuda
