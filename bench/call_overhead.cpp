// bench/call_overhead.cpp — the time of one small fp32 tessel::gemm on host tensors (1×1×1 by default), 1 thread:
// the C++ side of the Python call-overhead measurement (bench/python_call_overhead.py times the Python side).
//   g++ -O2 -std=c++17 -I BUILD/include bench/call_overhead.cpp BUILD/libtessel.a -ltbb -o call_overhead
//   ./call_overhead [samples (default 2000)] [calls per sample (default 50)] [M N K (default 1 1 1)]
// Prints the median, min and 90th percentile per call over the samples (steady_clock around each batch of calls):
// views built once, views built in every call (as a binding does), and on all cores.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <tessel/tessel.hpp>

namespace {

using clock_type = std::chrono::steady_clock;

template <class F>
void report(const char* what, long samples, long calls, F&& call) {
  for (long i = 0; i < calls * 10; ++i) call();  // warm-up
  std::vector<double> ns(samples);
  for (auto& t : ns) {
    const auto start = clock_type::now();
    for (long i = 0; i < calls; ++i) call();
    t = std::chrono::duration<double, std::nano>(clock_type::now() - start).count() / calls;
  }
  std::sort(ns.begin(), ns.end());
  std::printf("%-44s median %8.1f ns  min %8.1f ns  p90 %8.1f ns  (%ld samples x %ld calls)\n", what,
              ns[ns.size() / 2], ns.front(), ns[ns.size() * 9 / 10], samples, calls);
}

}  // namespace

int main(int argc, char** argv) {
  const long samples = argc > 1 ? std::atol(argv[1]) : 2000, calls = argc > 2 ? std::atol(argv[2]) : 50;
  const std::int64_t m = argc > 5 ? std::atol(argv[3]) : 1, n = argc > 5 ? std::atol(argv[4]) : 1,
                     k = argc > 5 ? std::atol(argv[5]) : 1;
  std::vector<float> a(m * k, 1.5f), b(k * n, 2.0f), c(m * n, 0.0f);
  using tessel::tensor_view;
  auto views = [&] {
    return std::array<tensor_view, 3>{tensor_view::contiguous(a.data(), tessel::dtype::f32, {m, k}),
                                      tensor_view::contiguous(b.data(), tessel::dtype::f32, {k, n}),
                                      tensor_view::contiguous(c.data(), tessel::dtype::f32, {m, n})};
  };
  const auto v = views();
  const tessel::gemm_options opt;
  const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  report(("tessel::gemm " + shape + " fp32, 1 thread").c_str(), samples, calls,
         [&] { tessel::gemm(v[0], v[1], v[2], opt, tessel::stream::cpu(1)); });
  report("  + views and options built per call", samples, calls, [&] {
    const auto w = views();
    tessel::gemm(w[0], w[1], w[2], tessel::gemm_options{}, tessel::stream::cpu(1));
  });
  report(("tessel::gemm " + shape + " fp32, all cores").c_str(), samples, calls,
         [&] { tessel::gemm(v[0], v[1], v[2], opt, tessel::stream::cpu(0)); });
  const float want = 3.0f * float(k);
  std::printf("c[0] = %g (expected %g)\n", double(c[0]), double(want));
  return c[0] == want ? 0 : 1;
}
