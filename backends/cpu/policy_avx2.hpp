// tessel/cpu/policy_avx2.hpp — the avx2 CPU policy: 4 × 24 micro-tile (12 ymm accumulators), blocks 128 × 192 × 256.
//
// Attention: column atom of 24 rows (3 ymm) × 4 broadcast columns (12 ymm
// accumulators), blocks of 96 query rows × 64 key/value rows, two stages.
// Include only from translation units compiled with the avx2 flags
// (backends/cpu/gemm_avx2.cpp, attention_avx2.cpp and the avx2 test category);
// the choice of shapes is explained in bench/notes/cpu_gemm.md and
// bench/notes/cpu_attention.md.
#pragma once
#include "tessel/cpu/arch/avx2.hpp"
#include "tessel/cpu/policy_simd.hpp"

namespace tessel::cpu {
using avx2_policy = simd_policy<xsimd::fma3<xsimd::avx2>, simd_tuning<4, 24, 128, 192, 256, 2>,
                                simd_attention_tuning<24, 4, 96, 64, 64, 2>>;
}  // namespace tessel::cpu
