// tessel/attention.hpp — fused attention forward (FlashAttention algorithm).
//
//   out[b, i, h, :] = softmax_j( scale · q[b, i, h, :] · k[b, j, h', :] + mask ) · v[b, j, h', :]
//
// Layout [batch, seq, heads, head_dim] with arbitrary strides, the last
// (head_dim) dimension contiguous — so a [batch, heads, seq, head_dim] tensor is
// passed as a strided view. K and V have kv_heads heads, which must divide the
// heads of Q (grouped-query / multi-query attention: query head h reads
// kv head h / (heads / kv_heads)). q_len and kv_len are independent.
//
// Causal masking is aligned at the bottom right, as in FlashAttention 2: query
// i sees keys j <= i + (kv_len - q_len). A query row that sees no key (possible
// when q_len > kv_len), or only keys whose scores are -inf, is written as
// zeros, with LSE = -inf — never NaN. NaN in q, or in a k row the query sees
// (or an infinite score), makes that row's out and LSE NaN; NaN / Inf in v
// reach the columns of the rows that see the key (and, under the causal mask,
// possibly rows of the same KV tile that do not: 0·NaN in P·V; README).
//
// Inputs bf16 or fp16 (and fp32 on the CPU); all softmax arithmetic is fp32;
// out has the input type. head_dim 64 or 128. Optionally writes the per-row
// log-sum-exp (natural log, of the scaled scores) as fp32 [batch, heads, q_len].
// Extra memory is O(batch · heads · seq), never O(seq²).
#pragma once
#include "tessel/error.hpp"
#include "tessel/tensor.hpp"

namespace tessel {

struct attention_options {
  bool causal = false;
  // Softmax scale, > 0; 0 (the default) means 1 / sqrt(head_dim).
  float scale = 0.0f;
  // If lse.data is set: fp32 [batch, heads, q_len], written: any strides under
  // which no two elements overlap, nor overlap q, k, v or out (api/tensor.hpp).
  tensor_view lse{};
  kernel_path path = kernel_path::fastest;  // tessel/tensor.hpp
};

void attention(const tensor_view& q, const tensor_view& k, const tensor_view& v, const tensor_view& out,
               const attention_options& options = {}, const stream& s = {});

}  // namespace tessel
