// tessel/gemm.hpp — general matrix product.
//
//   C = alpha · op(A) · op(B) + beta · C        op(X) = X, or Xᵀ when trans_x is set
//
// Shapes: op(A) is [M, K], op(B) is [K, N], C is [M, N]; with a leading batch
// dimension (rank 3) the product is done per batch entry, and an operand whose
// batch extent is 1 (or whose batch stride is 0) is shared by all entries.
// Each matrix may be row- or column-major: one of its two strides must be 1.
// C must not overlap itself (batch stride included), A or B (api/tensor.hpp).
// Inputs fp32, fp16 or bf16 (A and B of the same type); accumulation is fp32;
// C is of the input type or fp32. M, N, K >= 0: K = 0 gives C = beta·C, M or
// N = 0 does nothing. beta = 0 never reads C (NaN in C does not propagate);
// NaN and ±Inf in A, B (and C when beta != 0) propagate as IEEE arithmetic does
// (Inf·0 is NaN; alpha = 0 still forms A·B).
// All operands must be on one device; the op runs on that device's backend.
#pragma once
#include "tessel/error.hpp"
#include "tessel/tensor.hpp"

namespace tessel {

struct gemm_options {
  float alpha = 1.0f;
  float beta = 0.0f;
  bool trans_a = false;
  bool trans_b = false;
  kernel_path path = kernel_path::fastest;  // tessel/tensor.hpp
};

void gemm(const tensor_view& a, const tensor_view& b, const tensor_view& c, const gemm_options& options = {},
          const stream& s = {});

}  // namespace tessel
