// bench/callgrind_amx_attention.cpp — the AMX attention path's work besides its tile instructions, for
// instruction counts under valgrind --tool=callgrind (valgrind runs neither AMX nor AVX-512).
//
// The shared attention op on amx_policy<avx2_policy, null tiles>: the loads into the panels, the
// softmax, P's store, O's rescale and the epilogue run as in the library (on 8-lane vectors instead
// of 16), the tile instructions (tileloadd, tilestored, tilezero, tdpbf16ps) do nothing. One call,
// bf16, [1, Q, 1, D] against [1, KV, 1, D], 1 thread; out is not meaningful.
//   g++ -O3 -g -mavx2 -mfma -std=c++17 -I BUILD/include bench/callgrind_amx_attention.cpp \
//       BUILD/libtessel.a -ltbb -o drv
//   valgrind --tool=callgrind --dump-line=yes ./drv [Q KV D [causal]]   (default 256 1024 128)
//   callgrind_annotate --auto=yes callgrind.out.N    (counts per source line)
// Divide by the steps (Q / BQ · KV / BKV) for a count per step.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "tessel/cpu/policy_amx.hpp"
#include "tessel/cpu/policy_avx2.hpp"
#include "tessel/ops/attention/dispatch.hpp"

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

int main(int argc, char** argv) {
  using namespace tessel;
  const int q_len = argc > 1 ? std::atoi(argv[1]) : 256, kv_len = argc > 2 ? std::atoi(argv[2]) : 1024;
  const int d = argc > 3 ? std::atoi(argv[3]) : 128;
  const bool causal = argc > 4;
  std::vector<bf16> q(std::size_t(q_len) * d), k(std::size_t(kv_len) * d), v(k.size()), o(q.size());
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-2, 2);
  for (auto* t : {&q, &k, &v})
    for (bf16& x : *t) x = convert<bf16>(u(rng));
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
