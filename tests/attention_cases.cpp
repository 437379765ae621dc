// tests/attention_cases.cpp — building, running and checking attention cases.
#include "attention_cases.hpp"

#include <cmath>
#include <random>
#include <sstream>

#include "device_buffer.hpp"
#include "host_tensor.hpp"
#include "reference_attention.hpp"

namespace tessel::test {
namespace {

constexpr std::int64_t guard = 61;

// A [b, s, h, d] view over a padded buffer, in either memory order, with a map
// of which buffer elements the view covers.
struct bshd_storage {
  std::int64_t b, s, h, d;
  bool heads_major;
  int pad;
  std::int64_t strides[4];
  std::int64_t elements;
  bshd_storage(std::int64_t b_, std::int64_t s_, std::int64_t h_, std::int64_t d_, bool hm, int pad_)
      : b(b_), s(s_), h(h_), d(d_), heads_major(hm), pad(pad_) {
    const std::int64_t row = d + pad;
    strides[3] = 1;
    if (hm) {
      strides[1] = row;
      strides[2] = s * row + pad;
      strides[0] = h * strides[2] + pad;
    } else {
      strides[2] = row;
      strides[1] = h * row + pad;
      strides[0] = s * strides[1] + pad;
    }
    elements = b * strides[0] + 1;
  }
  tensor_view view(void* data, dtype t, const device& dev) const {
    tensor_view v = tensor_view::strided(data, t, {b, s, h, d}, {strides[0], strides[1], strides[2], strides[3]}, dev);
    return v;
  }
  std::vector<bool> covered() const {
    std::vector<bool> m(std::size_t(elements), false);
    for (std::int64_t i = 0; i < b; ++i)
      for (std::int64_t j = 0; j < s; ++j)
        for (std::int64_t k = 0; k < h; ++k)
          for (std::int64_t l = 0; l < d; ++l)
            m[std::size_t(i * strides[0] + j * strides[1] + k * strides[2] + l)] = true;
    return m;
  }
};

struct buffer {
  support::host_tensor host;
  std::vector<bool> inside;  // per buffer element (guards included)
  buffer(dtype t, std::int64_t elements, const std::vector<bool>& covered)
      : host(t, std::size_t(elements + 2 * guard)), inside(std::size_t(elements + 2 * guard), false) {
    for (std::size_t i = 0; i < covered.size(); ++i) inside[i + guard] = covered[i];
    support::fill_poison(host);
  }
  void* base() { return host.bytes.data() + guard * dtype_size(host.type); }
  void fill(std::mt19937_64& rng, float lo, float hi) {
    std::uniform_real_distribution<float> u(lo, hi);
    for (std::size_t i = 0; i < inside.size(); ++i)
      if (inside[i]) host.set(i, u(rng));
  }
};

}  // namespace

std::string attention_case::name() const {
  std::ostringstream o;
  o << "b" << batch << "_q" << q_len << "_kv" << kv_len << "_h" << heads << "x" << kv_heads << "_d" << head_dim << "_"
    << dtype_name(type) << (causal ? "_causal" : "") << (scale > 0 ? "_scale" : "") << (lse ? "_lse" : "")
    << (heads_major ? "_bhsd" : "") << (pad ? "_pad" + std::to_string(pad) : "");
  return o.str();
}

double attention_tolerance(dtype t) {
  // P is rounded to the input type before P·V (as FlashAttention does) and out
  // is rounded once: unit roundoff 2^-8 (bf16), 2^-11 (fp16); fp32 stays fp32.
  return t == dtype::bf16 ? 1e-2 : t == dtype::f16 ? 2e-3 : 1e-5;
}

attention_outcome run_attention(const attention_case& c, const device& dev, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const bshd_storage sq(c.batch, c.q_len, c.heads, c.head_dim, c.heads_major, c.pad);
  const bshd_storage skv(c.batch, c.kv_len, c.kv_heads, c.head_dim, c.heads_major, c.pad);
  buffer q(c.type, sq.elements, sq.covered()), k(c.type, skv.elements, skv.covered()),
      v(c.type, skv.elements, skv.covered()), out(c.type, sq.elements, sq.covered());
  // Scores of a few units: softmax neither flat nor one-hot.
  q.fill(rng, -1.0f, 1.0f);
  k.fill(rng, -1.0f, 1.0f);
  v.fill(rng, -1.0f, 1.0f);
  std::vector<bool> lse_cover(std::size_t(c.batch * c.heads * c.q_len), true);
  buffer lse(dtype::f32, std::int64_t(lse_cover.size()), lse_cover);
  const buffer out_before = out, lse_before = lse;

  const double scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(double(c.head_dim));
  const support::attention_reference ref = support::reference_attention(
      sq.view(q.base(), c.type, device::host()), skv.view(k.base(), c.type, device::host()),
      skv.view(v.base(), c.type, device::host()), c.causal, scale);

  support::device_buffer dq(dev, q.host.bytes.size()), dk(dev, k.host.bytes.size()), dv(dev, v.host.bytes.size()),
      dout(dev, out.host.bytes.size()), dl(dev, lse.host.bytes.size());
  dq.upload(q.host.data(), q.host.bytes.size());
  dk.upload(k.host.data(), k.host.bytes.size());
  dv.upload(v.host.data(), v.host.bytes.size());
  dout.upload(out.host.data(), out.host.bytes.size());
  dl.upload(lse.host.data(), lse.host.bytes.size());
  const auto at = [](support::device_buffer& b, dtype t) { return static_cast<char*>(b.data()) + guard * dtype_size(t); };
  attention_options o;
  o.causal = c.causal;
  o.scale = c.scale;
  if (c.lse) o.lse = tensor_view::contiguous(at(dl, dtype::f32), dtype::f32, {c.batch, c.heads, c.q_len}, dev);
  attention(sq.view(at(dq, c.type), c.type, dev), skv.view(at(dk, c.type), c.type, dev),
            skv.view(at(dv, c.type), c.type, dev), sq.view(at(dout, c.type), c.type, dev), o);
  support::synchronize(dev);
  dout.download(out.host.data(), out.host.bytes.size());
  dl.download(lse.host.data(), lse.host.bytes.size());

  attention_outcome r;
  const std::size_t es = std::size_t(dtype_size(c.type));
  for (std::size_t i = 0; i < out.inside.size(); ++i) {
    const bool same = std::equal(out.host.bytes.begin() + i * es, out.host.bytes.begin() + (i + 1) * es,
                                 out_before.host.bytes.begin() + i * es);
    if (!out.inside[i] && !same) ++r.guard_hits;
    if (out.inside[i] && support::is_poison(out.host, i)) ++r.unwritten;
  }
  for (std::size_t i = 0; i < lse.inside.size(); ++i) {
    const bool same = std::equal(lse.host.bytes.begin() + i * 4, lse.host.bytes.begin() + (i + 1) * 4,
                                 lse_before.host.bytes.begin() + i * 4);
    if (!lse.inside[i] && !same) ++r.guard_hits;
    if (!c.lse && !same) ++r.guard_hits;  // not asked for: must not be written
  }
  tensor_view ov = sq.view(out.base(), c.type, device::host());
  r.out.resize(ref.out.size());
  std::size_t n = 0;
  for (std::int64_t b = 0; b < c.batch; ++b)
    for (std::int64_t s = 0; s < c.q_len; ++s)
      for (std::int64_t h = 0; h < c.heads; ++h)
        for (std::int64_t d = 0; d < c.head_dim; ++d)
          r.out[n++] = out.host.get(std::size_t(guard + b * ov.stride[0] + s * ov.stride[1] + h * ov.stride[2] + d));
  r.error = support::relative_error(ref.out, r.out);
  if (c.lse) {
    for (std::size_t i = 0; i < ref.lse.size(); ++i) {
      const double got = lse.host.get(i + guard), want = ref.lse[i];
      if (std::isinf(want) || std::isinf(got) || std::isnan(got)) {
        if (!(std::isinf(want) && std::isinf(got) && got < 0)) ++r.lse_mismatch_inf;
        continue;
      }
      r.lse_error = std::max(r.lse_error, std::fabs(got - want));
    }
  }
  return r;
}

std::vector<attention_case> attention_cases(bool include_fp32) {
  std::vector<attention_case> out;
  std::vector<dtype> types = {dtype::bf16, dtype::f16};
  if (include_fp32) types.push_back(dtype::f32);
  for (dtype t : types)
    for (int d : {64, 128})
      for (int len : {1, 17, 128, 1000})
        for (bool causal : {false, true}) {
          attention_case c;
          c.type = t; c.head_dim = d; c.q_len = c.kv_len = len; c.causal = causal;
          c.heads = len > 500 ? 1 : 2; c.kv_heads = c.heads;
          out.push_back(c);
        }
  // q_len != kv_len (bottom-right causal; rows with no visible key), GQA/MQA, scale, layouts.
  const int shapes[][2] = {{17, 128}, {128, 17}, {1, 1000}, {100, 37}, {33, 200}};
  for (auto [lq, lk] : shapes)
    for (bool causal : {false, true}) {
      attention_case c;
      c.q_len = lq; c.kv_len = lk; c.causal = causal; c.batch = 2; c.heads = 4; c.kv_heads = 2;
      out.push_back(c);
    }
  {
    attention_case c;
    c.q_len = 70; c.kv_len = 90; c.heads = 6; c.kv_heads = 1; c.head_dim = 128; c.type = dtype::f16;  // MQA
    c.heads_major = true; c.pad = 8; c.scale = 0.3f; c.lse = false;
    out.push_back(c);
    c.pad = 3; c.causal = true; c.kv_heads = 3; c.heads_major = false; c.lse = true; c.type = dtype::bf16;
    out.push_back(c);
  }
  {
    attention_case c;  // the long one: 4097 keys, one head
    c.q_len = 4097; c.kv_len = 4097; c.head_dim = 64; c.causal = true;
    out.push_back(c);
  }
  return out;
}

}  // namespace tessel::test
