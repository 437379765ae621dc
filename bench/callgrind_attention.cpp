// bench/callgrind_attention.cpp — one tessel::attention call (fp32, [1, 512, 2, D], 1 thread),
// for instruction counts under valgrind --tool=callgrind (stable to 0.01% for the same binary):
//   g++ -O2 -std=c++17 -I BUILD/include bench/callgrind_attention.cpp BUILD/libtessel.a -ltbb -o drv
//   TESSEL_CPU_ISA=avx2 valgrind --tool=callgrind ./drv 128 [causal]     (D = 128 or 64)
// Build it against two libraries to compare a change (valgrind 3.19 runs no AVX-512).
#include <cstdlib>
#include <random>
#include <vector>
#include <tessel/tessel.hpp>
int main(int argc, char** argv) {
  const long L = 512, H = 2, D = argc > 1 ? std::atol(argv[1]) : 128;
  const bool causal = argc > 2;
  std::vector<float> q(L * H * D), k(q.size()), v(q.size()), o(q.size());
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto* x : {&q, &k, &v}) for (auto& e : *x) e = u(rng);
  using tessel::tensor_view;
  tessel::attention_options opt;
  opt.causal = causal;
  tessel::attention(tensor_view::contiguous(q.data(), tessel::dtype::f32, {1, L, H, D}),
                    tensor_view::contiguous(k.data(), tessel::dtype::f32, {1, L, H, D}),
                    tensor_view::contiguous(v.data(), tessel::dtype::f32, {1, L, H, D}),
                    tensor_view::contiguous(o.data(), tessel::dtype::f32, {1, L, H, D}), opt, tessel::stream::cpu(1));
  return o[5] == o[5] ? 0 : 1;
}
