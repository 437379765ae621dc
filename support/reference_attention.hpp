// support/reference_attention.hpp — attention forward in float64 on the host.
#pragma once
#include <vector>

#include "tessel/tensor.hpp"

namespace tessel::support {

struct attention_reference {
  std::vector<double> out;  // dense [batch, q_len, heads, head_dim]
  std::vector<double> lse;  // dense [batch, heads, q_len]; -inf for rows that see no key (or only −inf scores)
};

// q, k, v: host views [batch, seq, heads, head_dim] (any strides). Causal masks
// key j for query i when j > i + (kv_len − q_len) (bottom-right alignment).
attention_reference reference_attention(const tensor_view& q, const tensor_view& k, const tensor_view& v, bool causal,
                                        double scale);

}  // namespace tessel::support
