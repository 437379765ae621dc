// tessel/ops/gemm/dispatch.hpp — from a checked gemm_call to a typed kernel launch.
//
// Every backend instantiates the one GEMM kernel through this: it picks the
// element types and the operand majorness (which decide the shared layouts),
// builds the typed problem, and hands (kernel type, problem) to the backend's
// launcher: `launch(kernel_tag<K>{}, problem)`.
#pragma once
#include <cstdint>

#include "tessel/ops/gemm/call.hpp"
#include "tessel/ops/gemm/kernel.hpp"

namespace tessel::ops {

template <class K> struct kernel_tag {
  using type = K;
};

template <class T> TESSEL_HOST_DEVICE gmatrix<T> make_gmatrix(const matrix_ref& r, int rows, int cols) {
  gmatrix<T> g;
  g.ptr = static_cast<T*>(const_cast<void*>(r.ptr));
  g.rows = rows;
  g.cols = cols;
  g.row_stride = r.row_stride;
  g.col_stride = r.col_stride;
  const std::int64_t lead = r.col_stride == 1 ? r.row_stride : r.col_stride;
  const auto bytes = [](std::int64_t elems) { return elems * std::int64_t(sizeof(T)); };
  g.vec16 = (reinterpret_cast<std::uintptr_t>(r.ptr) % 16 == 0) && bytes(lead) % 16 == 0 &&
            bytes(r.batch_stride) % 16 == 0;
  return g;
}

template <class P, class TIn, class TOut, class Launch> void gemm_typed(const gemm_call& call, Launch& launch) {
  gemm_problem<TIn, TOut> p;
  p.a = make_gmatrix<const TIn>(call.a, call.m, call.k);
  p.b = make_gmatrix<const TIn>(call.b, call.k, call.n);
  p.c = make_gmatrix<TOut>(call.c, call.m, call.n);
  p.batch_a = call.a.batch_stride;
  p.batch_b = call.b.batch_stride;
  p.batch_c = call.c.batch_stride;
  p.batch = call.batch;
  p.alpha = call.alpha;
  p.beta = call.beta;
  const bool ak = call.a.col_stride == 1, bn = call.b.col_stride == 1;
  if (ak && bn) launch(kernel_tag<gemm_kernel<P, TIn, TOut, true, true>>{}, p);
  if (ak && !bn) launch(kernel_tag<gemm_kernel<P, TIn, TOut, true, false>>{}, p);
  if (!ak && bn) launch(kernel_tag<gemm_kernel<P, TIn, TOut, false, true>>{}, p);
  if (!ak && !bn) launch(kernel_tag<gemm_kernel<P, TIn, TOut, false, false>>{}, p);
}

template <class P, class TIn, class Launch> void gemm_input(const gemm_call& call, Launch& launch) {
  if (call.out == dtype::f32) gemm_typed<P, TIn, float>(call, launch);
  else gemm_typed<P, TIn, TIn>(call, launch);
}

// Instantiates and launches the GEMM kernel of policy P for `call`.
template <class P, class Launch> void gemm_dispatch(const gemm_call& call, Launch&& launch) {
  switch (call.in) {
    case dtype::f32: gemm_typed<P, float, float>(call, launch); break;
    case dtype::f16: gemm_input<P, fp16>(call, launch); break;
    case dtype::bf16: gemm_input<P, bf16>(call, launch); break;
  }
}

}  // namespace tessel::ops
