// tessel/core/shared_tile.hpp — shared tiles: a Rows × Cols tile in block-shared memory.
//
// st<T, Rows, Cols, Layout> is a view of memory the block shares (CUDA shared
// memory, HIP LDS, a per-thread packed buffer on the CPU). Layout maps the
// logical (row, col) to an element offset; it is the backend's choice (swizzled
// on CUDA, padded on HIP, micro-panel packed on the CPU), and an op never
// depends on it. Tiles are always logical: A operand tiles are M×K, B tiles
// K×N, whatever the majorness of the matrix in global memory; `transposed()`
// gives the Cols × Rows view of the same memory.
#pragma once
#include <cstddef>

#include "tessel/core/config.hpp"

namespace tessel {

// Layout contract: static constexpr int size (elements, padding included) and
// static constexpr int offset(int r, int c). `contiguous_cols` says whether
// consecutive columns of a row are adjacent (for vector copies).
template <int R, int C, int Pad = 0> struct row_major {
  static constexpr int rows = R, cols = C, size = R * (C + Pad);
  static constexpr bool contiguous_cols = true;
  TESSEL_HOST_DEVICE static constexpr int offset(int r, int c) { return r * (C + Pad) + c; }
};
template <int R, int C, int Pad = 0> struct col_major {
  static constexpr int rows = R, cols = C, size = C * (R + Pad);
  static constexpr bool contiguous_cols = false;
  TESSEL_HOST_DEVICE static constexpr int offset(int r, int c) { return c * (R + Pad) + r; }
};
// The transpose of a layout: (r, c) of the view is (c, r) of the base.
template <class L> struct transposed_layout {
  static constexpr int rows = L::cols, cols = L::rows, size = L::size;
  static constexpr bool contiguous_cols = !L::contiguous_cols;
  TESSEL_HOST_DEVICE static constexpr int offset(int r, int c) { return L::offset(c, r); }
};

template <class T, class Layout> struct st {
  using value_type = T;
  using layout = Layout;
  static constexpr int rows = Layout::rows, cols = Layout::cols;
  static constexpr int size = Layout::size;
  T* data;
  TESSEL_HOST_DEVICE T& at(int r, int c) const { return data[Layout::offset(r, c)]; }
  TESSEL_HOST_DEVICE st<T, transposed_layout<Layout>> transposed() const { return {data}; }
};

// Carves shared tiles out of a block's shared arena, each aligned to 128 bytes.
struct smem_allocator {
  char* base;
  std::size_t used = 0;
  template <class Tile> TESSEL_HOST_DEVICE Tile take() {
    used = (used + 127) & ~std::size_t(127);
    Tile t{reinterpret_cast<typename Tile::value_type*>(base + used)};
    used += sizeof(typename Tile::value_type) * Tile::size;
    return t;
  }
  // Bytes that take<Tile>() of each Tile would need, for sizing the launch.
  template <class... Tiles> static constexpr std::size_t bytes_for() {
    std::size_t u = 0;
    ((u = ((u + 127) & ~std::size_t(127)) + sizeof(typename Tiles::value_type) * Tiles::size), ...);
    return u;
  }
};

}  // namespace tessel
