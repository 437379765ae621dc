// src/backend_entry.hpp — what each compiled backend exports to the public API.
//
// The public functions validate and then call exactly one of these. A backend
// that was not built provides no definition; the API refuses its device first.
#pragma once
#include "tessel/ops/attention/call.hpp"
#include "tessel/ops/gemm/call.hpp"
#include "tessel/tensor.hpp"

namespace tessel::detail {

// amx: AVX-512 plus the AMX tile registers (bf16 GEMM on tdpbf16ps; everything else as avx512).
enum class cpu_isa_level : int { scalar = 0, avx2 = 1, avx512 = 2, amx = 3 };
cpu_isa_level cpu_best_isa();      // what this CPU supports (run-time detection)
cpu_isa_level cpu_selected_isa();  // what tessel uses (TESSEL_CPU_ISA / set_cpu_isa, capped by the CPU)
const char* cpu_isa_name(cpu_isa_level);

void cpu_gemm(const gemm_call& call, int threads);
void cpu_attention(const attention_call& call, int threads);

// The GPU backends also say whether a pointer is usable by their device.
void cuda_gemm(const gemm_call& call, void* stream);
void cuda_attention(const attention_call& call, void* stream);
bool cuda_pointer_on_device(const void* p, int device);
void hip_gemm(const gemm_call& call, void* stream);
void hip_attention(const attention_call& call, void* stream);
bool hip_pointer_on_device(const void* p, int device);

}  // namespace tessel::detail
