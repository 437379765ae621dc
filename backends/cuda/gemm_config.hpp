// tessel/cuda/gemm_config.hpp — the CUDA GEMM configurations (contract: core/gemm_contract.hpp).
//
// sm80 (mma.sync, any device from compute capability 8.0):
//   fp32: a SIMT GEMM on the scalar atom; bf16 / fp16: 128 × 256 × 64 blocks,
//   8 warps as 2 × 4 of 64 × 64 mma_m16n8k16 accumulators, 3 cp.async stages of
//   16 + 32 KiB swizzle128 tiles (144 KiB, within an A100's 164 KiB), the
//   portable ring schedule. Measured on an H200 at 4096³ bf16: 339 TFLOP/s;
//   256 × 128: 354; 128 × 128 with two blocks per SM: 380 — a shape that would
//   fit only once in an A100's shared memory, hence not the default.
// sm90 (sm_90a): bf16 / fp16 on the TMA schedule (schedule_sm90.hpp) with the
//   warpgroup wgmma atom; fp32 as sm80. See policy_sm90.hpp.
#pragma once
#include <type_traits>

#include "tessel/core/scope.hpp"
#include "tessel/core/shared_tile.hpp"
#include "tessel/cuda/atom/mma_m16n8k16.hpp"
#include "tessel/cuda/atom/scalar.hpp"
#include "tessel/cuda/atom/wgmma.hpp"
#include "tessel/cuda/schedule_sm90.hpp"
#include "tessel/cuda/swizzle.hpp"

namespace tessel::cuda {

template <class TIn> struct sm80_gemm_config {
  static_assert(sizeof(TIn) == 0, "sm80 policy: no GEMM configuration for this input type (fp32, fp16, bf16 only)");
};

// fp32: a plain SIMT GEMM. 64 × 64 × 16 block, 4 warps of 32 × 32; A rows are
// read one per lane (padded so a K-contiguous tile has no bank conflicts), B
// values are broadcast to the warp.
template <> struct sm80_gemm_config<float> {
  using atom = scalar;
  using smem_type = float;
  static constexpr int BM = 64, BN = 64, BK = 16, warps_m = 2, warps_n = 2, stages = 2;
  template <bool KContiguous>
  using layout_a = std::conditional_t<KContiguous, row_major<BM, BK, 1>, col_major<BM, BK>>;
  template <bool NContiguous>
  using layout_b = std::conditional_t<NContiguous, row_major<BK, BN>, col_major<BK, BN, 1>>;
};

// A 16-bit tensor-core GEMM configuration: the mma_m16n8k16 atom (the sm90
// policy's wgmma keeps its accumulator layout), swizzle128 shared tiles.
template <class T, int BM_, int BN_, int BK_, int WarpsM, int WarpsN, int Stages> struct tensor_core_config {
  using atom = mma_m16n8k16<T>;
  using smem_type = T;
  static constexpr int BM = BM_, BN = BN_, BK = BK_, warps_m = WarpsM, warps_n = WarpsN, stages = Stages;
  template <bool KContiguous> using layout_a = swizzle128<BM, BK, KContiguous>;
  template <bool NContiguous> using layout_b = swizzle128<BK, BN, NContiguous>;
};
template <class T> using sm80_tensor_core_config = tensor_core_config<T, 128, 256, 64, 2, 4, 3>;
template <> struct sm80_gemm_config<bf16> : sm80_tensor_core_config<bf16> {};
template <> struct sm80_gemm_config<fp16> : sm80_tensor_core_config<fp16> {};

template <class TIn, class TOut = TIn> struct sm90_gemm_config : sm80_gemm_config<TIn> {};

// Alternating: each consumer warpgroup owns whole work units (BM × BN of C,
// in BM/64 wgmma accumulators), the consumers taking turns ("ping-pong");
// else they split each BM × BN unit into Consumers row bands of 64. Measured
// on the H100 (bench/notes/cuda_gemm.md): alternating 128 × 128 units, 5
// stages, ran 0.90-0.95x cuBLAS where the cooperative 128 × 256 default ran
// 0.94-1.00x, so the default is cooperative. Cluster 2: blocks in pairs on
// vertically adjacent C tiles, each loading half of their common B tile and
// multicasting it to both (schedule_sm90.hpp); measured 0.93-0.98x cuBLAS
// where single blocks ran 0.98-1.02x in the same run, and no faster than
// pairs with the multicast switched off: the pairs' shared stage handover
// costs more than the halved L2 reads of B gain (with fp32 C too: −4 to −6%,
// 2026-11-23). Single blocks reading the same tiles at once already have
// their requests merged by the L2 request coalescer (up to half of them,
// 2026-11-25), and pairs lose most of that merging. Not the default.
template <class T, int BM_, int BN_, int BK_, int Consumers, int Stages, bool Alternating = false, int Cluster = 1,
          int EpilogueKiB = 32, bool Split = false, bool PlainStore = false>
struct sm90_tma_gemm_config {
  using atom = wgmma_m64k16<T, BN_>;
  using smem_type = T;
  using unit = group_scope<4>;
  using schedule = sm90_tma_schedule<Stages, Consumers, Cluster, EpilogueKiB, true, Split, PlainStore>;
  static constexpr int BM = BM_, BN = BN_, BK = BK_, warps_m = Alternating ? 1 : Consumers, warps_n = 1;
  static constexpr int stages = Stages;
  template <bool KContiguous> using layout_a = swizzle128<BM, BK, KContiguous>;
  template <bool NContiguous> using layout_b = swizzle128<BK, BN, NContiguous>;
};
// bf16 / fp16: 128 × 256 × 64 blocks, a producer warpgroup and 2 consumer
// warpgroups, each owning 64 × 256 of C in one m64n256k16 accumulator (128 fp32
// registers per lane). The ring's depth and the epilogue's staging depend on
// C's type (H100, bench/notes/cuda_gemm.md):
// - 16-bit C: 3 stages of 16 + 32 KiB and 2 × 32 KiB of epilogue staging
//   (208 KiB of the H100's 227 KiB). 4 stages with 2 × 16 KiB of staging
//   (EpilogueKiB 16: 225 KiB) measured no faster (four times, 2026-11-22 to 24).
// - fp32 C: those 4 stages and 2 × 16 KiB. C's store bytes, twice the 16-bit
//   ones, drain during the next unit's mainloop and delay its loads; the
//   deeper ring covers them: +0.4-4.3% at 4096³ over the four transposes
//   (most where B is transposed), 2026-11-23. The deeper lead costs L2 request
//   merging (25-29% of the read sectors against 40-53% at 3 ahead, hence a
//   lower clock); yet 3 stages, or a producer held to 3 ahead, ran 1-3%
//   slower (2026-11-25, bench/notes/cuda_gemm.md).
// PlainStore: the same kernel for C = A·B as it is (alpha 1, beta 0, C
// TMA-storable), its epilogue without the alpha/beta and fallback code
// (schedule_sm90.hpp); what gemm_instance.hpp runs for those calls.
template <class TIn, class TOut, bool PlainStore = false>
struct sm90_tma_gemm_default : sm90_tma_gemm_config<TIn, 128, 256, 64, 2, sizeof(TOut) == 4 ? 4 : 3, false, 1,
                                                    sizeof(TOut) == 4 ? 16 : 32, false, PlainStore> {};
template <class TOut> struct sm90_gemm_config<bf16, TOut> : sm90_tma_gemm_default<bf16, TOut> {};
template <class TOut> struct sm90_gemm_config<fp16, TOut> : sm90_tma_gemm_default<fp16, TOut> {};
template <class TIn, class TOut = TIn> struct sm90_plain_gemm_config : sm80_gemm_config<TIn> {};
template <class TOut> struct sm90_plain_gemm_config<bf16, TOut> : sm90_tma_gemm_default<bf16, TOut, true> {};
template <class TOut> struct sm90_plain_gemm_config<fp16, TOut> : sm90_tma_gemm_default<fp16, TOut, true> {};
// The wide plain-store kernel: 192 × 256 × 64 blocks on 3 consumer
// warpgroups, which load their own stages (no producer warpgroup fits beside
// them: schedule_sm90.hpp's self_load), 3 stages of 24 + 32 KiB and 3 × 16 KiB
// of epilogue staging (217 KiB). A step copies 56 KiB for 1.5 times the MACs
// of the 128 × 256 block's 48 KiB: 22% fewer bytes into each SM per MAC,
// where the loads bound the step rate. Measured on the H100 (2026-11-25,
// bench/notes/cuda_gemm.md) where both tiles fill their waves alike
// (6144 × 4096 × 4096, 3072 × 4096 × 4096, 16 × 1536 × 2048 × 2048; bf16 and
// fp16, all four transposes): +0.6-4.7% over the 128 × 256 kernel (most
// rows +1.5-3%, fp32 C of the batch the least); where 192
// rows leave a partial tile or wave (4096³: −6%) it loses, so gemm_instance.hpp
// takes it only where its waves cost less (wide_tile_pays).
template <class TIn, class TOut = TIn> struct sm90_wide_gemm_config : sm80_gemm_config<TIn> {};
template <class TIn, class TOut>
struct sm90_wide_gemm_default : sm90_tma_gemm_config<TIn, 192, 256, 64, 3, 3, false, 1, 16, false, true> {};
template <class TOut> struct sm90_wide_gemm_config<bf16, TOut> : sm90_wide_gemm_default<bf16, TOut> {};
template <class TOut> struct sm90_wide_gemm_config<fp16, TOut> : sm90_wide_gemm_default<fp16, TOut> {};
// The plain-store kernel on 128 × 192 blocks: 2 consumer warpgroups, each
// 64 × 192 of C in one m64n192k16 accumulator (96 fp32 registers a lane), 4
// stages of 16 + 24 KiB and 2 × 16 KiB of epilogue staging (192 KiB; 5
// stages would not fit beside the staging). Its step costs ~1.04 times a
// 128 × 256 one per area (fitted on an H200, 1.00-1.06 over eight shapes,
// bench/notes/cuda_gemm.md session 42), so it pays where its units fill the
// waves better: gemm_instance.hpp takes it where cheaper_whole_tile says
// (3072³ +17%, 1536³ +21-25%, 3072 × 3072 × 1024 +20% over the kernels
// chosen before).
template <class TIn, class TOut = TIn> struct sm90_n192_gemm_config : sm80_gemm_config<TIn> {};
template <class TIn, class TOut>
struct sm90_n192_gemm_default : sm90_tma_gemm_config<TIn, 128, 192, 64, 2, 4, false, 1, 16, false, true> {};
template <class TOut> struct sm90_n192_gemm_config<bf16, TOut> : sm90_n192_gemm_default<bf16, TOut> {};
template <class TOut> struct sm90_n192_gemm_config<fp16, TOut> : sm90_n192_gemm_default<fp16, TOut> {};
// The same with units split by steps (split-K, core/split_plan.hpp): what
// gemm_instance.hpp runs where fewer units than half the SMs would leave
// most of them idle and the plan's cost model says splitting pays. Not the
// default: compiled in, the partials' code slows the unsplit mainloop by
// ~2% (H100, bench/notes/cuda_gemm.md). 4 stages and 2 × 16 KiB of staging
// (for either C): a piece's few steps wait on loads from DRAM more than a
// whole unit's do; +3.5-7.5% over 3 stages at 512 × 4096 × 4096 and
// 256 × 8192 × 8192, level at 16 and 128 × 4096 × 4096 (2026-11-25).
template <class TIn, class TOut = TIn>
struct sm90_split_gemm_config : sm90_tma_gemm_config<TIn, 128, 256, 64, 2, 4, false, 1, 16, true> {};
// The same on 128 × 128 units (each consumer 64 × 128 of C, one m64n128k16
// accumulator), 6 stages of 16 + 16 KiB (the 4 × 48 KiB of the 128 × 256
// ring's bytes in flight) and 2 × 16 KiB of staging: twice the units, so
// where few rows leave the 128 × 256 plan a fraction of the SMs (128 ×
// 4096²: 16 units in 5 pieces, 80 blocks) its pieces run on more of them
// (32 units in 4 pieces, 128 blocks), each streaming half as much of B a
// step; where more rows share B, in fewer pieces or whole (fewer partials).
// Which split kernel a call takes: gemm_instance.hpp's choose_split_tile (and
// cheaper_whole_tile, for calls of more than one wave of its units whole).
template <class TIn, class TOut = TIn>
struct sm90_split_narrow_gemm_config : sm90_tma_gemm_config<TIn, 128, 128, 64, 2, 6, false, 1, 16, true> {};
// And on 64 × 128 units: one consumer warpgroup (64 × 128 of C), 8 stages of
// 8 + 16 KiB (128 KiB of B in flight, as the 128 × 256 ring), 16 KiB of
// staging: a call of at most 64 rows loads and multiplies no rows past 64, on
// the 128 × 128 units' blocks. H200 (session 39): 16-64 rows × 4096-14336 ×
// 4096-14336, +7 to +25% over the better of the two 128-row split kernels
// (and 64 × 256 units on one consumer, 5 stages: −10 to +14%); session 40:
// also at 96-128 rows and where all its units run at once (choose_split_tile).
template <class TIn, class TOut = TIn>
struct sm90_split_short_gemm_config : sm90_tma_gemm_config<TIn, 64, 128, 64, 1, 8, false, 1, 16, true> {};

}  // namespace tessel::cuda
