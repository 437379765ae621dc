// tessel/backend.hpp — what this build contains and which CPU path it runs.
#pragma once
#include <string>

namespace tessel {

// The backends compiled into this library, e.g. "cpu" or "cpu cuda".
const char* built_backends();

// The CPU instruction set the CPU backend uses: "amx", "avx512", "avx2" or
// "scalar" ("amx": AVX-512 with bf16-input GEMMs on the AMX tile registers;
// where the OS grants the tile state, Linux 5.16+). It starts as the best the
// CPU supports, capped by the environment variable TESSEL_CPU_ISA if set;
// set_cpu_isa() changes it (throws tessel::Error for a name that is not one of
// those four, or an ISA this CPU lacks). On a CPU with AMX, tessel asks Linux
// for the tile state when it first looks at the CPU (any tessel call, whatever
// TESSEL_CPU_ISA says); from then on the process's signal frames carry 8 KiB
// more of it, which an alternate signal stack (sigaltstack) must have room for.
const char* cpu_isa();
void set_cpu_isa(const std::string& name);

}  // namespace tessel
