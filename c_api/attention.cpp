// c_api/attention.cpp — tessel_attention: the C arguments checked and converted, then tessel::attention.
#include "status.hpp"
#include "tessel/attention.hpp"
#include "views.hpp"

extern "C" tessel_status tessel_attention(const tessel_tensor* q, const tessel_tensor* k, const tessel_tensor* v,
                                          const tessel_tensor* out, const tessel_tensor* lse, int32_t causal,
                                          float scale, int32_t path, int32_t threads, void* stream) {
  constexpr const char* fn = "tessel_attention";
  return tessel::c_api::guarded(fn, [&] {
    using namespace tessel::c_api;
    // One statement per argument: the first one wrong is the one named.
    const tessel::tensor_view vq = to_view(fn, "q", q, 4, 4);
    const tessel::tensor_view vk = to_view(fn, "k", k, 4, 4);
    const tessel::tensor_view vv = to_view(fn, "v", v, 4, 4);
    const tessel::tensor_view vo = to_view(fn, "out", out, 4, 4);
    tessel::attention_options o;
    if (lse) o.lse = to_view(fn, "lse", lse, 3, 3);  // null: no log-sum-exp
    o.causal = to_flag(fn, "causal", causal);
    o.scale = scale;
    o.path = to_path(fn, path);
    tessel::attention(vq, vk, vv, vo, o, to_stream(fn, threads, stream));
  });
}
