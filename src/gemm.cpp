// src/gemm.cpp — tessel::gemm: check the views, reduce them to a gemm_call, dispatch.
#include <algorithm>
#include <climits>

#include "backend_entry.hpp"
#include "check.hpp"
#include "tessel/gemm.hpp"

namespace tessel {
namespace {

using detail::fail;
constexpr const char* op = "gemm";

struct mat {
  std::int64_t rows, cols, rs, cs, batch, bs;
};

// The matrix (last two dims) and batch (first dim, if rank 3) of a view.
mat as_matrix(const tensor_view& t) {
  const int r = t.rank;
  mat m{t.shape[r - 2], t.shape[r - 1], t.stride[r - 2], t.stride[r - 1], 1, 0};
  if (r == 3) {
    m.batch = t.shape[0];
    m.bs = t.shape[0] == 1 ? 0 : t.stride[0];
  }
  return m;
}

mat transposed(mat m) {
  std::swap(m.rows, m.cols);
  std::swap(m.rs, m.cs);
  return m;
}

// One of the two strides must be 1 (an extent of 1 makes its stride irrelevant).
void normalise_unit_stride(const char* name, mat& m) {
  if (m.rows <= 1) m.rs = 1;  // a single row (or none): the row stride is never used
  if (m.cols <= 1) m.cs = 1;
  if (m.cs == 1 || m.rs == 1) return;
  fail(op, "argument '", name, "': expected a row- or column-major matrix (one of its last two strides equal to 1), ",
       "got strides [", m.rs, ", ", m.cs, "]");
}

}  // namespace

void gemm(const tensor_view& a, const tensor_view& b, const tensor_view& c, const gemm_options& o, const stream& s) {
  if (o.path != kernel_path::fastest && o.path != kernel_path::portable)
    fail(op, "option 'path': expected kernel_path::fastest or kernel_path::portable, got the value ", int(o.path));
  const std::int64_t na = detail::check_view(op, "a", a, 2, 3);
  const std::int64_t nb = detail::check_view(op, "b", b, 2, 3);
  const std::int64_t nc = detail::check_view(op, "c", c, 2, 3);

  if (a.type != b.type || (c.type != a.type && c.type != dtype::f32))
    detail::unsupported(op, "unsupported dtype combination a=", dtype_name(a.type), ", b=", dtype_name(b.type),
                        ", c=", dtype_name(c.type),
                        ": expected a and b of one type (fp32, fp16 or bf16) and c of that type or fp32");

  mat ma = as_matrix(a), mb = as_matrix(b), mc = as_matrix(c);
  if (o.trans_a) ma = transposed(ma);
  if (o.trans_b) mb = transposed(mb);
  const std::int64_t M = ma.rows, K = ma.cols, N = mb.cols;
  if (mb.rows != K)
    fail(op, "argument 'b': expected ", o.trans_b ? "op(b) = bᵀ" : "b", " with ", K, " rows (K, from ",
         o.trans_a ? "the rows of a" : "the columns of a", "), got shape ", detail::shape_string(b));
  if (mc.rows != M || mc.cols != N)
    fail(op, "argument 'c': expected shape [", M, ", ", N, "] (M from a, N from b), got ", detail::shape_string(c));
  const std::int64_t batch = mc.batch;
  if (c.rank == 2 && (ma.batch != 1 || mb.batch != 1))
    fail(op, "argument 'c': a or b is batched (", std::max(ma.batch, mb.batch), "), so c must be rank 3 with that batch");
  if (ma.batch != 1 && ma.batch != batch)
    fail(op, "argument 'a': expected batch ", batch, " (from c) or 1, got ", ma.batch);
  if (mb.batch != 1 && mb.batch != batch)
    fail(op, "argument 'b': expected batch ", batch, " (from c) or 1, got ", mb.batch);
  for (auto [name, v] : {std::pair{"M", M}, {"N", N}, {"K", K}, {"batch", batch}})
    if (v > INT_MAX) detail::unsupported(op, "size ", name, " = ", v, " exceeds the supported maximum ", INT_MAX);

  const char* dev_names[] = {"a", "b", "c"};
  const tensor_view* views[] = {&a, &b, &c};
  for (int i = 0; i < 3; ++i)
    if (views[i]->dev.kind != c.dev.kind || views[i]->dev.index != c.dev.index)
      fail(op, "argument '", dev_names[i], "': on device ", device_name(views[i]->dev.kind), ":", views[i]->dev.index,
           ", expected the device of c (", device_name(c.dev.kind), ":", c.dev.index, ")");
  for (int i = 0; i < 3; ++i) detail::check_backend(op, dev_names[i], *views[i]);
  if (M == 0 || N == 0 || batch == 0) return;  // nothing to write: a no-op, even with odd strides

  normalise_unit_stride("a", ma);
  normalise_unit_stride("b", mb);
  normalise_unit_stride("c", mc);
  // C is written: its elements must not alias one another (batch stride
  // included), nor A or B.
  detail::check_no_self_overlap(op, "c", c);
  detail::check_disjoint(op, "c", c, nc, "a", a, na);
  detail::check_disjoint(op, "c", c, nc, "b", b, nb);
  for (int i = 0; i < 3; ++i) detail::check_device(op, dev_names[i], *views[i]);

  gemm_call call;
  call.a = {a.data, ma.rs, ma.cs, ma.batch == 1 ? 0 : ma.bs};
  call.b = {b.data, mb.rs, mb.cs, mb.batch == 1 ? 0 : mb.bs};
  call.c = {c.data, mc.rs, mc.cs, mc.bs};
  call.in = a.type;
  call.out = c.type;
  call.m = int(M);
  call.n = int(N);
  call.k = int(K);
  call.batch = int(batch);
  call.alpha = o.alpha;
  call.beta = o.beta;
  call.device = c.dev.index;
  call.portable = o.path == kernel_path::portable;
  // K = 0 leaves a and b unread: their pointers may be null.
  if (K == 0) call.a.ptr = call.b.ptr = c.data;

  detail::on_device([&] {
    switch (c.dev.kind) {
      case device_kind::host: detail::cpu_gemm(call, s.threads); return;
#if TESSEL_HAS_CUDA
      case device_kind::cuda: detail::cuda_gemm(call, s.native); return;
#endif
#if TESSEL_HAS_HIP
      case device_kind::hip: detail::hip_gemm(call, s.native); return;
#endif
      default: break;
    }
    detail::unsupported(op, "no backend for device ", device_name(c.dev.kind));
  });
}

}  // namespace tessel
