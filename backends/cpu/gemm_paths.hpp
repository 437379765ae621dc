// tessel/cpu/gemm_paths.hpp — the SIMD GEMM paths, each compiled in its own
// translation unit with that ISA's compiler flags (gemm_avx2.cpp, gemm_avx512.cpp, gemm_amx.cpp).
#pragma once
#include "tessel/ops/gemm/call.hpp"

namespace tessel::cpu {
void gemm_avx2(const gemm_call& call, int threads);
void gemm_avx512(const gemm_call& call, int threads);
void gemm_amx(const gemm_call& call, int threads);  // bf16 in on AMX tiles; other inputs as gemm_avx512
}  // namespace tessel::cpu
