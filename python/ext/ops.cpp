// python/ext/ops.cpp — gemm and attention bound for Python (contract in ops.hpp).
#include "ops.hpp"

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include <tessel/tessel.hpp>

#include "views.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace tessel_py {
namespace {

tessel::kernel_path to_path(bool portable) {
  return portable ? tessel::kernel_path::portable : tessel::kernel_path::fastest;
}

tessel::stream to_stream(const tessel::tensor_view& first, int threads, std::uintptr_t native) {
  if (first.dev.kind == tessel::device_kind::host) return tessel::stream::cpu(threads);
  return tessel::stream::gpu(reinterpret_cast<void*>(native));
}

// The op's array arguments as views: those from index `first_output` on are
// outputs (must be writable); bit i of bf16_mask marks argument i as a uint16
// array holding bfloat16 (views.hpp).
std::vector<array_view> views(const char* op, std::initializer_list<std::pair<nb::handle, const char*>> args,
                              std::size_t first_output, int bf16_mask, bool bhsd) {
  std::vector<array_view> out;
  for (const auto& [obj, name] : args) {
    const std::size_t i = out.size();
    out.push_back(to_view(obj, {op, name, i >= first_output, ((bf16_mask >> i) & 1) != 0, bhsd}));
  }
  return out;
}

void gemm(nb::handle a, nb::handle b, nb::handle c, int bf16_mask, float alpha, float beta, bool trans_a,
          bool trans_b, int threads, std::uintptr_t stream, bool portable) {
  const char* op = "tessel.gemm";
  const std::vector<array_view> v = views(op, {{a, "a"}, {b, "b"}, {c, "c"}}, 2, bf16_mask, false);
  tessel::gemm_options o;
  o.alpha = alpha;
  o.beta = beta;
  o.trans_a = trans_a;
  o.trans_b = trans_b;
  o.path = to_path(portable);
  const tessel::stream s = to_stream(v[0].view, threads, stream);
  nb::gil_scoped_release unlocked;
  tessel::gemm(v[0].view, v[1].view, v[2].view, o, s);
}

void attention(nb::handle q, nb::handle k, nb::handle v, nb::handle out, nb::handle lse, int bf16_mask, bool bhsd,
               bool causal, float scale, int threads, std::uintptr_t stream, bool portable) {
  const char* op = "tessel.attention";
  const std::vector<array_view> a = views(op, {{q, "q"}, {k, "k"}, {v, "v"}, {out, "out"}}, 3, bf16_mask, bhsd);
  tessel::attention_options o;
  o.causal = causal;
  o.scale = scale;
  o.path = to_path(portable);
  array_view l;
  if (!lse.is_none()) {
    l = to_view(lse, {op, "lse", true, false, false});
    o.lse = l.view;
  }
  const tessel::stream s = to_stream(a[0].view, threads, stream);
  nb::gil_scoped_release unlocked;
  tessel::attention(a[0].view, a[1].view, a[2].view, a[3].view, o, s);
}

}  // namespace

void bind_ops(nb::module_& m) {
  m.def("gemm", &gemm, "a"_a, "b"_a, "c"_a, "bf16_mask"_a, "alpha"_a, "beta"_a, "trans_a"_a,
        "trans_b"_a, "threads"_a, "stream"_a, "portable"_a);
  m.def("attention", &attention, "q"_a, "k"_a, "v"_a, "out"_a, "lse"_a.none(), "bf16_mask"_a, "bhsd"_a, "causal"_a,
        "scale"_a, "threads"_a, "stream"_a, "portable"_a);
}

}  // namespace tessel_py
