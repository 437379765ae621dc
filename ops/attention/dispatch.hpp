// tessel/ops/attention/dispatch.hpp — from a checked attention_call to a typed kernel launch.
#pragma once
#include <cmath>

#include "tessel/ops/attention/call.hpp"
#include "tessel/ops/attention/kernel.hpp"
#include "tessel/ops/gemm/dispatch.hpp"

namespace tessel::ops {

template <class T> attention_problem<T> make_attention_problem(const attention_call& c) {
  attention_problem<T> p;
  p.q = static_cast<const T*>(c.q.ptr);
  p.k = static_cast<const T*>(c.k.ptr);
  p.v = static_cast<const T*>(c.v.ptr);
  p.out = static_cast<T*>(const_cast<void*>(c.out.ptr));
  p.q_bs = c.q.batch_stride; p.q_ss = c.q.seq_stride; p.q_hs = c.q.head_stride;
  p.k_bs = c.k.batch_stride; p.k_ss = c.k.seq_stride; p.k_hs = c.k.head_stride;
  p.v_bs = c.v.batch_stride; p.v_ss = c.v.seq_stride; p.v_hs = c.v.head_stride;
  p.o_bs = c.out.batch_stride; p.o_ss = c.out.seq_stride; p.o_hs = c.out.head_stride;
  p.lse = c.lse;
  p.l_bs = c.lse_batch_stride; p.l_hs = c.lse_head_stride; p.l_ss = c.lse_seq_stride;
  p.batch = c.batch; p.heads = c.heads; p.kv_heads = c.kv_heads; p.q_len = c.q_len; p.kv_len = c.kv_len;
  p.causal = c.causal;
  p.scale_log2 = c.scale * 1.4426950408889634f;
  return p;
}

// The policy's config, or for a call without a causal mask the one it names
// for those (core/attention_contract.hpp: non_causal; by default the same).
template <class P, class T, int D, class Launch>
void attention_sized(const attention_call& c, const attention_problem<T>& p, Launch& launch) {
  using cfg = typename P::template attention_config<T, D>;
  using unmasked = non_causal_config_of<cfg>;
  if (c.causal) launch(kernel_tag<attention_kernel<P, T, D, cfg>>{}, p);
  else launch(kernel_tag<attention_kernel<P, T, D, unmasked>>{}, p);  // the same kernel where unmasked is cfg
}

template <class P, class T, class Launch> void attention_typed(const attention_call& c, Launch& launch) {
  const attention_problem<T> p = make_attention_problem<T>(c);
  if (c.head_dim == 64) attention_sized<P, T, 64>(c, p, launch);
  else attention_sized<P, T, 128>(c, p, launch);
}

// Instantiates and launches the attention kernel of policy P for `call`. fp32 only
// where the policy says it supports it (P::attention_fp32).
template <class P, class Launch> void attention_dispatch(const attention_call& c, Launch&& launch) {
  switch (c.type) {
    case dtype::f32:
      if constexpr (P::attention_fp32) attention_typed<P, float>(c, launch);
      break;
    case dtype::f16: attention_typed<P, fp16>(c, launch); break;
    case dtype::bf16: attention_typed<P, bf16>(c, launch); break;
  }
}

}  // namespace tessel::ops
