// tessel/cpu/gemm_config.hpp — the CPU GEMM configurations (contract: core/gemm_contract.hpp).
//
// scalar: the reference path on the scalar atom: 32 × 32 × 32 blocks of
//   row/column-major fp32 panels (inputs widened as they are packed), the
//   portable ring schedule.
// simd (AVX2 / AVX-512, policy_simd.hpp): a GotoBLAS-style GEMM. Shared tiles
//   are micro-panels of fp32, whatever the input type and majorness:
//     A (BM × BK): MR-row panels, k-major:  (r, k) -> (r/MR)·MR·BK + k·MR + r%MR
//     B (BK × BN): NR-col panels, k-major:  (k, n) -> (n/NR)·BK·NR + k·NR + n%NR
//   on the policy's MR × NR register-blocked atom, run by packed_schedule
//   (schedule_packed.hpp) over the raster's runs of run_rows × run_cols
//   blocks, so a step's packed B tile serves every row block of the run and
//   its packed A tile every column block. The
//   shapes per ISA (simd_tuning) are in policy_avx2.hpp / policy_avx512.hpp;
//   bench/notes/cpu_gemm.md explains them.
#pragma once
#include <cstring>
#include <type_traits>

#include "tessel/core/scope.hpp"
#include "tessel/core/shared_tile.hpp"
#include "tessel/cpu/atom/scalar.hpp"
#include "tessel/cpu/schedule_packed.hpp"

namespace tessel::cpu {

template <class TIn> struct scalar_gemm_config {
  using atom = scalar;
  using smem_type = float;
  static constexpr int BM = 32, BN = 32, BK = 32, warps_m = 1, warps_n = 1, stages = 2;
  template <bool KContiguous>
  using layout_a = std::conditional_t<KContiguous, row_major<BM, BK>, col_major<BM, BK>>;
  template <bool NContiguous>
  using layout_b = std::conditional_t<NContiguous, row_major<BK, BN>, col_major<BK, BN>>;
};

// Block and micro-tile shape of a SIMD path (chosen per ISA in policy_avx*.hpp).
// RunRows × RunCols: the raster's runs of block rows × block columns
// (ops/gemm/kernel.hpp) that the GEMM's packed_schedule runs together as one
// group (schedule_packed.hpp): each A tile of a step packed once for RunCols
// units, each B tile once for RunRows.
template <int MR_, int NR_, int BM_, int BN_, int BK_, int Stages_, int RunRows_, int RunCols_>
struct simd_tuning {
  static constexpr int MR = MR_, NR = NR_, BM = BM_, BN = BN_, BK = BK_, stages = Stages_;
  static constexpr int run_rows = RunRows_, run_cols = RunCols_, group = RunRows_ * RunCols_;
};

// Packed panels: `Lines` lines of `Depth` elements, grouped P lines to a panel,
// each panel depth-major. A is lines = rows (P = MR), B is lines = columns (P = NR).
// After the panels, a small tail records how much of the tile lies inside the
// matrix (valid lines, valid depth), written by load: mma skips micro-tiles
// and k steps that are all zero padding. Every element is still written (zero
// outside the matrix), so any reader of the layout sees the full tile.
template <int Lines, int Depth, int P> struct packed_extent {
  static constexpr int panels_size = Lines * Depth;
  static constexpr int tail = 16;  // floats: keeps the next stage 64-byte aligned
  TESSEL_HOST_DEVICE static void set(float* data, int lines, int depth) {
    const int e[2] = {lines, depth};
    std::memcpy(data + panels_size, e, sizeof e);
  }
  TESSEL_HOST_DEVICE static void get(const float* data, int& lines, int& depth) {
    int e[2];
    std::memcpy(e, data + panels_size, sizeof e);
    lines = e[0];
    depth = e[1];
  }
};
template <int R, int C, int MR> struct packed_a {
  static_assert(R % MR == 0, "packed_a: BM must be a multiple of MR");
  using extent = packed_extent<R, C, MR>;
  static constexpr int rows = R, cols = C, size = R * C + extent::tail;
  static constexpr bool contiguous_cols = false;
  TESSEL_HOST_DEVICE static constexpr int offset(int r, int c) { return (r / MR) * (MR * C) + c * MR + r % MR; }
};
template <int R, int C, int NR> struct packed_b {
  static_assert(C % NR == 0, "packed_b: BN must be a multiple of NR");
  using extent = packed_extent<C, R, NR>;
  static constexpr int rows = R, cols = C, size = R * C + extent::tail;
  static constexpr bool contiguous_cols = false;  // only within a panel
  TESSEL_HOST_DEVICE static constexpr int offset(int r, int c) { return (c / NR) * (R * NR) + r * NR + c % NR; }
};

// The SIMD GEMM configuration of policy P (its atom, MR × NR) with shapes Tuning.
template <class P, class Tuning> struct simd_gemm_config {
  using atom = typename P::atom;
  using smem_type = float;
  static constexpr int BM = Tuning::BM, BN = Tuning::BN, BK = Tuning::BK;
  static constexpr int warps_m = 1, warps_n = 1, stages = Tuning::stages;
  template <bool KContiguous> using layout_a = packed_a<BM, BK, Tuning::MR>;
  template <bool NContiguous> using layout_b = packed_b<BK, BN, Tuning::NR>;
  // Goto-style reuse of the packed tiles: the schedule's group is one run of
  // the op's raster (run_rows block rows × run_cols block columns,
  // ops/gemm/kernel.hpp raster_at), so within a step the run's units share
  // each A tile along a row and each B tile down a column; the run's B tiles
  // of a step all stay packed while its rows pass (the op's run_tiles).
  static constexpr int raster_group = Tuning::run_rows, raster_cols = Tuning::run_cols;
  using schedule = packed_schedule<P, Tuning::group>;
};

}  // namespace tessel::cpu
