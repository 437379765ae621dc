// backends/cuda/attention.cu — the CUDA backend's attention entry (bf16 / fp16):
// wgmma (sm90 policy) on compute capability 9.0, mma.sync (sm80 policy) elsewhere.
//
// The sm80 policy with an attention configuration: 128 query rows per block,
// K/V tiles of 64 keys in 2 stages, every shared tile in the swizzle128 layout
// so that Q·Kᵀ and P·V read their fragments with ldmatrix; P stays in registers
// (p_in_registers: the C fragment of mma_m16n8k16 is its A fragment).
// head_dim 64: 4 warps of 32 rows (two atoms high, so every K/V fragment read
// by ldmatrix feeds two mma.sync: shared bandwidth bounded 16-row warps);
// 16 + 2·(8 + 8) = 48 KiB. head_dim 128: 8 warps of 16 rows — 32-row warps
// need a 32 × 128 fp32 accumulator and spill past 255 registers (measured
// slower, bench/notes/cuda_attention.md); 32 + 2·(16 + 16) = 96 KiB.
#include <cuda_runtime.h>

#include "backend_entry.hpp"
#include "tessel/cuda/policy_choice.hpp"
#include "tessel/cuda/policy_sm80.hpp"
#include "tessel/cuda/policy_sm90.hpp"
#include "tessel/ops/attention/dispatch.hpp"

// Tuning overrides for the sm90 configuration (bench/device.sh builds variants
// with them and times them against the default in one run); the defaults are
// the measured best (bench/notes/cuda_attention.md).
#ifndef TESSEL_SM90_ATTENTION_BLOCKS
#define TESSEL_SM90_ATTENTION_BLOCKS 1
#endif
#ifndef TESSEL_SM90_ATTENTION_WARPS
#define TESSEL_SM90_ATTENTION_WARPS 8
#endif
#ifndef TESSEL_SM90_ATTENTION_STAGES
#define TESSEL_SM90_ATTENTION_STAGES 2
#endif
#ifndef TESSEL_SM90_ATTENTION_BKV
#define TESSEL_SM90_ATTENTION_BKV 128
#endif

namespace tessel::cuda {

template <class T, int D> struct sm80_attention_config {
  using atom = mma_m16n8k16<T>;
  using smem_type = T;
  // Warps of 32 rows at head_dim 64, of 16 rows at 128 (see the header).
  static constexpr int BQ = 128, BKV = 64, warps = D >= 128 ? 8 : 4, stages = 2;
  static constexpr bool p_in_registers = true;
  using layout_q = swizzle128<BQ, D, true>;    // A: K (= D) contiguous
  using layout_kt = swizzle128<D, BKV, false>; // B = Kᵀ: K (= D) contiguous, as K's rows are
  using layout_v = swizzle128<BKV, D, true>;   // B: N (= D) contiguous
  using layout_p = swizzle128<BQ, BKV, false>;  // unused: P stays in registers
};

struct sm80_attention : sm80 {
  static constexpr bool attention_fp32 = false;  // fp32 attention is CPU-only (refused by the API)
  template <class T, int D> using attention_config = sm80_attention_config<T, D>;
};

// sm_90a: the same kernel on wgmma. Every warp owns 16 query rows, so each
// warpgroup owns 64 and Q·Kᵀ (m64n128k16, both operands from shared memory)
// and P·V (m64nDk16, P from registers) are one wgmma per 16-wide K slice
// (tile_ops_sm90.hpp). 8 warps = 2 warpgroups, BQ 128, BKV 128, 2 stages, one
// block per SM (hd128: 234 registers, 32 + 2·(32 + 32) = 160 KiB). Measured on
// the H100 (2026-11-22) against BKV 64 with two blocks per SM (≤ 128
// registers), BKV 64 with 3 stages and 12 warps (BQ 192): this one is the
// fastest at seq ≥ 4k, by 1-8 %.
template <class T, int D> struct sm90_attention_config {
  using atom = mma_m16n8k16<T>;
  using smem_type = T;
  static constexpr int warps = TESSEL_SM90_ATTENTION_WARPS, BQ = 16 * warps, BKV = TESSEL_SM90_ATTENTION_BKV;
  static constexpr int stages = TESSEL_SM90_ATTENTION_STAGES, blocks_per_sm = TESSEL_SM90_ATTENTION_BLOCKS;
  static constexpr bool p_in_registers = true;
  using layout_q = swizzle128<BQ, D, true>;
  using layout_kt = swizzle128<D, BKV, false>;
  using layout_v = swizzle128<BKV, D, true>;
  using layout_p = swizzle128<BQ, BKV, false>;  // unused: P stays in registers
};

struct sm90_attention : sm90 {
  static constexpr bool attention_fp32 = false;
  template <class T, int D> using attention_config = sm90_attention_config<T, D>;
};

}  // namespace tessel::cuda

namespace tessel::detail {

void cuda_attention(const attention_call& call, void* stream) {
  const cuda::device_scope on(call.device);
  auto launch = [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    cuda::launch<K, K::cfg::warps * cuda::warp_lanes>(K::shape(problem), problem, static_cast<cudaStream_t>(stream));
  };
  using probe = ops::attention_kernel<cuda::sm90_attention, bf16, 128>;
  if (cuda::use_sm90<probe, probe::cfg::warps * cuda::warp_lanes>()) ops::attention_dispatch<cuda::sm90_attention>(call, launch);
  else ops::attention_dispatch<cuda::sm80_attention>(call, launch);
}

}  // namespace tessel::detail
