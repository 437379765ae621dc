// bench/callgrind_amx.cpp — the AMX paths' work besides their tile instructions, for instruction counts
// under valgrind --tool=callgrind (valgrind runs neither AMX nor AVX-512).
//
// The shared ops on amx_policy<avx2_policy, null tiles>: the loads into the panels, the softmax, P's
// store, O's rescale and the epilogues run as in the library (on 8-lane vectors instead of 16), the
// tile instructions (tileloadd, tilestored, tilezero, tdpbf16ps) do nothing. One call, 1 thread; the
// outputs are not meaningful.
//   attention: bf16, [1, Q, 1, D] against [1, KV, 1, D]     ./drv [Q KV D [causal]]  (default 256 1024 128)
//   gemm:      bf16 in, C = A·B (row-major) in bf16 or fp32  ./drv gemm M N K [f32]  (default 1024 1024 1024)
//   g++ -O3 -g -mavx2 -mfma -std=c++17 -I BUILD/include bench/callgrind_amx.cpp BUILD/libtessel.a -ltbb -o drv
//   valgrind --tool=callgrind --dump-line=yes ./drv ...
//   callgrind_annotate --auto=yes callgrind.out.N    (counts per source line)
// Attention: divide by the steps (Q / BQ · KV / BKV) for a count per step. The inputs' random fill is
// counted too: read the op's share (callgrind_annotate --inclusive=yes, the dispatch's line in main).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "tessel/cpu/policy_amx.hpp"
#include "tessel/cpu/policy_avx2.hpp"
#include "tessel/ops/attention/dispatch.hpp"
#include "tessel/ops/gemm/dispatch.hpp"

namespace {
struct null_tiles {  // arch/amx.hpp's tile interface, doing nothing
  static void configure() {}
  static void release() {}
  template <int T> static void load(const void*, std::int64_t) {}
  template <int T> static void store(void*, std::int64_t) {}
  template <int T> static void zero() {}
  template <int C, int A, int B> static void dp() {}
};
using policy = tessel::cpu::amx_policy<tessel::cpu::avx2_policy, null_tiles, tessel::cpu::amx_default_tuning>;
}  // namespace

template <class T> void fill(std::vector<T>& t, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-2, 2);
  for (T& x : t) x = tessel::convert<T>(u(rng));
}

int gemm(int argc, char** argv) {
  using namespace tessel;
  const int m = argc > 2 ? std::atoi(argv[2]) : 1024, n = argc > 3 ? std::atoi(argv[3]) : 1024;
  const int k = argc > 4 ? std::atoi(argv[4]) : 1024;
  const bool f32 = argc > 5 && std::strcmp(argv[5], "f32") == 0;
  std::vector<bf16> a(std::size_t(m) * k), b(std::size_t(k) * n), c16(f32 ? 0 : std::size_t(m) * n);
  std::vector<float> c32(f32 ? std::size_t(m) * n : 0);
  std::mt19937 rng(1);
  fill(a, rng);
  fill(b, rng);
  gemm_call call{};
  call.a = {a.data(), k, 1, 0};
  call.b = {b.data(), n, 1, 0};
  call.c = {f32 ? static_cast<const void*>(c32.data()) : c16.data(), n, 1, 0};
  call.in = dtype::bf16, call.out = f32 ? dtype::f32 : dtype::bf16;
  call.m = m, call.n = n, call.k = k, call.batch = 1, call.alpha = 1.0f, call.beta = 0.0f;
  auto launch = [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    policy::template launch<K>(K::shape(problem), problem, 1);
  };
  ops::gemm_input<policy, bf16>(call, launch);
  return 0;
}

int main(int argc, char** argv) {
  using namespace tessel;
  if (argc > 1 && std::strcmp(argv[1], "gemm") == 0) return gemm(argc, argv);
  const int q_len = argc > 1 ? std::atoi(argv[1]) : 256, kv_len = argc > 2 ? std::atoi(argv[2]) : 1024;
  const int d = argc > 3 ? std::atoi(argv[3]) : 128;
  const bool causal = argc > 4;
  std::vector<bf16> q(std::size_t(q_len) * d), k(std::size_t(kv_len) * d), v(k.size()), o(q.size());
  std::mt19937 rng(1);
  for (auto* t : {&q, &k, &v}) fill(*t, rng);
  attention_call call{};
  call.q = {q.data(), std::int64_t(q_len) * d, d, d};
  call.k = {k.data(), std::int64_t(kv_len) * d, d, d};
  call.v = {v.data(), std::int64_t(kv_len) * d, d, d};
  call.out = {o.data(), std::int64_t(q_len) * d, d, d};
  call.type = dtype::bf16;
  call.batch = 1, call.heads = 1, call.kv_heads = 1, call.q_len = q_len, call.kv_len = kv_len;
  call.head_dim = d, call.causal = causal;
  call.scale = float(1.0 / std::sqrt(double(d)));
  auto launch = [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    policy::template launch<K>(K::shape(problem), problem, 1);
  };
  ops::attention_typed<policy, bf16>(call, launch);
  return o[5].bits == 0x7fc1 ? 1 : 0;
}
