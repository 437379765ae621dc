// src/attention.cpp — tessel::attention: check the views, reduce them to an attention_call, dispatch.
#include <climits>
#include <cmath>

#include "backend_entry.hpp"
#include "check.hpp"
#include "tessel/attention.hpp"

namespace tessel {
namespace {
using detail::fail;
constexpr const char* op = "attention";

void check_bshd(const char* name, const tensor_view& t) {
  if (t.rank == 4 && t.shape[3] > 1 && t.stride[3] != 1)
    fail(op, "argument '", name, "': expected the last (head_dim) dimension contiguous (stride 1), got stride ",
         t.stride[3]);
}
}  // namespace

void attention(const tensor_view& q, const tensor_view& k, const tensor_view& v, const tensor_view& out,
               const attention_options& o, const stream& s) {
  const std::int64_t nq = detail::check_view(op, "q", q, 4, 4);
  const std::int64_t nk = detail::check_view(op, "k", k, 4, 4);
  const std::int64_t nv = detail::check_view(op, "v", v, 4, 4);
  const std::int64_t no = detail::check_view(op, "out", out, 4, 4);
  const std::int64_t B = q.shape[0], Lq = q.shape[1], H = q.shape[2], D = q.shape[3];
  const std::int64_t Lk = k.shape[1], Hk = k.shape[2];
  if (k.shape[0] != B || k.shape[3] != D)
    fail(op, "argument 'k': expected shape [", B, ", kv_len, kv_heads, ", D, "] (batch and head_dim from q), got ",
         detail::shape_string(k));
  if (v.shape[0] != k.shape[0] || v.shape[1] != Lk || v.shape[2] != Hk || v.shape[3] != D)
    fail(op, "argument 'v': expected the shape of k ", detail::shape_string(k), ", got ", detail::shape_string(v));
  if (out.shape[0] != B || out.shape[1] != Lq || out.shape[2] != H || out.shape[3] != D)
    fail(op, "argument 'out': expected the shape of q ", detail::shape_string(q), ", got ", detail::shape_string(out));
  if (Hk == 0 ? H != 0 : H % Hk != 0)
    fail(op, "argument 'k': its ", Hk, " heads must divide the ", H, " heads of q (grouped-query attention)");
  if (D != 64 && D != 128)
    detail::unsupported(op, "argument 'q': head_dim ", D, " is not supported; expected 64 or 128");
  if (q.type != k.type || q.type != v.type || out.type != q.type)
    detail::unsupported(op, "unsupported dtype combination q=", dtype_name(q.type), ", k=", dtype_name(k.type),
                        ", v=", dtype_name(v.type), ", out=", dtype_name(out.type), ": expected one type for all four");
  if (q.type == dtype::f32 && q.dev.kind != device_kind::host)
    detail::unsupported(op, "argument 'q': fp32 attention runs on the CPU only; expected bf16 or fp16 on ",
                        device_name(q.dev.kind));
  for (auto [name, val] : {std::pair{"batch", B}, {"q_len", Lq}, {"kv_len", Lk}, {"heads", H}})
    if (val > INT_MAX) detail::unsupported(op, "size ", name, " = ", val, " exceeds the supported maximum ", INT_MAX);
  if (o.path != kernel_path::fastest && o.path != kernel_path::portable)
    fail(op, "option 'path': expected kernel_path::fastest or kernel_path::portable, got the value ", int(o.path));
  if (!(o.scale >= 0.0f) || std::isinf(o.scale))
    fail(op, "option 'scale': expected a finite value > 0 (or 0 for 1/sqrt(head_dim)), got ", o.scale);
  check_bshd("q", q);
  check_bshd("k", k);
  check_bshd("v", v);
  check_bshd("out", out);

  const bool want_lse = o.lse.data != nullptr || o.lse.rank != 0;
  std::int64_t nl = 0;
  if (want_lse) {
    nl = detail::check_view(op, "lse", o.lse, 3, 3);
    if (o.lse.type != dtype::f32) fail(op, "argument 'lse': expected dtype fp32, got ", dtype_name(o.lse.type));
    if (o.lse.shape[0] != B || o.lse.shape[1] != H || o.lse.shape[2] != Lq)
      fail(op, "argument 'lse': expected shape [", B, ", ", H, ", ", Lq, "] (batch, heads, q_len), got ",
           detail::shape_string(o.lse));
  }
  const tensor_view* views[] = {&q, &k, &v, &out, &o.lse};
  const char* names[] = {"q", "k", "v", "out", "lse"};
  for (int i = 0; i < (want_lse ? 5 : 4); ++i)
    if (views[i]->dev.kind != out.dev.kind || views[i]->dev.index != out.dev.index)
      fail(op, "argument '", names[i], "': on device ", device_name(views[i]->dev.kind), ":", views[i]->dev.index,
           ", expected the device of out (", device_name(out.dev.kind), ":", out.dev.index, ")");
  for (int i = 0; i < (want_lse ? 5 : 4); ++i) detail::check_backend(op, names[i], *views[i]);
  if (no == 0) return;  // nothing to write (batch, q_len or heads is 0; lse is then empty too)
  // out and lse are written: neither may overlap itself, the inputs, or the other.
  detail::check_no_self_overlap(op, "out", out);
  const std::int64_t counts[] = {nq, nk, nv, no};
  for (int i = 0; i < 3; ++i) detail::check_disjoint(op, "out", out, no, names[i], *views[i], counts[i]);
  if (want_lse) {
    detail::check_no_self_overlap(op, "lse", o.lse);
    for (int i = 0; i < 4; ++i) detail::check_disjoint(op, "lse", o.lse, nl, names[i], *views[i], counts[i]);
  }
  for (int i = 0; i < (want_lse ? 5 : 4); ++i) detail::check_device(op, names[i], *views[i]);

  attention_call c;
  c.q = {q.data, q.stride[0], q.stride[1], q.stride[2]};
  c.k = {k.data, k.stride[0], k.stride[1], k.stride[2]};
  c.v = {v.data, v.stride[0], v.stride[1], v.stride[2]};
  c.out = {out.data, out.stride[0], out.stride[1], out.stride[2]};
  c.lse = want_lse ? static_cast<float*>(o.lse.data) : nullptr;
  c.lse_batch_stride = want_lse ? o.lse.stride[0] : 0;
  c.lse_head_stride = want_lse ? o.lse.stride[1] : 0;
  c.lse_seq_stride = want_lse ? o.lse.stride[2] : 0;
  c.type = q.type;
  c.batch = int(B);
  c.heads = int(H);
  c.kv_heads = int(Hk);
  c.q_len = int(Lq);
  c.kv_len = int(Lk);
  c.head_dim = int(D);
  c.causal = o.causal;
  c.device = out.dev.index;
  c.portable = o.path == kernel_path::portable;
  c.scale = o.scale > 0.0f ? o.scale : 1.0f / std::sqrt(float(D));
  if (Lk == 0) c.k.ptr = c.v.ptr = out.data;  // never read

  detail::on_device([&] {
    switch (out.dev.kind) {
      case device_kind::host: detail::cpu_attention(c, s.threads); return;
#if TESSEL_HAS_CUDA
      case device_kind::cuda: detail::cuda_attention(c, s.native); return;
#endif
#if TESSEL_HAS_HIP
      case device_kind::hip: detail::hip_attention(c, s.native); return;
#endif
      default: break;
    }
    detail::unsupported(op, "no backend for device ", device_name(out.dev.kind));
  });
}

}  // namespace tessel
