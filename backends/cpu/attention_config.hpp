// tessel/cpu/attention_config.hpp — the CPU attention configurations (contract: core/attention_contract.hpp).
//
// scalar: the reference path on the scalar atom: 32 query rows × 32 key/value
//   rows, row/column-major fp32 tiles, P through shared memory.
// simd (AVX2 / AVX-512, attention_simd.hpp): the column atom of M rows ×
//   one broadcast value; fp32 shared tiles in the layouts below; shapes per
//   ISA (simd_attention_tuning) in policy_avx2.hpp / policy_avx512.hpp,
//   explained in bench/notes/cpu_attention.md; the packed schedule.
// amx (bf16 in, attention_amx.hpp): Q, Kᵀ, V and P as bf16 panels in the tile
//   registers' byte order (gemm_config.hpp's amx_a / amx_b), the AMX atom; S
//   and O are fp32 fragments, P is rounded to bf16 for P·V (as on the GPUs);
//   the packed schedule.
#pragma once
#include "tessel/core/scope.hpp"
#include "tessel/core/shared_tile.hpp"
#include "tessel/cpu/atom/amx.hpp"
#include "tessel/cpu/atom/scalar.hpp"
#include "tessel/cpu/atom/simd_col.hpp"
#include "tessel/cpu/gemm_config.hpp"

namespace tessel::cpu {

template <class T, int D> struct scalar_attention_config {
  using atom = scalar;
  using smem_type = float;
  static constexpr int BQ = 32, BKV = 32, warps = 1, stages = 2;
  using layout_q = row_major<BQ, D>;
  using layout_kt = col_major<D, BKV>;  // K rows are contiguous along D
  using layout_v = row_major<BKV, D>;
  using layout_p = row_major<BQ, BKV>;
};

// Attention block shape of a SIMD path (chosen per ISA in policy_avx*.hpp):
// atom column M, broadcast block NB, query rows BQ, key/value rows BKV per
// head_dim 64 and 128, ring stages, and Group: how many query tiles of one
// head the packed schedule runs step by step together, sharing each step's
// Kᵀ and V tiles.
template <int M_, int NB_, int BQ_, int BKV64_, int BKV128_, int Stages_, int Group_> struct simd_attention_tuning {
  static constexpr int M = M_, NB = NB_, BQ = BQ_, BKV64 = BKV64_, BKV128 = BKV128_, stages = Stages_;
  static constexpr int group = Group_;
};

template <int R, int C, int M> struct col_panels {
  static_assert(R % M == 0, "col_panels: rows must be whole panels");
  static constexpr int rows = R, cols = C, size = R * C;
  static constexpr bool contiguous_cols = false;
  TESSEL_HOST_DEVICE static constexpr int offset(int r, int c) { return (r / M) * (M * C) + c * M + r % M; }
};
template <int R, int C> struct key_rows {
  static constexpr int rows = R, cols = C, size = R * C;
  static constexpr bool contiguous_cols = false;
  TESSEL_HOST_DEVICE static constexpr int offset(int r, int c) { return c * R + r; }
};
template <int R, int C, int NB> struct row_panels {
  static_assert(C % NB == 0, "row_panels: columns must be whole panels");
  static constexpr int rows = R, cols = C, size = R * C;
  static constexpr bool contiguous_cols = false;  // only within a panel
  TESSEL_HOST_DEVICE static constexpr int offset(int r, int c) { return (c / NB) * (R * NB) + r * NB + c % NB; }
};

// The SIMD attention configuration of policy P on Arch with shapes Tuning, run
// by packed_schedule: Tuning::group query tiles of a head (or of the heads
// sharing a K/V head) step-major, each step's Kᵀ and V loaded once for all.
template <class P, class Arch, class Tuning, class T, int D> struct simd_attention_config {
  using atom = simd_col_atom<Arch, Tuning::M>;
  using smem_type = float;
  static constexpr int M = Tuning::M, NB = Tuning::NB, W = int(xsimd::batch<float, Arch>::size);
  static constexpr int BQ = Tuning::BQ, BKV = D == 64 ? Tuning::BKV64 : Tuning::BKV128;
  static constexpr int warps = 1, stages = Tuning::stages;
  static_assert(BKV % NB == 0 && D % NB == 0 && D % W == 0, "attention: NB must divide BKV and D");
  using layout_q = col_panels<BQ, D, M>;
  using layout_kt = key_rows<D, BKV>;
  using layout_v = row_panels<BKV, D, NB>;
  using layout_p = col_panels<BQ, BKV, M>;
  using schedule = packed_schedule<P, Tuning::group>;
};

// Attention block shape of the AMX path: query rows BQ, key/value rows BKV,
// ring stages, and Group: how many query tiles of one head the packed
// schedule runs step by step together, sharing each step's Kᵀ and V panels
// (policy_amx.hpp chooses; bench/notes/cpu_attention.md).
template <int BQ_, int BKV_, int Stages_, int Group_> struct amx_attention_tuning {
  static constexpr int BQ = BQ_, BKV = BKV_, stages = Stages_, group = Group_;
};

// The AMX attention configuration (bf16 in) of policy P with shapes Tuning. Panels:
//   Q  amx_a<BQ, D>    rows of 64 bytes, K = head_dim
//   Kᵀ amx_b<D, BKV>   VNNI pairs along head_dim, one 16-key panel per 16 keys
//   V  amx_b<BKV, D>   VNNI pairs of keys
//   P  amx_a<BQ, BKV>  the softmax's P, rounded to bf16 (attention_amx.hpp's store)
// Run by packed_schedule: Tuning::group query tiles of a head (or of the heads
// sharing a K/V head) step-major, each step's Kᵀ and V packed once for all.
template <class P, class Tuning, int D> struct amx_attention_config {
  using atom = amx_atom;
  using smem_type = bf16;
  static constexpr int BQ = Tuning::BQ, BKV = Tuning::BKV, warps = 1, stages = Tuning::stages;
  using layout_q = amx_a<BQ, D>;
  using layout_kt = amx_b<D, BKV>;
  using layout_v = amx_b<BKV, D>;
  using layout_p = amx_a<BQ, BKV>;
  using schedule = packed_schedule<P, Tuning::group>;
};

}  // namespace tessel::cpu
