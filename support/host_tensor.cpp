// support/host_tensor.cpp — host data, random fills and the float64 reference GEMM.
#include "host_tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace tessel::support {

float host_tensor::get(std::size_t i) const {
  switch (type) {
    case dtype::f32: { float f; std::memcpy(&f, &bytes[i * 4], 4); return f; }
    case dtype::f16: { fp16 h; std::memcpy(&h.bits, &bytes[i * 2], 2); return to_float(h); }
    case dtype::bf16: { bf16 h; std::memcpy(&h.bits, &bytes[i * 2], 2); return to_float(h); }
  }
  return 0.0f;
}

void host_tensor::set(std::size_t i, float v) {
  switch (type) {
    case dtype::f32: std::memcpy(&bytes[i * 4], &v, 4); break;
    case dtype::f16: { fp16 h = to_fp16(v); std::memcpy(&bytes[i * 2], &h.bits, 2); break; }
    case dtype::bf16: { bf16 h = to_bf16(v); std::memcpy(&bytes[i * 2], &h.bits, 2); break; }
  }
}

void fill_random(host_tensor& t, std::mt19937_64& rng, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  for (std::size_t i = 0; i < t.count; ++i) t.set(i, u(rng));
}

// 0x7fa5a5a5 (fp32) and 0x7e5a (fp16/bf16): quiet NaNs no kernel produces by arithmetic.
void fill_poison(host_tensor& t) {
  for (std::size_t i = 0; i < t.count; ++i) {
    if (t.type == dtype::f32) { const std::uint32_t p = 0x7fa5a5a5u; std::memcpy(&t.bytes[i * 4], &p, 4); }
    else { const std::uint16_t p = 0x7e5au; std::memcpy(&t.bytes[i * 2], &p, 2); }
  }
}

bool is_poison(const host_tensor& t, std::size_t i) {
  if (t.type == dtype::f32) { std::uint32_t p; std::memcpy(&p, &t.bytes[i * 4], 4); return p == 0x7fa5a5a5u; }
  std::uint16_t p;
  std::memcpy(&p, &t.bytes[i * 2], 2);
  return p == 0x7e5au;
}

std::uint64_t run_seed() {
  static const std::uint64_t seed = [] {
    if (const char* s = std::getenv("TESSEL_SEED")) return std::uint64_t(std::strtoull(s, nullptr, 0));
    std::random_device rd;
    return (std::uint64_t(rd()) << 32) ^ rd();
  }();
  return seed;
}

namespace {
double element(const tensor_view& v, std::int64_t offset) {
  switch (v.type) {
    case dtype::f32: return static_cast<const float*>(v.data)[offset];
    case dtype::f16: return to_float(static_cast<const fp16*>(v.data)[offset]);
    case dtype::bf16: return to_float(static_cast<const bf16*>(v.data)[offset]);
  }
  return 0.0;
}
// (batch, row, col) -> element offset of a rank-2 or rank-3 view; rank 2 ignores batch.
std::int64_t offset(const tensor_view& v, std::int64_t z, std::int64_t r, std::int64_t c) {
  const int n = v.rank;
  std::int64_t o = r * v.stride[n - 2] + c * v.stride[n - 1];
  if (n == 3 && v.shape[0] > 1) o += z * v.stride[0];
  return o;
}
}  // namespace

// Each layer's op(A) and op(B) are decoded into dense float64 once; C(i, j)
// then sums op(A)(i, k)·op(B)(k, j) in k order from 0 (i-k-j loops, so the
// inner loop runs along rows of op(B) and C), as the plain triple loop would:
// the same additions in the same order, the same result bit for bit.
std::vector<double> reference_gemm(const tensor_view& a, const tensor_view& b, const tensor_view& c,
                                   const gemm_options& o, bool magnitudes) {
  const auto value = [magnitudes](double v) { return magnitudes ? std::fabs(v) : v; };
  const int na = a.rank, nc = c.rank;
  const std::int64_t M = c.shape[nc - 2], N = c.shape[nc - 1], Z = nc == 3 ? c.shape[0] : 1;
  const std::int64_t K = o.trans_a ? a.shape[na - 2] : a.shape[na - 1];
  std::vector<double> out(std::size_t(Z * M * N)), x(std::size_t(M * K)), y(std::size_t(K * N));
  for (std::int64_t z = 0; z < Z; ++z) {
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t k = 0; k < K; ++k)
        x[std::size_t(i * K + k)] = value(o.trans_a ? element(a, offset(a, z, k, i)) : element(a, offset(a, z, i, k)));
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t j = 0; j < N; ++j)
        y[std::size_t(k * N + j)] = value(o.trans_b ? element(b, offset(b, z, j, k)) : element(b, offset(b, z, k, j)));
    double* layer = out.data() + z * M * N;
    for (std::int64_t i = 0; i < M; ++i) {
      double* row = layer + i * N;
      for (std::int64_t j = 0; j < N; ++j) row[j] = 0.0;
      for (std::int64_t k = 0; k < K; ++k) {
        const double xv = x[std::size_t(i * K + k)];
        const double* yrow = y.data() + k * N;
        for (std::int64_t j = 0; j < N; ++j) row[j] += xv * yrow[j];
      }
      for (std::int64_t j = 0; j < N; ++j) {
        double r = value(o.alpha) * row[j];
        if (o.beta != 0.0f) r += value(o.beta) * value(element(c, offset(c, z, i, j)));
        row[j] = r;
      }
    }
  }
  return out;
}

std::vector<double> gather(const tensor_view& v) {
  const int n = v.rank;
  const std::int64_t M = v.shape[n - 2], N = v.shape[n - 1], Z = n == 3 ? v.shape[0] : 1;
  std::vector<double> out(std::size_t(Z * M * N));
  for (std::int64_t z = 0; z < Z; ++z)
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < N; ++j) out[std::size_t((z * M + i) * N + j)] = element(v, offset(v, z, i, j));
  return out;
}

double relative_error(const std::vector<double>& ref, const std::vector<double>& out) {
  if (ref.size() != out.size()) return std::numeric_limits<double>::infinity();
  double num = 0.0, den = 0.0, outn = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(out[i]) || !std::isfinite(ref[i])) return std::numeric_limits<double>::infinity();
    num += (out[i] - ref[i]) * (out[i] - ref[i]);
    den += ref[i] * ref[i];
    outn += out[i] * out[i];
  }
  if (den == 0.0) return std::sqrt(outn);
  return std::sqrt(num / den);
}

namespace {
enum class value_class { finite, nan, pos_inf, neg_inf };
value_class classify(double v) {
  if (std::isnan(v)) return value_class::nan;
  if (std::isinf(v)) return v > 0 ? value_class::pos_inf : value_class::neg_inf;
  return value_class::finite;
}
}  // namespace

position_comparison compare_positions(const std::vector<double>& ref, const std::vector<double>& x) {
  position_comparison c;
  double num = 0, den = 0, xn = 0;
  const std::size_t n = std::min(ref.size(), x.size());
  for (std::size_t i = 0; i < n; ++i) {
    const value_class r = classify(ref[i]);
    if (r != classify(x[i])) {
      ++c.mismatched;
      continue;
    }
    switch (r) {
      case value_class::nan: ++c.nan; break;
      case value_class::pos_inf: ++c.pos_inf; break;
      case value_class::neg_inf: ++c.neg_inf; break;
      case value_class::finite: {
        const double d = x[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
        xn += x[i] * x[i];
        c.max_abs = std::max(c.max_abs, std::fabs(d));
        break;
      }
    }
  }
  c.mismatched += std::max(ref.size(), x.size()) - n;
  c.relative = den > 0 ? std::sqrt(num / den) : std::sqrt(xn);
  return c;
}

}  // namespace tessel::support
