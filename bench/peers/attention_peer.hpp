// bench/peers/attention_peer.hpp — what tessel-bench compares attention against.
//
// Contract: one peer per backend build: an unfused OpenBLAS attention on cpu
// (attention_unfused.cpp), none on cuda/hip (make_attention_peer() returns
// nullptr there; bench/attention_vs_sdpa.py compares against SDPA on the GPU).
// The bench gives it every rotating operand set on the bench's device: q
// [batch, q_len, heads, head_dim], k and v [batch, kv_len, kv_heads, head_dim],
// dense row-major of the input type; out the same shape as q, fp32. run(i)
// computes out = softmax(scale·q·kᵀ + mask)·v for set i with tessel's
// semantics (kv head h / (heads / kv_heads), causal bottom-right: query i sees
// keys j <= i + kv_len − q_len, a row that sees no key is zeros). prepare()
// may copy the inputs (outside timing); workspace_bytes() is what run() needs
// beyond those copies, so the bench can skip a peer that would not fit.
// Errors throw std::runtime_error.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tessel/tensor.hpp"

namespace tessel::bench {

struct attention_problem {
  int batch = 0, q_len = 0, kv_len = 0, heads = 0, kv_heads = 0, head_dim = 0;
  bool causal = false;
  float scale = 0;  // > 0
  dtype in = dtype::f32;
  int threads = 0;  // CPU peers: threads to use (> 0)
};

struct attention_operands {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  float* out = nullptr;
};

class attention_peer {
 public:
  virtual ~attention_peer() = default;
  // For the table's peer column, per input type: e.g. "unfused openblas(bf16->fp32)".
  virtual std::string name(dtype in) const = 0;
  // Library version and configuration, for the header and the JSON.
  virtual std::string description() const = 0;
  virtual double workspace_bytes(const attention_problem& p) const = 0;
  virtual void prepare(const attention_problem& p, const std::vector<attention_operands>& sets) = 0;
  virtual void run(std::size_t set) = 0;
};

// The attention peer of this build; nullptr when the backend has none.
std::unique_ptr<attention_peer> make_attention_peer();

}  // namespace tessel::bench
