// tessel/ops/attention/call.hpp — a checked attention request, as backends receive it.
//
// Strides are in elements; head_dim is contiguous in q, k, v and out. The
// public API has checked every extent (int), the head grouping and the dtypes.
#pragma once
#include <cstdint>

#include "tessel/core/element.hpp"

namespace tessel {

struct bshd_ref {  // [batch, seq, heads, head_dim]
  const void* ptr;
  std::int64_t batch_stride, seq_stride, head_stride;
};

struct attention_call {
  bshd_ref q, k, v, out;  // out is written
  float* lse;             // [batch, heads, q_len] or null
  std::int64_t lse_batch_stride, lse_head_stride, lse_seq_stride;
  dtype type;
  int batch, heads, kv_heads, q_len, kv_len, head_dim;
  bool causal;
  float scale;
  int device;  // index of the device the tensors live on (GPU backends run there)
  bool portable = false;  // kernel_path::portable: the backend's baseline kernels only
};

}  // namespace tessel
