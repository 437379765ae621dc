// tessel/cpu/gemm_paths.hpp — the SIMD GEMM paths, each compiled in its own
// translation unit with that ISA's compiler flags (gemm_avx2.cpp, gemm_avx512.cpp).
#pragma once
#include "tessel/ops/gemm/call.hpp"

namespace tessel::cpu {
void gemm_avx2(const gemm_call& call, int threads);
void gemm_avx512(const gemm_call& call, int threads);
}  // namespace tessel::cpu
