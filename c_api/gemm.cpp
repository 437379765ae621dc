// c_api/gemm.cpp — tessel_gemm: the C arguments checked and converted, then tessel::gemm.
#include "status.hpp"
#include "tessel/gemm.hpp"
#include "views.hpp"

extern "C" tessel_status tessel_gemm(const tessel_tensor* a, const tessel_tensor* b, const tessel_tensor* c,
                                     float alpha, float beta, int32_t trans_a, int32_t trans_b, int32_t path,
                                     int32_t threads, void* stream) {
  constexpr const char* fn = "tessel_gemm";
  return tessel::c_api::guarded(fn, [&] {
    using namespace tessel::c_api;
    // One statement per argument: the first one wrong is the one named.
    const tessel::tensor_view va = to_view(fn, "a", a, 2, 3);
    const tessel::tensor_view vb = to_view(fn, "b", b, 2, 3);
    const tessel::tensor_view vc = to_view(fn, "c", c, 2, 3);
    tessel::gemm_options o;
    o.alpha = alpha;
    o.beta = beta;
    o.trans_a = to_flag(fn, "trans_a", trans_a);
    o.trans_b = to_flag(fn, "trans_b", trans_b);
    o.path = to_path(fn, path);
    tessel::gemm(va, vb, vc, o, to_stream(fn, threads, stream));
  });
}
