// tessel/cpu/policy_avx512.hpp — the avx512 CPU policy: 8 × 48 micro-tile (24 zmm accumulators), blocks 128 × 192 × 256, runs 8 × 1.
//
// Attention: column atom of 64 rows (4 zmm) × 4 broadcast columns (16 zmm
// accumulators), blocks of 128 query rows × 64 key/value rows, two stages,
// groups of 8 query tiles sharing each step's Kᵀ and V tiles.
// Include only from translation units compiled with the avx512 flags
// (backends/cpu/gemm_avx512.cpp, attention_avx512.cpp and the avx512 test
// category); the choice of shapes is explained in bench/notes/cpu_gemm.md and
// bench/notes/cpu_attention.md.
#pragma once
#include "tessel/cpu/arch/avx512.hpp"
#include "tessel/cpu/policy_simd.hpp"

namespace tessel::cpu {
// Runs of 8 block rows × 1 block column: each B tile packed once per 8 row
// blocks, A once per unit. Runs of 8 × 4 (the AVX2 path's) measured no faster
// at 1 thread and 10-20% slower at 16 on the Intel Xeon host (2026-12-01,
// bench/notes/cpu_gemm.md): there A's transposed pack (MR = 8, straight into
// the panels) is cheap and the 4 B tiles a claim then packs cost more.
using avx512_policy = simd_policy<xsimd::avx512bw, simd_tuning<8, 48, 128, 192, 256, 2, 8, 1>,
                                  simd_attention_tuning<64, 4, 128, 64, 64, 2, 8>>;
}  // namespace tessel::cpu
