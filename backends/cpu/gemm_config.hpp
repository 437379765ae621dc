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
// amx (bf16 in, policy_amx.hpp): the same schedule on bf16 panels in the AMX
//   tile registers' byte order (amx_a / amx_b below) and the AMX atom.
#pragma once
#include <cstring>
#include <type_traits>

#include "tessel/core/scope.hpp"
#include "tessel/core/shared_tile.hpp"
#include "tessel/core/element.hpp"
#include "tessel/cpu/atom/amx.hpp"
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
// T: the element type of the panels (fp32 here; bf16 for the AMX panels below).
template <int Lines, int Depth, int P, class T = float> struct packed_extent {
  static constexpr int panels_size = Lines * Depth;
  static constexpr int tail = 64 / int(sizeof(T));  // elements: keeps the next stage 64-byte aligned
  TESSEL_HOST_DEVICE static void set(T* data, int lines, int depth) {
    const int e[2] = {lines, depth};
    std::memcpy(data + panels_size, e, sizeof e);
  }
  TESSEL_HOST_DEVICE static void get(const T* data, int& lines, int& depth) {
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

// AMX panels of bf16 (policy_amx.hpp): 1 KiB sub-tiles, each what one tileloadd
// reads (16 rows of 64 bytes), in the tile registers' byte order (atom/amx.hpp):
//   A (R × C = BM × BK): (r, k) -> ((r/16)·(C/32) + k/32)·512 + (r%16)·32 + k%32
//   B (R × C = BK × BN): (k, n) -> ((n/16)·(R/32) + k/32)·512 + ((k%32)/2)·32 + (n%16)·2 + k%2
// so a 16-row (16-column) panel's K slices follow each other. After the
// panels, the same extent tail as the fp32 panels (lines = rows of A, columns of B).
template <int R, int C> struct amx_a {
  static_assert(R % 16 == 0 && C % 32 == 0, "amx_a: BM must be a multiple of 16 and BK of 32");
  using extent = packed_extent<R, C, 16, bf16>;
  static constexpr int rows = R, cols = C, size = R * C + extent::tail;
  static constexpr bool contiguous_cols = false;  // only within a 32-element run
  TESSEL_HOST_DEVICE static constexpr int offset(int r, int c) {
    return ((r / 16) * (C / 32) + c / 32) * 512 + (r % 16) * 32 + c % 32;
  }
};
template <int R, int C> struct amx_b {
  static_assert(R % 32 == 0 && C % 16 == 0, "amx_b: BK must be a multiple of 32 and BN of 16");
  using extent = packed_extent<C, R, 16, bf16>;
  static constexpr int rows = R, cols = C, size = R * C + extent::tail;
  static constexpr bool contiguous_cols = false;
  TESSEL_HOST_DEVICE static constexpr int offset(int r, int c) {
    return ((c / 16) * (R / 32) + r / 32) * 512 + ((r % 32) / 2) * 32 + (c % 16) * 2 + r % 2;
  }
};

// Block shape of the AMX path (policy_amx.hpp; its micro-block is 32 × 32, four
// tile registers of C): BM × BN × BK, and the raster's runs as in simd_tuning.
template <int BM_, int BN_, int BK_, int Stages_, int RunRows_, int RunCols_> struct amx_tuning {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, stages = Stages_;
  static constexpr int run_rows = RunRows_, run_cols = RunCols_, group = RunRows_ * RunCols_;
};

// The AMX GEMM configuration of policy P (bf16 in) with shapes Tuning (amx_tuning).
template <class P, class Tuning> struct amx_gemm_config {
  using atom = amx_atom;
  using smem_type = bf16;
  static constexpr int BM = Tuning::BM, BN = Tuning::BN, BK = Tuning::BK;
  static constexpr int warps_m = 1, warps_n = 1, stages = Tuning::stages;
  template <bool KContiguous> using layout_a = amx_a<BM, BK>;
  template <bool NContiguous> using layout_b = amx_b<BK, BN>;
  static constexpr int raster_group = Tuning::run_rows, raster_cols = Tuning::run_cols;
  using schedule = packed_schedule<P, Tuning::group>;
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
