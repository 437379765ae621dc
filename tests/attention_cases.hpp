// tests/attention_cases.hpp — running one attention case through the public API and checking it.
//
// run_attention() draws fresh random q, k, v (seeded), lays them out as
// [b, s, h, d] or [b, h, s, d] (through strides, with padding), poisons out and
// lse and a guard zone around each, runs tessel::attention on the device and
// checks: guards untouched, every output written, relative Frobenius error of
// out under the dtype's tolerance, lse within 1e-3 absolute (−inf where the
// reference is −inf), no NaN anywhere.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel::test {

struct attention_case {
  int batch = 1, q_len = 1, kv_len = 1, heads = 1, kv_heads = 1, head_dim = 64;
  dtype type = dtype::bf16;
  bool causal = false;
  float scale = 0.0f;
  bool lse = true;
  bool heads_major = false;  // [b, h, s, d] memory order (passed as a strided [b, s, h, d] view)
  int pad = 0;
  std::string name() const;
};
inline void PrintTo(const attention_case& c, std::ostream* os) { *os << c.name(); }

struct attention_outcome {
  double error = 0, lse_error = 0;
  std::int64_t unwritten = 0, guard_hits = 0, lse_mismatch_inf = 0;
  std::vector<double> out;
};

double attention_tolerance(dtype t);
attention_outcome run_attention(const attention_case& c, const device& dev, std::uint64_t seed);
std::vector<attention_case> attention_cases(bool include_fp32);

}  // namespace tessel::test
