// tessel/cpu/policy_avx2.hpp — the avx2 CPU policy: 4 × 24 micro-tile (12 ymm accumulators), blocks 128 × 192 × 256, runs 8 × 4.
//
// Attention: column atom of 24 rows (3 ymm) × 4 broadcast columns (12 ymm
// accumulators), blocks of 96 query rows × 64 key/value rows, two stages,
// groups of 8 query tiles sharing each step's Kᵀ and V tiles.
// Include only from translation units compiled with the avx2 flags
// (backends/cpu/gemm_avx2.cpp, attention_avx2.cpp and the avx2 test category);
// the choice of shapes is explained in bench/notes/cpu_gemm.md and
// bench/notes/cpu_attention.md.
#pragma once
#include "tessel/cpu/arch/avx2.hpp"
#include "tessel/cpu/policy_simd.hpp"

namespace tessel::cpu {
// Runs of 8 block rows × 4 block columns: each A tile packed once per 4 column
// blocks (its pack, MR = 4, goes through a staging buffer and costs more than
// B's), each B tile once per 8 row blocks: +10-15% over runs of 8 × 1 on an
// AVX2-only Zen 4 VM (2026-12-01, bench/notes/cpu_gemm.md).
using avx2_policy = simd_policy<xsimd::fma3<xsimd::avx2>, simd_tuning<4, 24, 128, 192, 256, 2, 8, 4>,
                                simd_attention_tuning<24, 4, 96, 64, 64, 2, 8>>;
}  // namespace tessel::cpu
