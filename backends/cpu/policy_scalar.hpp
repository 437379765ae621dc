// tessel/cpu/policy_scalar.hpp — the CPU policy on the scalar atom: the reference path.
//
// Every tile op is the generic one; shared tiles are plain row/column-major
// fp32 panels (inputs are widened to fp32 as they are packed).
#pragma once
#include <type_traits>

#include "tessel/core/tile_ops.hpp"
#include "tessel/cpu/atom/scalar.hpp"
#include "tessel/cpu/launch.hpp"

namespace tessel::cpu {

struct scalar_policy : generic_tile_ops {
  static constexpr int lanes = 1;
  using context = cpu::context;

  template <class TIn> struct gemm_config {
    using atom = scalar;
    using smem_type = float;
    static constexpr int BM = 32, BN = 32, BK = 32, warps_m = 1, warps_n = 1, stages = 2;
    template <bool KContiguous>
    using layout_a = std::conditional_t<KContiguous, row_major<BM, BK>, col_major<BM, BK>>;
    template <bool NContiguous>
    using layout_b = std::conditional_t<NContiguous, row_major<BK, BN>, col_major<BK, BN>>;
  };

  static constexpr bool attention_fp32 = true;
  template <class T, int D> struct attention_config {
    using atom = scalar;
    using smem_type = float;
    static constexpr int BQ = 32, BKV = 32, warps = 1, stages = 2;
    using layout_q = row_major<BQ, D>;
    using layout_kt = col_major<D, BKV>;  // K rows are contiguous along D
    using layout_v = row_major<BKV, D>;
    using layout_p = row_major<BQ, BKV>;
  };
};

}  // namespace tessel::cpu
