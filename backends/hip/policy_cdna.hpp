// tessel/hip/policy_cdna.hpp — the HIP policy for CDNA2 (gfx90a) and CDNA3 (gfx940…942).
//
// bf16 / fp16 GEMM runs on the 32×32×8 MFMA atom, fp32 on the 64-lane scalar
// atom; the tile ops are the CDNA fast paths (tile_ops_cdna.hpp) over the
// generic ones, the configurations gemm_config.hpp's and attention_config.hpp's,
// the context and launcher launch.hpp's. The two chips share
// every line: only the MFMA mnemonic differs, and the compiler picks it.
#pragma once
#include "tessel/hip/attention_config.hpp"
#include "tessel/hip/gemm_config.hpp"
#include "tessel/hip/launch.hpp"
#include "tessel/hip/tile_ops_cdna.hpp"

namespace tessel::hip {

struct cdna_policy : cdna_tile_ops {
  static constexpr int lanes = wave_lanes;
  using context = hip::context;
  template <class TIn, class TOut = TIn> using gemm_config = cdna_gemm_config<TIn>;
  static constexpr bool attention_fp32 = false;  // fp32 attention is CPU-only (refused by the API)
  template <class T, int D> using attention_config = cdna_attention_config<T, D>;
};

}  // namespace tessel::hip
