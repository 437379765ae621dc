// tessel/core/global_tile.hpp — a matrix in global memory, seen through strides.
//
// gmatrix<T> is rows × cols elements at ptr, element (r, c) at
// ptr[r·row_stride + c·col_stride]. One of the strides is 1 in every view
// tessel builds (checked by the public API); `vec16` says whether 16-byte
// vector copies along the contiguous dimension are legal (base pointer and the
// other stride both 16-byte aligned). Reads outside [0, rows) × [0, cols) give
// zero: this is how every op masks the edges of partial tiles.
#pragma once
#include <cstdint>

#include "tessel/core/element.hpp"

namespace tessel {

template <class T> struct gmatrix {
  T* ptr;
  int rows, cols;
  std::int64_t row_stride, col_stride;
  bool vec16;

  TESSEL_HOST_DEVICE bool contains(int r, int c) const { return r >= 0 && r < rows && c >= 0 && c < cols; }
  TESSEL_HOST_DEVICE T* addr(int r, int c) const { return ptr + r * row_stride + c * col_stride; }
  TESSEL_HOST_DEVICE bool row_contiguous() const { return col_stride == 1; }
  // The element as float, or 0 outside the matrix.
  TESSEL_HOST_DEVICE float get(int r, int c) const { return contains(r, c) ? to_float(*addr(r, c)) : 0.0f; }
};

}  // namespace tessel
