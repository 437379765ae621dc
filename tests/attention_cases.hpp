// tests/attention_cases.hpp — running one attention case through the public API and checking it.
//
// prepare_attention() draws the inputs once (seeded) and computes the float64
// reference; run_attention() lays them out as [b, s, h, d] or [b, h, s, d]
// (through strides, with padding), poisons out and lse and a guard zone around
// each, runs tessel::attention on a device and compares. Inputs:
//   uniform         q, k, v uniform in [−1, 1): scores of a few units.
//   equal_scores    q = k = 0.75, so every score is 0.5625·head_dim and the answer is the
//                   mean of the visible v rows; `logit` sets the scale so that
//                   scale·score = logit.
//   integer_scores  q, k small integers (−4..4): every score is an exact
//                   integer in fp32, so the error left is the softmax's own;
//                   `logit` sets scale·(score spread) ≈ logit.
// `pokes` then overwrite single elements (NaN, ±Inf) of q, k or v.
// Checks: guards untouched, every output written, each element's class (finite,
// NaN, +Inf, −Inf) as in the reference, for out and lse; relative Frobenius
// error of out's finite elements; lse's finite elements' abs error, scaled so
// that the check "< 1e-3" allows 1e-3 plus 8 fp32 roundings of the LSE's size.
#pragma once
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel::test {

enum class attention_inputs { uniform, equal_scores, integer_scores };

struct attention_poke {
  char tensor;  // 'q', 'k' or 'v'
  int b, s, h, d;
  float value;
};

struct attention_case {
  int batch = 1, q_len = 1, kv_len = 1, heads = 1, kv_heads = 1, head_dim = 64;
  dtype type = dtype::bf16;
  bool causal = false;
  float scale = 0.0f;
  bool lse = true;
  bool heads_major = false;  // [b, h, s, d] memory order (passed as a strided [b, s, h, d] view)
  int pad = 0;
  attention_inputs inputs = attention_inputs::uniform;
  double logit = 1.0;  // equal_scores / integer_scores: the size of scale·score
  std::vector<attention_poke> pokes;
  bool portable = false;  // kernel_path::portable
  std::string name() const;
};
inline void PrintTo(const attention_case& c, std::ostream* os) { *os << c.name(); }

struct attention_outcome {
  double error = 0, lse_error = 0;  // over the elements finite in both (lse_error scaled: see above)
  std::int64_t unwritten = 0, guard_hits = 0;
  std::int64_t out_class_mismatch = 0, lse_class_mismatch = 0;  // NaN / ±Inf / finite differ from the reference
  std::vector<double> out;  // dense [b, s, h, d], as written
};

// A case's inputs and reference, drawn once, runnable on any device.
struct attention_data;
struct attention_data_deleter {
  void operator()(attention_data* d) const;
};
using attention_prepared = std::unique_ptr<attention_data, attention_data_deleter>;

double attention_tolerance(dtype t);
attention_prepared prepare_attention(const attention_case& c, std::uint64_t seed);
attention_outcome run_attention(const attention_prepared& data, const device& dev);
attention_outcome run_attention(const attention_case& c, const device& dev, std::uint64_t seed);
std::vector<attention_case> attention_cases(bool include_fp32);

}  // namespace tessel::test
