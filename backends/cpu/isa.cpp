// backends/cpu/isa.cpp — which SIMD instruction set the CPU backend runs.
//
// Detection uses xsimd's run-time query (CPUID + XCR0), so a binary built on
// an AVX-512 machine still runs, on its AVX2 or scalar path, on any x86-64.
#include <atomic>
#include <cstdlib>
#include <string>

#include <xsimd/xsimd.hpp>

#include "backend_entry.hpp"
#include "check.hpp"
#include "tessel/backend.hpp"

namespace tessel::detail {
namespace {

cpu_isa_level parse(const std::string& name, bool* ok) {
  *ok = true;
  if (name == "scalar") return cpu_isa_level::scalar;
  if (name == "avx2") return cpu_isa_level::avx2;
  if (name == "avx512") return cpu_isa_level::avx512;
  *ok = false;
  return cpu_isa_level::scalar;
}

cpu_isa_level initial() {
  const cpu_isa_level best = cpu_best_isa();
  if (const char* env = std::getenv("TESSEL_CPU_ISA")) {
    bool ok;
    const cpu_isa_level want = parse(env, &ok);
    if (ok && int(want) < int(best)) return want;
  }
  return best;
}

std::atomic<int>& selected() {
  static std::atomic<int> level{int(initial())};
  return level;
}

}  // namespace

cpu_isa_level cpu_best_isa() {
  const auto arch = xsimd::available_architectures();
#if defined(__x86_64__) || defined(_M_X64)
  if (arch.avx512f && arch.avx512bw) return cpu_isa_level::avx512;
  if (arch.avx2 && arch.fma3_avx2) return cpu_isa_level::avx2;
#endif
  return cpu_isa_level::scalar;
}

cpu_isa_level cpu_selected_isa() { return cpu_isa_level(selected().load()); }

const char* cpu_isa_name(cpu_isa_level l) {
  return l == cpu_isa_level::avx512 ? "avx512" : l == cpu_isa_level::avx2 ? "avx2" : "scalar";
}

}  // namespace tessel::detail

namespace tessel {

const char* cpu_isa() { return detail::cpu_isa_name(detail::cpu_selected_isa()); }

void set_cpu_isa(const std::string& name) {
  bool ok;
  const auto want = detail::parse(name, &ok);
  if (!ok) detail::fail("set_cpu_isa", "argument 'name': expected \"scalar\", \"avx2\" or \"avx512\", got \"", name, "\"");
  if (int(want) > int(detail::cpu_best_isa()))
    detail::fail("set_cpu_isa", "argument 'name': this CPU does not support ", name, " (best: ",
                 detail::cpu_isa_name(detail::cpu_best_isa()), ")");
  detail::selected().store(int(want));
}

const char* built_backends() {
  return "cpu"
#if TESSEL_HAS_CUDA
         " cuda"
#endif
#if TESSEL_HAS_HIP
         " hip"
#endif
      ;
}

}  // namespace tessel
