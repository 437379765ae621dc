// backends/cuda/attention.cu — the CUDA backend's attention entry (bf16 / fp16 on mma.sync).
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
#include "tessel/cuda/policy_sm80.hpp"
#include "tessel/ops/attention/dispatch.hpp"

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

}  // namespace tessel::cuda

namespace tessel::detail {

void cuda_attention(const attention_call& call, void* stream) {
  const cuda::device_scope on(call.device);
  ops::attention_dispatch<cuda::sm80_attention>(call, [&](auto tag, const auto& problem) {
    using K = typename decltype(tag)::type;
    cuda::launch<K, K::cfg::warps * cuda::warp_lanes>(K::shape(problem), problem, static_cast<cudaStream_t>(stream));
  });
}

}  // namespace tessel::detail
