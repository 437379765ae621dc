// tests/gemm_cases.cpp — building, running and checking GEMM cases (see gemm_cases.hpp).
#include "gemm_cases.hpp"

#include <cmath>
#include <random>
#include <sstream>

#include "device_buffer.hpp"
#include "host_tensor.hpp"

namespace tessel::test {
namespace {

constexpr std::int64_t guard = 67;  // poisoned elements before and after every buffer

// How one operand is stored: a [rows, cols] matrix (the stored one, before any
// trans flag), row- or column-major, leading dimension padded, optionally batched.
struct storage {
  std::int64_t rows, cols;
  bool colmajor;
  int pad;
  int batch;  // 0: rank 2
  std::int64_t ld() const { return (colmajor ? rows : cols) + pad; }
  std::int64_t matrix_span() const { return ld() * (colmajor ? cols : rows); }
  std::int64_t batch_stride() const { return matrix_span() + pad; }
  std::int64_t elements() const { return (batch ? batch : 1) * batch_stride(); }
  tensor_view view(void* data, dtype t, const device& dev) const {
    tensor_view v;
    v.data = data;
    v.type = t;
    v.dev = dev;
    const std::int64_t rs = colmajor ? 1 : ld(), cs = colmajor ? ld() : 1;
    if (batch) {
      v.rank = 3;
      v.shape[0] = batch; v.shape[1] = rows; v.shape[2] = cols;
      v.stride[0] = batch_stride(); v.stride[1] = rs; v.stride[2] = cs;
    } else {
      v.rank = 2;
      v.shape[0] = rows; v.shape[1] = cols;
      v.stride[0] = rs; v.stride[1] = cs;
    }
    return v;
  }
  // Whether element index e (from the view's base) belongs to the view.
  bool in_view(std::int64_t e) const {
    const int nb = batch ? batch : 1;
    const std::int64_t z = e / batch_stride(), w = e % batch_stride();
    if (z >= nb || w >= matrix_span()) return false;
    const std::int64_t major = w / ld(), minor = w % ld();
    return minor < (colmajor ? rows : cols) && major < (colmajor ? cols : rows);
  }
};

// A host tensor holding guard + storage + guard elements, and its device copy.
struct operand {
  storage s;
  support::host_tensor host;
  operand(const storage& st, dtype t) : s(st), host(t, std::size_t(st.elements() + 2 * guard)) {}
  void* base() { return host.bytes.data() + guard * dtype_size(host.type); }
  tensor_view host_view() { return s.view(base(), host.type, device::host()); }
  void fill(std::mt19937_64& rng) {  // view elements random, everything else poison
    support::fill_poison(host);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (std::int64_t e = 0; e < s.elements(); ++e)
      if (s.in_view(e)) host.set(std::size_t(e + guard), u(rng));
  }
};

}  // namespace

std::string gemm_case::name() const {
  std::ostringstream o;
  o << m << "x" << n << "x" << k << (batch ? "x" + std::to_string(batch) + "b" : "") << "_" << dtype_name(in) << "to"
    << dtype_name(out) << (trans_a ? "_ta" : "") << (trans_b ? "_tb" : "") << (a_colmajor ? "_acol" : "")
    << (b_colmajor ? "_bcol" : "") << (c_colmajor ? "_ccol" : "") << (pad ? "_pad" + std::to_string(pad) : "")
    << (shared_b ? "_sharedb" : "") << "_a" << alpha << "_b" << beta << (portable ? "_portable" : "");
  std::string s = o.str();
  for (char& ch : s)
    if (ch == '.' || ch == '-') ch = 'm';
  return s;
}

double tolerance(dtype out, int k) {
  // fp32 out: fp32 accumulation error grows like sqrt(K)·2^-24; 1e-5 covers K up to ~10^5.
  // fp16 / bf16 out: one rounding of each output, rms ≈ u/√3 with u = 2^-11 / 2^-8.
  (void)k;
  switch (out) {
    case dtype::f32: return 1e-5;
    case dtype::f16: return 2e-3;
    case dtype::bf16: return 1e-2;
  }
  return 0;
}

gemm_outcome run_case(const gemm_case& c, const device& dev, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int ab_batch = c.batch;
  storage sa{c.trans_a ? c.k : c.m, c.trans_a ? c.m : c.k, c.a_colmajor, c.pad, ab_batch};
  storage sb{c.trans_b ? c.n : c.k, c.trans_b ? c.k : c.n, c.b_colmajor, c.pad, c.shared_b ? 0 : ab_batch};
  storage sc{c.m, c.n, c.c_colmajor, c.pad, c.batch};
  operand a(sa, c.in), b(sb, c.in), cc(sc, c.out);
  a.fill(rng);
  b.fill(rng);
  if (c.beta != 0.0f) cc.fill(rng);
  else support::fill_poison(cc.host);  // beta = 0: C must not be read, NaN must not leak
  const support::host_tensor c_before = cc.host;

  gemm_options o;
  o.alpha = c.alpha;
  o.beta = c.beta;
  o.trans_a = c.trans_a;
  o.trans_b = c.trans_b;
  o.path = c.portable ? kernel_path::portable : kernel_path::fastest;
  const std::vector<double> ref = support::reference_gemm(a.host_view(), b.host_view(), cc.host_view(), o);

  support::device_buffer da(dev, a.host.bytes.size()), db(dev, b.host.bytes.size()), dc(dev, cc.host.bytes.size());
  da.upload(a.host.data(), a.host.bytes.size());
  db.upload(b.host.data(), b.host.bytes.size());
  dc.upload(cc.host.data(), cc.host.bytes.size());
  const auto at = [&](support::device_buffer& buf, dtype t) {
    return static_cast<char*>(buf.data()) + guard * dtype_size(t);
  };
  gemm(sa.view(at(da, c.in), c.in, dev), sb.view(at(db, c.in), c.in, dev), sc.view(at(dc, c.out), c.out, dev), o);
  support::synchronize(dev);
  dc.download(cc.host.data(), cc.host.bytes.size());

  gemm_outcome r;
  for (std::int64_t e = -guard; e < sc.elements() + guard; ++e) {
    const std::size_t i = std::size_t(e + guard);
    const bool inside = e >= 0 && e < sc.elements() && sc.in_view(e);
    const bool same = std::equal(cc.host.bytes.begin() + i * dtype_size(c.out),
                                 cc.host.bytes.begin() + (i + 1) * dtype_size(c.out),
                                 c_before.bytes.begin() + i * dtype_size(c.out));
    if (!inside && !same) ++r.guard_hits;
    if (inside && support::is_poison(cc.host, i)) ++r.unwritten;
  }
  r.out = support::gather(cc.host_view());
  r.error = support::relative_error(ref, r.out);
  return r;
}

std::vector<gemm_case> edge_shape_cases() {
  const int shapes[][3] = {{0, 5, 7},     {5, 0, 7},     {5, 7, 0},      {1, 1, 1},     {1, 17, 13},
                           {17, 1, 13},   {13, 17, 1},   {31, 37, 41},   {63, 65, 127}, {127, 129, 33},
                           {128, 256, 64}, {129, 257, 65}, {255, 127, 96}, {1000, 3, 50}, {3, 1000, 50},
                           {7, 5, 1031},  {97, 101, 103},
                           // On an H100 / H200 (gemm_instance.hpp's choose_split_tile), the shapes
                           // above run their units whole on the split kernels' 64 × 128 units
                           // (at most 132 of them: one wave), or on 128 × 128 ones at 65-95 rows.
                           // Few units, long K: the sm90 GEMM splits them by steps (split_plan.hpp):
                           // on 64 × 128 units the first three (4 units in 5 pieces; 9 with edges in
                           // M, N and K in 4; 16 rows, 3 units in 5), on 128 × 128 units the fourth
                           // (80 rows: 3 units in 5). The 128 × 256 split kernel: device.sh's forced rerun.
                           {100, 200, 4096}, {150, 300, 2200}, {16, 300, 4096}, {80, 300, 4096},
                           // Too many units for one wave of the smaller split units: the plain-store
                           // kernel on 128 × 192 units (117 in one wave; 91 of 128 × 256, 182 of
                           // 128 × 128), then on 128 × 256 units (130; 182 of 128 × 192 in two
                           // waves: gemm_instance.hpp's cheaper_whole_tile); edges in M and N.
                           {1601, 1704, 40}, {1601, 2500, 40},
                           // Two waves of 128 × 256 units on an H100, one of 192 × 256: the
                           // wide plain-store kernel (gemm_instance.hpp); edges in M, N and K.
                           {1500, 3000, 70}};
  const dtype pairs[][2] = {{dtype::f32, dtype::f32}, {dtype::f16, dtype::f16}, {dtype::f16, dtype::f32},
                            {dtype::bf16, dtype::bf16}, {dtype::bf16, dtype::f32}};
  std::vector<gemm_case> out;
  for (const auto& s : shapes)
    for (const auto& p : pairs) {
      gemm_case c;
      c.m = s[0]; c.n = s[1]; c.k = s[2];
      c.in = p[0]; c.out = p[1];
      out.push_back(c);
    }
  return out;
}

std::vector<gemm_case> layout_cases() {
  std::vector<gemm_case> out;
  for (dtype t : {dtype::f32, dtype::bf16, dtype::f16})
    for (int variant = 0; variant < 16; ++variant) {
      gemm_case c;
      c.m = 70; c.n = 45; c.k = 83;
      c.in = c.out = t;
      c.trans_a = variant & 1;
      c.trans_b = variant & 2;
      c.a_colmajor = variant & 4;
      c.b_colmajor = variant & 8;
      c.c_colmajor = (variant % 3) == 0;
      c.pad = (variant % 5 == 0) ? 0 : variant % 2 ? 3 : 8;  // odd pads break 16-byte alignment
      c.alpha = variant % 4 == 1 ? -1.5f : 1.0f;
      c.beta = variant % 4 == 2 ? 0.5f : variant % 4 == 3 ? -2.0f : 0.0f;
      out.push_back(c);
    }
  for (dtype t : {dtype::f32, dtype::bf16}) {
    gemm_case c;
    c.m = 33; c.n = 65; c.k = 40; c.batch = 3; c.in = c.out = t; c.beta = 1.0f;
    out.push_back(c);
    c.shared_b = true; c.trans_b = true; c.pad = 5;
    out.push_back(c);
    c.m = 130; c.n = 9; c.k = 257; c.batch = 2; c.shared_b = false; c.a_colmajor = true; c.out = dtype::f32;
    out.push_back(c);
  }
  return out;
}

std::vector<gemm_case> on_portable_path(std::vector<gemm_case> cases) {
  for (gemm_case& c : cases) c.portable = true;
  return cases;
}

}  // namespace tessel::test
