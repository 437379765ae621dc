// backends/cpu/isa.cpp — which SIMD instruction set the CPU backend runs.
//
// Detection uses xsimd's run-time query (CPUID + XCR0), so a binary built on
// an AVX-512 machine still runs, on its AVX2 or scalar path, on any x86-64.
// AMX (the level above AVX-512) also needs the OS's leave: on Linux the tile
// data state is granted per process by arch_prctl(ARCH_REQ_XCOMP_PERM), asked
// for once here; without it (an older kernel, or another OS) tessel stays on
// AVX-512.
#include <atomic>
#include <cstdlib>
#include <string>

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

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
  if (name == "amx") return cpu_isa_level::amx;
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

// AMX-TILE and AMX-BF16 (CPUID leaf 7: EDX bits 24 and 22), the tile state
// enabled in XCR0 (bits 17-18), and this process allowed to use it.
bool amx_usable() {
#if defined(__x86_64__) && defined(__linux__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return false;  // OSXSAVE: xgetbv allowed
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) || !(d & (1u << 22))) return false;
  unsigned lo = 0, hi = 0;
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & (3u << 17)) != (3u << 17)) return false;
  constexpr long arch_req_xcomp_perm = 0x1023, xfeature_xtiledata = 18;
  return syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0;
#else
  return false;
#endif
}

}  // namespace

cpu_isa_level cpu_best_isa() {
  const auto arch = xsimd::available_architectures();
#if defined(__x86_64__) || defined(_M_X64)
  static const bool amx = amx_usable();
  if (arch.avx512f && arch.avx512bw && amx) return cpu_isa_level::amx;
  if (arch.avx512f && arch.avx512bw) return cpu_isa_level::avx512;
  if (arch.avx2 && arch.fma3_avx2) return cpu_isa_level::avx2;
#endif
  return cpu_isa_level::scalar;
}

cpu_isa_level cpu_selected_isa() { return cpu_isa_level(selected().load()); }

const char* cpu_isa_name(cpu_isa_level l) {
  return l == cpu_isa_level::amx      ? "amx"
         : l == cpu_isa_level::avx512 ? "avx512"
         : l == cpu_isa_level::avx2   ? "avx2"
                                      : "scalar";
}

}  // namespace tessel::detail

namespace tessel {

const char* cpu_isa() { return detail::cpu_isa_name(detail::cpu_selected_isa()); }

void set_cpu_isa(const std::string& name) {
  bool ok;
  const auto want = detail::parse(name, &ok);
  if (!ok) detail::fail("set_cpu_isa", "argument 'name': expected \"scalar\", \"avx2\", \"avx512\" or \"amx\", got \"", name, "\"");
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
