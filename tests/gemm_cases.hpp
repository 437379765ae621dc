// tests/gemm_cases.hpp — running one GEMM case through the public API and checking it.
//
// A case is shapes + dtypes + layout + scalars. run_case() draws fresh random
// inputs (seed printed by the suite), builds operand views with the requested
// layout (row/column-major, padded leading dimensions, batch), poisons C and a
// guard zone on each side of it and in its padding, runs tessel::gemm on the
// given device, and checks: no guard element changed, every output element
// written, relative Frobenius error under the tolerance for the output type.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel::test {

struct gemm_case {
  int m = 1, n = 1, k = 1, batch = 0;  // batch 0: rank-2 views
  dtype in = dtype::f32, out = dtype::f32;
  bool trans_a = false, trans_b = false;      // through options
  bool a_colmajor = false, b_colmajor = false, c_colmajor = false;  // through strides
  int pad = 0;                                // extra elements in every leading dimension
  bool shared_b = false;                      // rank-2 b for a batched product
  float alpha = 1.0f, beta = 0.0f;
  bool portable = false;                      // kernel_path::portable
  std::string name() const;
};
// GoogleTest prints a case by its name, not as bytes.
inline void PrintTo(const gemm_case& c, std::ostream* os) { *os << c.name(); }

struct gemm_outcome {
  double error = 0;          // vs float64 reference
  std::int64_t unwritten = 0;  // output elements still poisoned
  std::int64_t guard_hits = 0; // guard/padding elements changed
  std::vector<double> out;   // C as dense [batch, M, N]
};

// Tolerance on the relative Frobenius error, by output type (inputs are exact
// in their type, accumulation is fp32): fp32 far under 1e-4; fp16 / bf16
// dominated by the output rounding (unit roundoff 2^-11 / 2^-8 ... see .cpp).
double tolerance(dtype out, int k);

// Runs `c` on `dev` with inputs from `seed`; the same seed gives the same inputs.
gemm_outcome run_case(const gemm_case& c, const device& dev, std::uint64_t seed);

std::vector<gemm_case> edge_shape_cases();   // 0, 1, primes, tile ± 1, tall-skinny, per dtype
std::vector<gemm_case> layout_cases();       // transposes, strides, padding, alpha/beta, batch
// The same cases on kernel_path::portable (on CUDA: the sm80 kernels on any device).
std::vector<gemm_case> on_portable_path(std::vector<gemm_case> cases);

}  // namespace tessel::test
