// tessel/ops/gemm/call.hpp — a checked GEMM request, as backends receive it.
//
// The public API validates the tensor views and reduces them to this: op(A),
// op(B) and C as strided matrices (transposes already folded into the strides),
// a batch count with per-operand batch strides (0 = shared), element types and
// scalars. Every extent fits in int; every stride is in elements.
#pragma once
#include <cstdint>

#include "tessel/core/element.hpp"

namespace tessel {

struct matrix_ref {
  const void* ptr;
  std::int64_t row_stride, col_stride, batch_stride;
};

struct gemm_call {
  matrix_ref a;  // op(A): M × K
  matrix_ref b;  // op(B): K × N
  matrix_ref c;  // C:     M × N (written)
  dtype in, out;
  int m, n, k, batch;
  float alpha, beta;
  int device;  // index of the device the operands live on (GPU backends run there)
  bool portable = false;  // kernel_path::portable: the backend's baseline kernels only
};

}  // namespace tessel
