// support/reference_attention.cpp — attention forward in float64 (see the header).
#include "reference_attention.hpp"

#include <cmath>
#include <algorithm>
#include <limits>

namespace tessel::support {
namespace {
double element(const tensor_view& t, std::int64_t b, std::int64_t s, std::int64_t h, std::int64_t d) {
  const std::int64_t o = b * t.stride[0] + s * t.stride[1] + h * t.stride[2] + d * t.stride[3];
  switch (t.type) {
    case dtype::f32: return static_cast<const float*>(t.data)[o];
    case dtype::f16: return to_float(static_cast<const fp16*>(t.data)[o]);
    case dtype::bf16: return to_float(static_cast<const bf16*>(t.data)[o]);
  }
  return 0;
}
}  // namespace

attention_reference reference_attention(const tensor_view& q, const tensor_view& k, const tensor_view& v, bool causal,
                                        double scale) {
  const std::int64_t B = q.shape[0], Lq = q.shape[1], H = q.shape[2], D = q.shape[3];
  const std::int64_t Lk = k.shape[1], Hk = k.shape[2];
  const std::int64_t shift = Lk - Lq;
  attention_reference r;
  r.out.assign(std::size_t(B * Lq * H * D), 0.0);
  r.lse.assign(std::size_t(B * H * Lq), -std::numeric_limits<double>::infinity());
  std::vector<double> s(static_cast<std::size_t>(Lk));
  // One (batch, head)'s rows gathered into dense float64 arrays first ([seq][D]); the sums below run in
  // the same order as over the views (the values are the same doubles), so only the indexing is cheaper.
  std::vector<double> qh(std::size_t(Lq * D)), kh(std::size_t(Lk * D)), vh(std::size_t(Lk * D));
  const auto gather = [D](const tensor_view& t, std::int64_t b, std::int64_t h, std::int64_t len, double* to) {
    for (std::int64_t i = 0; i < len; ++i)
      for (std::int64_t d = 0; d < D; ++d) to[i * D + d] = element(t, b, i, h, d);
  };
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h) {
      const std::int64_t hk = h / (H / Hk);
      gather(q, b, h, Lq, qh.data());
      gather(k, b, hk, Lk, kh.data());
      gather(v, b, hk, Lk, vh.data());
      for (std::int64_t i = 0; i < Lq; ++i) {
        const std::int64_t visible = causal ? std::min(Lk, std::max<std::int64_t>(0, i + shift + 1)) : Lk;
        if (visible == 0) continue;  // zeros, lse = -inf
        const double* qi = qh.data() + i * D;
        double mx = -std::numeric_limits<double>::infinity();
        for (std::int64_t j = 0; j < visible; ++j) {
          const double* kj = kh.data() + j * D;
          double dot = 0;
          for (std::int64_t d = 0; d < D; ++d) dot += qi[d] * kj[d];
          s[std::size_t(j)] = dot * scale;
          mx = std::max(mx, s[std::size_t(j)]);  // a NaN score leaves mx; its exp makes the row NaN
        }
        // Every visible score −inf (none NaN): the row's sum of exponentials is
        // 0, as if it saw no key (zeros, LSE = −inf); tessel defines it so.
        const auto first = s.begin(), last = s.begin() + visible;
        if (mx == -std::numeric_limits<double>::infinity() &&
            std::none_of(first, last, [](double x) { return std::isnan(x); }))
          continue;
        double sum = 0;
        for (std::int64_t j = 0; j < visible; ++j) sum += (s[std::size_t(j)] = std::exp(s[std::size_t(j)] - mx));
        r.lse[std::size_t((b * H + h) * Lq + i)] = mx + std::log(sum);
        double* o = &r.out[std::size_t(((b * Lq + i) * H + h) * D)];
        for (std::int64_t j = 0; j < visible; ++j) {
          const double w = s[std::size_t(j)] / sum;
          const double* vj = vh.data() + j * D;
          for (std::int64_t d = 0; d < D; ++d) o[d] += w * vj[d];
        }
      }
    }
  return r;
}

}  // namespace tessel::support
