// bench/peers/peer_library_openblas.cpp — CPU builds: OpenBLAS at its strongest
// on this CPU, and named (contract in peer_library.hpp).
//
// Why: a DYNAMIC_ARCH OpenBLAS picks its kernels from the CPUID it knows, once,
// when it loads, or from OPENBLAS_CORETYPE. A release older than the CPU can
// fall back to its AVX2 (Haswell) kernels on an AVX-512 CPU, and an inherited
// OPENBLAS_CORETYPE=Haswell does the same: sgemm then runs at about half its
// AVX-512 speed (Debian's 0.3.21 on a Zen 5 VM, 1 thread: 103-117 against
// 209-231 GFLOP/s), and a tessel/peer ratio against it flatters tessel.
// SkylakeX is the core name set: every DYNAMIC_ARCH OpenBLAS with AVX-512
// kernels knows it, and its sgemm kernel is the one Cooperlake and
// SapphireRapids use too (their KERNEL files include SkylakeX's and add bf16
// kernels, which this peer does not call: it widens to fp32 for sgemm).
#include <cblas.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <strings.h>

#include "peer_library.hpp"

namespace tessel::bench {
namespace {

constexpr const char* coretype_var = "OPENBLAS_CORETYPE";
constexpr const char* forced_core = "SkylakeX";
// Set only across the re-exec: the core OpenBLAS chose on its own, for the facts.
constexpr const char* own_choice_var = "TESSEL_BENCH_OPENBLAS_OWN_CORE";

// How OPENBLAS_CORETYPE came to be what it is in this process.
std::string coretype_source;

bool cpu_has_avx512f() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");  // also checks that the OS saves the AVX-512 state
#else
  return false;
#endif
}

bool avx512_core(const char* name) {
  for (const char* c : {"SkylakeX", "Cooperlake", "SapphireRapids"})
    if (name && strcasecmp(name, c) == 0) return true;
  return false;
}

std::string text(const char* s) { return s ? std::string(s) : std::string("(none)"); }

}  // namespace

void choose_peer_library(char** argv) {
  const char* given = std::getenv(coretype_var);
  if (const char* own = std::getenv(own_choice_var)) {
    if (given)
      coretype_source = std::string(given) + ", set by tessel-bench (the CPU has AVX-512F; OpenBLAS's own choice was " +
                        own + ")";
    unsetenv(own_choice_var);
    if (given) return;
  }
  if (given) {
    coretype_source = std::string(given) + ", from the environment";
    if (cpu_has_avx512f() && !avx512_core(openblas_get_corename()))
      coretype_source +=
          " (keeps OpenBLAS off its AVX-512 kernels on this AVX-512 CPU: unset it for the strongest peer)";
    return;
  }
  const char* own = openblas_get_corename();
  coretype_source = "unset: OpenBLAS's own choice";
  if (!cpu_has_avx512f() || avx512_core(own)) return;
  setenv(coretype_var, forced_core, 1);
  setenv(own_choice_var, own ? own : "(none)", 1);
  execv("/proc/self/exe", argv);
  const int err = errno;  // only reached when the re-exec failed
  unsetenv(coretype_var);
  unsetenv(own_choice_var);
  coretype_source += std::string(" (re-executing with ") + coretype_var + "=" + forced_core +
                     " failed: " + std::strerror(err) + ")";
}

std::vector<library_fact> peer_library_facts() {
  return {{"peer_openblas_config", text(openblas_get_config())},
          {"peer_openblas_corename", text(openblas_get_corename())},
          {"peer_openblas_coretype", coretype_source.empty() ? std::string("not chosen") : coretype_source}};
}

}  // namespace tessel::bench
