// tessel/cpu/attention_paths.hpp — the SIMD attention paths, each compiled in its own
// translation unit with that ISA's compiler flags (attention_avx2.cpp, attention_avx512.cpp).
#pragma once
#include "tessel/ops/attention/call.hpp"

namespace tessel::cpu {
void attention_avx2(const attention_call& call, int threads);
void attention_avx512(const attention_call& call, int threads);
}  // namespace tessel::cpu
