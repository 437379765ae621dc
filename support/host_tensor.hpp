// support/host_tensor.hpp — host data for tests and tools: typed storage, random
// fills, poison, and the float64 reference GEMM.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "tessel/gemm.hpp"
#include "tessel/tensor.hpp"

namespace tessel::support {

// `count` elements of `type`, stored as that type's bytes.
struct host_tensor {
  dtype type = dtype::f32;
  std::size_t count = 0;
  std::vector<unsigned char> bytes;

  host_tensor() = default;
  host_tensor(dtype t, std::size_t n) : type(t), count(n), bytes(n * dtype_size(t)) {}
  float get(std::size_t i) const;
  void set(std::size_t i, float v);  // rounds to `type` (RNE)
  void* data() { return bytes.data(); }
  const void* data() const { return bytes.data(); }
};

// Uniform in [lo, hi), rounded to the tensor's type, from `rng`.
void fill_random(host_tensor& t, std::mt19937_64& rng, float lo = -1.0f, float hi = 1.0f);
// A NaN bit pattern in every element (outputs are poisoned before each run).
void fill_poison(host_tensor& t);
bool is_poison(const host_tensor& t, std::size_t i);

// The seed for a test run: $TESSEL_SEED if set, else drawn from random_device.
std::uint64_t run_seed();

// C = alpha·op(A)·op(B) + beta·C in float64, from host views with the same
// shapes/strides the op gets; returns C as a dense [batch, M, N] array.
// beta = 0 does not read C. With magnitudes, |alpha|·|op(A)|·|op(B)| + |beta|·|C|
// instead: the scale of each element's accumulation error (a sum of K products
// in fp32 errs by at most about K·2^-24 of it, whatever the order).
std::vector<double> reference_gemm(const tensor_view& a, const tensor_view& b, const tensor_view& c,
                                   const gemm_options& o, bool magnitudes = false);

// ‖out − ref‖_F / ‖ref‖_F (‖out‖ if ref is 0); NaN or inf anywhere gives +inf.
double relative_error(const std::vector<double>& ref, const std::vector<double>& out);

// NaN-aware comparison: every element of both in one of four classes (finite,
// NaN, +inf, -inf); `mismatched` counts the positions whose classes differ (a
// length difference counts too); the errors are taken over the positions
// finite in both: ‖x − r‖/‖r‖ (‖x‖ where r is all 0) and max |x − r|.
struct position_comparison {
  std::size_t mismatched = 0;
  std::size_t nan = 0, pos_inf = 0, neg_inf = 0;  // positions where both are NaN / +inf / -inf
  double relative = 0;
  double max_abs = 0;
};
position_comparison compare_positions(const std::vector<double>& ref, const std::vector<double>& x);

// Elements of a strided view as doubles, in row-major [batch, M, N] order of its shape.
std::vector<double> gather(const tensor_view& v);

}  // namespace tessel::support
