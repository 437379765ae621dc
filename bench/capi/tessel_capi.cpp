// bench/capi/tessel_capi.cpp — the C entry point (see tessel_capi.h).
//
// Everything a C caller can get wrong that tessel's own checks cannot see is
// checked here, before any pointer is read: the device and dtype integers
// (an unknown value is not quietly the host or fp32), null shape and stride
// arrays, negative sizes, and shapes whose element count overflows int64.
// What is left (shape agreement, strides, device pointers) is tessel's to
// refuse with tessel::Error; either way the call returns 1 with the message.
#include "tessel_capi.h"

#include <exception>
#include <limits>
#include <string>

#include <tessel/tessel.hpp>

namespace {
thread_local std::string last_error;

struct capi_error {
  std::string what;
};

[[noreturn]] void fail(const char* fn, const std::string& problem) {
  throw capi_error{std::string(fn) + ": " + problem};
}

tessel::device device_of(const char* fn, int kind) {
  switch (kind) {
    case 0: return tessel::device::host();
    case 1: return tessel::device::cuda(0);
    case 2: return tessel::device::hip(0);
    default: break;
  }
  fail(fn, "argument 'device': unknown value " + std::to_string(kind) + "; expected 0 (host), 1 (cuda) or 2 (hip)");
}

tessel::dtype dtype_of(const char* fn, const char* name, int value) {
  if (value < 0 || value > 2)
    fail(fn, std::string("argument '") + name + "': unknown value " + std::to_string(value) +
                 "; expected 0 (fp32), 1 (fp16) or 2 (bf16)");
  return tessel::dtype(value);
}

tessel::stream stream_of(int device, void* native) {
  return device == 0 ? tessel::stream::cpu() : tessel::stream::gpu(native);
}

const int64_t* non_null(const char* fn, const char* name, const int64_t* p) {
  if (!p) fail(fn, std::string("argument '") + name + "' is a null pointer; expected an array of 4 int64");
  return p;
}

void non_negative(const char* fn, const std::string& name, int64_t value) {
  if (value < 0) fail(fn, "argument '" + name + "' is " + std::to_string(value) + ", expected a size >= 0");
}

// The element count of `dims` (all >= 0) must fit in int64; `what` names them.
void product_fits(const char* fn, const std::string& what, std::initializer_list<int64_t> dims) {
  for (int64_t d : dims)
    if (d == 0) return;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (n > std::numeric_limits<int64_t>::max() / d) fail(fn, what + ": the element count overflows int64");
    n *= d;
  }
}

// A [batch, seq, heads, dim] shape array: every size >= 0, their product within int64.
void check_shape(const char* fn, const char* name, const int64_t* s) {
  for (int i = 0; i < 4; ++i) non_negative(fn, std::string(name) + "[" + std::to_string(i) + "]", s[i]);
  product_fits(fn, std::string("argument '") + name + "'", {s[0], s[1], s[2], s[3]});
}

tessel::tensor_view bshd(void* p, tessel::dtype t, const tessel::device& dev, const int64_t* shape,
                         const int64_t* strides) {
  return tessel::tensor_view::strided(p, t, {shape[0], shape[1], shape[2], shape[3]},
                                      {strides[0], strides[1], strides[2], strides[3]}, dev);
}

template <class F> int guarded(F f) {
  try {
    f();
    return 0;
  } catch (const capi_error& e) {
    last_error = e.what;
  } catch (const std::exception& e) {
    last_error = e.what();
  } catch (...) {
    last_error = "unknown exception";
  }
  return 1;
}
}  // namespace

extern "C" const char* tessel_capi_last_error(void) { return last_error.c_str(); }
extern "C" const char* tessel_capi_backends(void) { return tessel::built_backends(); }

extern "C" int tessel_capi_attention(int dtype, int device, void* q, const int64_t* q_shape, const int64_t* q_strides,
                                     void* k, const int64_t* k_shape, const int64_t* k_strides, void* v,
                                     const int64_t* v_strides, void* out, const int64_t* out_strides, float* lse,
                                     int causal, float scale, void* stream) {
  return guarded([&] {
    constexpr const char* fn = "tessel_capi_attention";
    const tessel::dtype t = dtype_of(fn, "dtype", dtype);
    const tessel::device dev = device_of(fn, device);
    const int64_t* qs = non_null(fn, "q_shape", q_shape);
    const int64_t* ks = non_null(fn, "k_shape", k_shape);
    const int64_t* qst = non_null(fn, "q_strides", q_strides);
    const int64_t* kst = non_null(fn, "k_strides", k_strides);
    const int64_t* vst = non_null(fn, "v_strides", v_strides);
    const int64_t* ost = non_null(fn, "out_strides", out_strides);
    check_shape(fn, "q_shape", qs);
    check_shape(fn, "k_shape", ks);
    tessel::attention_options o;
    o.causal = causal != 0;
    o.scale = scale;
    if (lse) o.lse = tessel::tensor_view::contiguous(lse, tessel::dtype::f32, {qs[0], qs[2], qs[1]}, dev);
    tessel::attention(bshd(q, t, dev, qs, qst), bshd(k, t, dev, ks, kst), bshd(v, t, dev, ks, vst),
                      bshd(out, t, dev, qs, ost), o, stream_of(device, stream));
  });
}

extern "C" int tessel_capi_gemm(int dtype_in, int dtype_out, int device, void* a, void* b, void* c, int64_t m,
                                int64_t n, int64_t k, int trans_a, int trans_b, float alpha, float beta, void* stream) {
  return guarded([&] {
    constexpr const char* fn = "tessel_capi_gemm";
    const tessel::dtype in = dtype_of(fn, "dtype_in", dtype_in);
    const tessel::dtype out = dtype_of(fn, "dtype_out", dtype_out);
    const tessel::device dev = device_of(fn, device);
    non_negative(fn, "m", m);
    non_negative(fn, "n", n);
    non_negative(fn, "k", k);
    product_fits(fn, "a (m x k)", {m, k});
    product_fits(fn, "b (k x n)", {k, n});
    product_fits(fn, "c (m x n)", {m, n});
    tessel::gemm_options o;
    o.alpha = alpha;
    o.beta = beta;
    o.trans_a = trans_a != 0;
    o.trans_b = trans_b != 0;
    tessel::gemm(tessel::tensor_view::contiguous(a, in, {trans_a ? k : m, trans_a ? m : k}, dev),
                 tessel::tensor_view::contiguous(b, in, {trans_b ? n : k, trans_b ? k : n}, dev),
                 tessel::tensor_view::contiguous(c, out, {m, n}, dev), o, stream_of(device, stream));
  });
}
