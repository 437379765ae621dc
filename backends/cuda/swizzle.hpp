// tessel/cuda/swizzle.hpp — the shared-memory layouts of the tensor-core GEMM tiles.
//
// swizzled<Rows, Cols, ColsContiguous, LineBytes> stores a Rows × Cols tile of
// 16-bit elements along its contiguous dimension ("inner", length I) in lines
// of LineBytes (128, 64 or 32) bytes = E = LineBytes / 2 elements = Q 16-byte
// chunks; the other dimension ("outer", length O) counts lines. Inner extents
// over E are cut into panels of E, panel after panel. Within a line, chunk q of
// line o is stored at chunk slot q xor ((o / (128 / LineBytes)) % Q):
//   (o, i) -> (i / E)·O·E + o·E + 8·(((i % E) / 8) xor ((o / (128 / LineBytes)) % Q)) + i % 8
// with (o, i) = (r, c) when ColsContiguous, (c, r) otherwise. That is the
// copy engine's and wgmma's swizzle of the same width (byte address bits
// 4 .. 3 + log2 Q xor bits 7 .. 6 + log2 Q, in atoms of 8 · 128 bytes for
// 128, 8 · 64 for 64), given a tile that starts on an atom boundary.
// swizzle128: the 128-byte swizzle (the 8 rows an ldmatrix reads, 8
// consecutive o and one chunk q, fall in 8 different 16-byte bank groups: no
// bank conflicts for ldmatrix, and none for the 16-byte cp.async writes, 4 full
// lines per warp). swizzle64: the 64-byte one, for a K-contiguous operand
// tile whose K extent is 32 (the sm90 GEMM's smaller stages).
#pragma once
#include "tessel/core/config.hpp"

namespace tessel::cuda {

template <int Rows, int Cols, bool ColsContiguous, int LineBytes = 128> struct swizzled {
  static constexpr int rows = Rows, cols = Cols, size = Rows * Cols;
  static constexpr int inner = ColsContiguous ? Cols : Rows;  // the contiguous extent
  static constexpr int outer = ColsContiguous ? Rows : Cols;
  static constexpr int chunk = 8;                             // 16-bit elements per 16 bytes
  static constexpr int line_bytes = LineBytes, line = LineBytes / 2, chunks = LineBytes / 16;
  static constexpr int lines_per_phase = 128 / LineBytes;     // consecutive lines that share one xor
  static_assert(LineBytes == 128 || LineBytes == 64 || LineBytes == 32, "swizzled: lines of 128, 64 or 32 bytes");
  static_assert(inner % line == 0, "swizzled: the contiguous extent must be a multiple of a line");
  static_assert(outer % 8 == 0, "swizzled: whole atoms of 8 lines");
  // Consecutive columns are adjacent only within a 16-byte chunk.
  static constexpr bool contiguous_cols = false;
  static constexpr bool cols_contiguous_in_chunks = ColsContiguous;

  TESSEL_HOST_DEVICE static constexpr int offset_oi(int o, int i) {
    return (i / line) * (outer * line) + o * line + chunk * (((i % line) / chunk) ^ ((o / lines_per_phase) % chunks)) +
           i % chunk;
  }
  TESSEL_HOST_DEVICE static constexpr int offset(int r, int c) {
    return ColsContiguous ? offset_oi(r, c) : offset_oi(c, r);
  }
};
template <int Rows, int Cols, bool ColsContiguous> using swizzle128 = swizzled<Rows, Cols, ColsContiguous, 128>;
template <int Rows, int Cols, bool ColsContiguous> using swizzle64 = swizzled<Rows, Cols, ColsContiguous, 64>;

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
static_assert(is_bijection<swizzle128<16, 128, true>>() && is_bijection<swizzle128<128, 16, false>>() &&
                  is_bijection<swizzle64<64, 32, true>>() && is_bijection<swizzle64<32, 64, false>>(),
              "swizzled must be a bijection");

// The byte-address form of the hardware swizzle (PTX ISA, "tensor copy
// swizzling modes"): a byte at offset b of an atom-aligned region lands at
// b with bits 4 .. 3 + log2 Q xored by bits 7 .. 6 + log2 Q. offset_oi must be
// that, element for element.
template <class L> constexpr bool matches_hardware_swizzle() {
  for (int o = 0; o < L::outer; ++o)
    for (int i = 0; i < L::inner; ++i) {
      const int plain = 2 * ((i / L::line) * (L::outer * L::line) + o * L::line + i % L::line);
      const int swizzled_byte = plain ^ (((plain >> 7) & (L::chunks - 1)) << 4);
      if (2 * L::offset_oi(o, i) != swizzled_byte) return false;
    }
  return true;
}
static_assert(matches_hardware_swizzle<swizzle128<64, 64, true>>() && matches_hardware_swizzle<swizzle64<64, 32, true>>() &&
                  matches_hardware_swizzle<swizzle64<64, 64, false>>(),
              "swizzled must be the copy engine's swizzle");

}  // namespace tessel::cuda
