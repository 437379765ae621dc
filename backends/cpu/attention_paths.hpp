// tessel/cpu/attention_paths.hpp — the SIMD attention paths, each compiled in its own
// translation unit with that ISA's compiler flags (attention_avx2.cpp, attention_avx512.cpp, attention_amx.cpp).
#pragma once
#include "tessel/ops/attention/call.hpp"

namespace tessel::cpu {
void attention_avx2(const attention_call& call, int threads);
void attention_avx512(const attention_call& call, int threads);
void attention_amx(const attention_call& call, int threads);  // bf16 in on AMX tiles; other inputs as attention_avx512
}  // namespace tessel::cpu
