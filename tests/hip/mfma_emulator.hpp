// tests/hip/mfma_emulator.hpp — v_mfma_f32_32x32x8{bf16_1k,f16} on one emulated wavefront.
//
// Written from AMD's definition of the instruction (CDNA2/CDNA3 ISA guides,
// Matrix Instruction Calculator, cbsz = abid = blgp = 0), NOT from tessel's atom
// maps: the test holds the atom to this. In the ISA's terms, for the 64 lanes
// of a wavefront:
//   SRC0 (A, 32×8, two VGPRs per lane):  A[i][k] is in lane i + 32·(k/4),
//        VGPR (k%4)/2 of the pair, bits [16·(k%2), 16·(k%2) + 16)
//   SRC1 (B, 8×32, two VGPRs per lane):  B[k][j] is in lane j + 32·(k/4),
//        same VGPR and bit position
//   SRC2 / VDST (C, D, 32×32 fp32, sixteen VGPRs per lane):
//        D[i][j] is in lane j + 32·((i/4)%2), VGPR 4·(i/8) + i%4
//   D = A·B + C. Products of 16-bit inputs are exact in fp32; here the sum is
//   formed in double and rounded to fp32 once (the hardware rounds along the
//   way: the tests' tolerance allows a few fp32 roundings, not layout errors).
#pragma once
#include <cstdint>

#include "tessel/core/element.hpp"

namespace tessel::test {

struct wave_registers {
  std::uint32_t a[64][2];  // SRC0 VGPR pair per lane
  std::uint32_t b[64][2];  // SRC1 VGPR pair per lane
  float c[64][16];         // SRC2 / VDST
};

// The 16-bit operand value in `regs` at (lane, element e of the lane's 4).
inline std::uint16_t half_bits(const std::uint32_t (&regs)[2], int e) {
  return std::uint16_t(regs[e / 2] >> (16 * (e % 2)));
}

template <class T> double input_value(std::uint16_t bits) { return double(to_float(T::from_bits(bits))); }

// One instruction: w.c = A·B + C for the matrices the registers hold.
template <class T> void emulate_mfma_32x32x8(wave_registers& w) {
  double A[32][8], B[8][32];
  for (int i = 0; i < 32; ++i)
    for (int k = 0; k < 8; ++k) A[i][k] = input_value<T>(half_bits(w.a[i + 32 * (k / 4)], k % 4));
  for (int k = 0; k < 8; ++k)
    for (int j = 0; j < 32; ++j) B[k][j] = input_value<T>(half_bits(w.b[j + 32 * (k / 4)], k % 4));
  float D[64][16];
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) {
      const int lane = j + 32 * ((i / 4) % 2), reg = 4 * (i / 8) + i % 4;
      double d = w.c[lane][reg];
      for (int k = 0; k < 8; ++k) d += A[i][k] * B[k][j];
      D[lane][reg] = float(d);
    }
  for (int l = 0; l < 64; ++l)
    for (int r = 0; r < 16; ++r) w.c[l][r] = D[l][r];
}

// Where the ISA puts D[i][j] (for tests that need the inverse direction).
struct isa_c_slot {
  int lane, reg;
};
inline isa_c_slot isa_c_place(int i, int j) { return {j + 32 * ((i / 4) % 2), 4 * (i / 8) + i % 4}; }

}  // namespace tessel::test
