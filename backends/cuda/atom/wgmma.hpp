// tessel/cuda/atom/wgmma.hpp — the warpgroup tensor-core atom: wgmma m64nNk16, 16-bit in, fp32 out.
//
// A group of 4 warps (128 lanes, group_scope<4>) computes C[64×N] += A[64×16]·B[16×N],
// T = bf16 or fp16, N = 64, 128, 192 or 256. With w = lane/32 (warp of the group),
// g = (lane%32)/4 and t = lane%4 (PTX ISA, "wgmma .m64nNk16 register fragments"):
//   A (8 values, register form only):
//     (lane, v) -> (16w + g + 8·((v/2)%2),  2t + v%2 + 8·(v/4))
//   C (N/2 values):
//     (lane, v) -> (16w + g + 8·((v%4)/2),  8·(v/4) + 2t + v%2)
// — warp w holds rows 16w .. 16w+15 exactly as mma_m16n8k16 holds its 16 rows,
// once per 8-column slice. B is read by the instruction from shared memory
// only (b_in_shared): there is no B fragment. A C row lies in the 4 lanes of
// one g (lane xor 1, 2); a C column spans all four warps (c_cols_span_warps).
// The instruction is asynchronous: the tile ops issue it (mma) and retire it
// (mma_wait<N>); tile_ops_sm90.hpp. Maps are host-checkable like every atom's.
#pragma once
#include "tessel/core/atom_traits.hpp"
#include "tessel/core/element.hpp"

namespace tessel::cuda {

template <class T, int N_> struct wgmma_m64k16 {
  static_assert(sizeof(T) == 2, "wgmma_m64k16: inputs are bf16 or fp16");
  static_assert(N_ == 64 || N_ == 128 || N_ == 192 || N_ == 256, "wgmma_m64k16: N is 64, 128, 192 or 256");
  using a_type = T;
  using b_type = T;
  using c_type = float;
  static constexpr int M = 64, N = N_, K = 16;
  static constexpr int lanes = 128;
  static constexpr int a_values = 8, c_values = N / 2;
  static constexpr bool b_in_shared = true;
  static constexpr bool c_cols_span_warps = true;

  TESSEL_HOST_DEVICE static constexpr coord a_coord(int lane, int v) {
    return {16 * (lane / 32) + (lane % 32) / 4 + 8 * ((v / 2) % 2), 2 * (lane % 4) + v % 2 + 8 * (v / 4)};
  }
  TESSEL_HOST_DEVICE static constexpr coord c_coord(int lane, int v) {
    return {16 * (lane / 32) + (lane % 32) / 4 + 8 * ((v % 4) / 2), 8 * (v / 4) + 2 * (lane % 4) + v % 2};
  }
  // Rows g (v % 4 < 2: first value 0) and g + 8 (first value 2).
  TESSEL_HOST_DEVICE static constexpr int c_first_in_row(int v) { return v & 2; }

  static constexpr int c_row_xor_count = 2;
  static constexpr int c_row_xor[2] = {1, 2};
  static constexpr int c_col_xor_count = 3;  // within a warp; the other warps hold the other rows
  static constexpr int c_col_xor[3] = {4, 8, 16};
};

static_assert(valid_atom<wgmma_m64k16<bf16, 256>>() && valid_atom<wgmma_m64k16<fp16, 128>>() &&
                  valid_atom<wgmma_m64k16<bf16, 64>>() && valid_atom<wgmma_m64k16<fp16, 192>>(),
              "wgmma_m64k16: maps must cover A and C (C exactly once)");

}  // namespace tessel::cuda
