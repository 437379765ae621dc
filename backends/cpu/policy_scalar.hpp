// tessel/cpu/policy_scalar.hpp — the CPU policy on the scalar atom: the reference path.
//
// Every tile op is the generic one; shared tiles are plain row/column-major
// fp32 panels (inputs are widened to fp32 as they are packed).
#pragma once
#include "tessel/core/tile_ops.hpp"
#include "tessel/cpu/attention_config.hpp"
#include "tessel/cpu/gemm_config.hpp"
#include "tessel/cpu/launch.hpp"

namespace tessel::cpu {

struct scalar_policy : generic_tile_ops {
  static constexpr int lanes = 1;
  using context = cpu::context;

  template <class TIn, class TOut = TIn> using gemm_config = scalar_gemm_config<TIn>;

  static constexpr bool attention_fp32 = true;
  template <class T, int D> using attention_config = scalar_attention_config<T, D>;
};

}  // namespace tessel::cpu
