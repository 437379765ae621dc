// tests/attention_cases.cpp — building, running and checking attention cases.
#include "attention_cases.hpp"

#include <algorithm>
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
      if (inside[i]) host.set(i, lo == hi ? lo : u(rng));
  }
  void fill_integers(std::mt19937_64& rng, int bound) {  // uniform in [−bound, bound]
    std::uniform_int_distribution<int> u(-bound, bound);
    for (std::size_t i = 0; i < inside.size(); ++i)
      if (inside[i]) host.set(i, float(u(rng)));
  }
};

}  // namespace

std::string attention_case::name() const {
  std::ostringstream o;
  o << "b" << batch << "_q" << q_len << "_kv" << kv_len << "_h" << heads << "x" << kv_heads << "_d" << head_dim << "_"
    << dtype_name(type) << (causal ? "_causal" : "") << (scale > 0 ? "_scale" : "") << (lse ? "_lse" : "")
    << (heads_major ? "_bhsd" : "") << (pad ? "_pad" + std::to_string(pad) : "");
  if (inputs != attention_inputs::uniform)
    o << (inputs == attention_inputs::equal_scores ? "_equal" : "_integer") << "_logit" << logit;
  if (!pokes.empty()) o << "_" << pokes[0].tensor << pokes[0].s << "=" << pokes[0].value;
  if (pokes.size() > 1) o << "_and" << pokes.size() - 1;
  if (portable) o << "_portable";
  return o.str();
}

double attention_tolerance(dtype t) {
  // P is rounded to the input type before P·V (as FlashAttention does) and out
  // is rounded once: unit roundoff 2^-8 (bf16), 2^-11 (fp16); fp32 stays fp32.
  return t == dtype::bf16 ? 1e-2 : t == dtype::f16 ? 2e-3 : 1e-5;
}

struct attention_data {
  attention_case c;
  bshd_storage sq, skv;
  buffer q, k, v, out, lse;
  float scale;  // what the op is given (0: its default)
  support::attention_reference ref;
  attention_data(const attention_case& c_, std::uint64_t seed);
};
void attention_data_deleter::operator()(attention_data* d) const { delete d; }

namespace {
std::vector<bool> all_covered(std::size_t n) { return std::vector<bool>(n, true); }

// |scale·score| ≈ logit: every score is 0.5625·head_dim (equal), or an integer of
// spread √head_dim · E[x²] with E[x²] = 60/9 for x uniform in −4..4.
float scale_for(const attention_case& c) {
  if (c.inputs == attention_inputs::uniform) return c.scale;
  const double spread =
      c.inputs == attention_inputs::equal_scores ? 0.5625 * c.head_dim : std::sqrt(double(c.head_dim)) * 60.0 / 9.0;
  return float(c.logit / spread);
}

void fill_inputs(attention_data& d, std::mt19937_64& rng) {
  switch (d.c.inputs) {
    case attention_inputs::uniform:  // scores of a few units: softmax neither flat nor one-hot
      d.q.fill(rng, -1.0f, 1.0f);
      d.k.fill(rng, -1.0f, 1.0f);
      break;
    case attention_inputs::equal_scores:  // 0.75² · head_dim: no power of two, so scale·score rounds
      d.q.fill(rng, 0.75f, 0.75f);
      d.k.fill(rng, 0.75f, 0.75f);
      break;
    case attention_inputs::integer_scores:
      d.q.fill_integers(rng, 4);
      d.k.fill_integers(rng, 4);
      break;
  }
  d.v.fill(rng, -1.0f, 1.0f);
  for (const attention_poke& p : d.c.pokes) {
    buffer& b = p.tensor == 'q' ? d.q : p.tensor == 'k' ? d.k : d.v;
    const bshd_storage& st = p.tensor == 'q' ? d.sq : d.skv;
    b.host.set(std::size_t(guard + p.b * st.strides[0] + p.s * st.strides[1] + p.h * st.strides[2] + p.d), p.value);
  }
}

}  // namespace

attention_data::attention_data(const attention_case& c_, std::uint64_t seed)
    : c(c_),
      sq(c.batch, c.q_len, c.heads, c.head_dim, c.heads_major, c.pad),
      skv(c.batch, c.kv_len, c.kv_heads, c.head_dim, c.heads_major, c.pad),
      q(c.type, sq.elements, sq.covered()),
      k(c.type, skv.elements, skv.covered()),
      v(c.type, skv.elements, skv.covered()),
      out(c.type, sq.elements, sq.covered()),
      lse(dtype::f32, std::int64_t(c.batch) * c.heads * c.q_len, all_covered(std::size_t(c.batch * c.heads * c.q_len))),
      scale(scale_for(c)) {
  std::mt19937_64 rng(seed);
  fill_inputs(*this, rng);
  const double s = scale > 0 ? double(scale) : 1.0 / std::sqrt(double(c.head_dim));
  ref = support::reference_attention(sq.view(q.base(), c.type, device::host()),
                                     skv.view(k.base(), c.type, device::host()),
                                     skv.view(v.base(), c.type, device::host()), c.causal, s);
}

attention_prepared prepare_attention(const attention_case& c, std::uint64_t seed) {
  return attention_prepared(new attention_data(c, seed));
}

attention_outcome run_attention(const attention_case& c, const device& dev, std::uint64_t seed) {
  return run_attention(prepare_attention(c, seed), dev);
}

attention_outcome run_attention(const attention_prepared& data, const device& dev) {
  const attention_data& d = *data;
  const attention_case& c = d.c;
  buffer out = d.out, lse = d.lse;  // poisoned copies

  support::device_buffer dq(dev, d.q.host.bytes.size()), dk(dev, d.k.host.bytes.size()),
      dv(dev, d.v.host.bytes.size()), dout(dev, out.host.bytes.size()), dl(dev, lse.host.bytes.size());
  dq.upload(d.q.host.data(), d.q.host.bytes.size());
  dk.upload(d.k.host.data(), d.k.host.bytes.size());
  dv.upload(d.v.host.data(), d.v.host.bytes.size());
  dout.upload(out.host.data(), out.host.bytes.size());
  dl.upload(lse.host.data(), lse.host.bytes.size());
  const auto at = [](support::device_buffer& b, dtype t) { return static_cast<char*>(b.data()) + guard * dtype_size(t); };
  attention_options o;
  o.causal = c.causal;
  o.path = c.portable ? kernel_path::portable : kernel_path::fastest;
  o.scale = d.scale;
  if (c.lse) o.lse = tensor_view::contiguous(at(dl, dtype::f32), dtype::f32, {c.batch, c.heads, c.q_len}, dev);
  attention(d.sq.view(at(dq, c.type), c.type, dev), d.skv.view(at(dk, c.type), c.type, dev),
            d.skv.view(at(dv, c.type), c.type, dev), d.sq.view(at(dout, c.type), c.type, dev), o);
  support::synchronize(dev);
  dout.download(out.host.data(), out.host.bytes.size());
  dl.download(lse.host.data(), lse.host.bytes.size());

  attention_outcome r;
  const std::size_t es = std::size_t(dtype_size(c.type));
  for (std::size_t i = 0; i < out.inside.size(); ++i) {
    const bool same = std::equal(out.host.bytes.begin() + i * es, out.host.bytes.begin() + (i + 1) * es,
                                 d.out.host.bytes.begin() + i * es);
    if (!out.inside[i] && !same) ++r.guard_hits;
    if (out.inside[i] && support::is_poison(out.host, i)) ++r.unwritten;
  }
  for (std::size_t i = 0; i < lse.inside.size(); ++i) {
    const bool same = std::equal(lse.host.bytes.begin() + i * 4, lse.host.bytes.begin() + (i + 1) * 4,
                                 d.lse.host.bytes.begin() + i * 4);
    if (!lse.inside[i] && !same) ++r.guard_hits;
    if (!c.lse && !same) ++r.guard_hits;  // not asked for: must not be written
  }
  tensor_view ov = d.sq.view(out.base(), c.type, device::host());
  r.out.resize(d.ref.out.size());
  std::size_t n = 0;
  for (std::int64_t b = 0; b < c.batch; ++b)
    for (std::int64_t s = 0; s < c.q_len; ++s)
      for (std::int64_t h = 0; h < c.heads; ++h)
        for (std::int64_t e = 0; e < c.head_dim; ++e)
          r.out[n++] = out.host.get(std::size_t(guard + b * ov.stride[0] + s * ov.stride[1] + h * ov.stride[2] + e));
  const support::position_comparison out_cmp = support::compare_positions(d.ref.out, r.out);
  r.out_class_mismatch = std::int64_t(out_cmp.mismatched);
  r.error = out_cmp.relative;
  if (c.lse) {
    std::vector<double> got(d.ref.lse.size());
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = lse.host.get(i + guard);
    r.lse_class_mismatch = std::int64_t(support::compare_positions(d.ref.lse, got).mismatched);
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double x = got[i], ref = d.ref.lse[i];
      // In units of the tolerance: 1e-3, plus 8 roundings (2^-24) of the LSE's own size.
      if (std::isfinite(x) && std::isfinite(ref))
        r.lse_error = std::max(r.lse_error, std::fabs(x - ref) / (1 + 8 * std::ldexp(std::fabs(ref), -24) / 1e-3));
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
