// tessel/cuda/swizzle.hpp — the shared-memory layout of the tensor-core GEMM tiles.
//
// swizzle128<Rows, Cols, ColsContiguous> stores a Rows × Cols tile of 16-bit
// elements along its contiguous dimension ("inner", length I, a multiple of 64)
// in lines of 64 elements = 128 bytes = eight 16-byte chunks; the other
// dimension ("outer", length O) counts lines. Inner extents over 64 are cut into
// panels of 64, panel after panel. Within a line, chunk q of line o is stored
// at chunk slot q xor (o % 8):
//   (o, i) -> (i / 64)·O·64 + o·64 + 8·(((i % 64) / 8) xor (o % 8)) + i % 8
// with (o, i) = (r, c) when ColsContiguous, (c, r) otherwise.
// So the 8 rows an ldmatrix reads (8 consecutive o, one chunk q) fall in 8
// different 16-byte bank groups: no bank conflicts for ldmatrix, and none for
// the 16-byte cp.async writes (4 full lines per warp).
#pragma once
#include "tessel/core/config.hpp"

namespace tessel::cuda {

template <int Rows, int Cols, bool ColsContiguous> struct swizzle128 {
  static constexpr int rows = Rows, cols = Cols, size = Rows * Cols;
  static constexpr int inner = ColsContiguous ? Cols : Rows;  // the contiguous extent
  static constexpr int outer = ColsContiguous ? Rows : Cols;
  static constexpr int chunk = 8;                             // 16-bit elements per 16 bytes
  static_assert(inner % 64 == 0, "swizzle128: the contiguous extent must be a multiple of 64 elements");
  // Consecutive columns are adjacent only within a 16-byte chunk.
  static constexpr bool contiguous_cols = false;
  static constexpr bool cols_contiguous_in_chunks = ColsContiguous;

  TESSEL_HOST_DEVICE static constexpr int offset_oi(int o, int i) {
    return (i / 64) * (outer * 64) + o * 64 + 8 * (((i % 64) / 8) ^ (o % 8)) + i % 8;
  }
  TESSEL_HOST_DEVICE static constexpr int offset(int r, int c) {
    return ColsContiguous ? offset_oi(r, c) : offset_oi(c, r);
  }
};

// Host-checkable: the layout is a bijection of the tile onto [0, size).
template <class L> constexpr bool is_bijection() {
  bool seen[L::size] = {};
  for (int r = 0; r < L::rows; ++r)
    for (int c = 0; c < L::cols; ++c) {
      const int o = L::offset(r, c);
      if (o < 0 || o >= L::size || seen[o]) return false;
      seen[o] = true;
    }
  return true;
}
static_assert(is_bijection<swizzle128<16, 128, true>>() && is_bijection<swizzle128<128, 16, false>>(),
              "swizzle128 must be a bijection");

}  // namespace tessel::cuda
