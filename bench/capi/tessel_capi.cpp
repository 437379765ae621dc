// bench/capi/tessel_capi.cpp — the C entry point (see tessel_capi.h).
#include "tessel_capi.h"

#include <exception>
#include <string>

#include <tessel/tessel.hpp>

namespace {
thread_local std::string last_error;

tessel::device dev(int kind) {
  return kind == 1 ? tessel::device::cuda(0) : kind == 2 ? tessel::device::hip(0) : tessel::device::host();
}
tessel::tensor_view bshd(void* p, int dtype, int device, const int64_t* shape, const int64_t* strides) {
  return tessel::tensor_view::strided(p, tessel::dtype(dtype), {shape[0], shape[1], shape[2], shape[3]},
                                      {strides[0], strides[1], strides[2], strides[3]}, dev(device));
}
template <class F> int guarded(F f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    last_error = e.what();
    return 1;
  }
}
}  // namespace

extern "C" const char* tessel_capi_last_error(void) { return last_error.c_str(); }
extern "C" const char* tessel_capi_backends(void) { return tessel::built_backends(); }

extern "C" int tessel_capi_attention(int dtype, int device, void* q, const int64_t* q_shape, const int64_t* q_strides,
                                     void* k, const int64_t* k_shape, const int64_t* k_strides, void* v,
                                     const int64_t* v_strides, void* out, const int64_t* out_strides, float* lse,
                                     int causal, float scale, void* stream) {
  return guarded([&] {
    tessel::attention_options o;
    o.causal = causal != 0;
    o.scale = scale;
    if (lse) o.lse = tessel::tensor_view::contiguous(lse, tessel::dtype::f32, {q_shape[0], q_shape[2], q_shape[1]}, dev(device));
    tessel::attention(bshd(q, dtype, device, q_shape, q_strides), bshd(k, dtype, device, k_shape, k_strides),
                      bshd(v, dtype, device, k_shape, v_strides), bshd(out, dtype, device, q_shape, out_strides), o,
                      tessel::stream::gpu(stream));
  });
}

extern "C" int tessel_capi_gemm(int dtype_in, int dtype_out, int device, void* a, void* b, void* c, int64_t m,
                                int64_t n, int64_t k, int trans_a, int trans_b, float alpha, float beta, void* stream) {
  return guarded([&] {
    tessel::gemm_options o;
    o.alpha = alpha;
    o.beta = beta;
    o.trans_a = trans_a != 0;
    o.trans_b = trans_b != 0;
    const auto in = tessel::dtype(dtype_in);
    tessel::gemm(tessel::tensor_view::contiguous(a, in, {trans_a ? k : m, trans_a ? m : k}, dev(device)),
                 tessel::tensor_view::contiguous(b, in, {trans_b ? n : k, trans_b ? k : n}, dev(device)),
                 tessel::tensor_view::contiguous(c, tessel::dtype(dtype_out), {m, n}, dev(device)), o,
                 tessel::stream::gpu(stream));
  });
}
