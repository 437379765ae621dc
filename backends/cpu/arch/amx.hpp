// tessel/cpu/arch/amx.hpp — the AMX tile instructions (Intel AMX-TILE + AMX-BF16), raw, and their emulation.
//
// Two providers of one interface, chosen by the AMX policy's template argument
// (policy_amx.hpp):
//   amx_hw        the instructions themselves (inline assembly: ldtilecfg,
//                 tileloadd, tilestored, tilezero, tdpbf16ps, tilerelease).
//                 Runs only where amx_usable() (isa.cpp) said yes: the CPU has
//                 AMX-TILE and AMX-BF16 and the OS granted this process the
//                 tile state (Linux: arch_prctl(ARCH_REQ_XCOMP_PERM)).
//   amx_emulated  the same eight tile registers as a per-thread array and the
//                 same instructions in scalar C++ (tdpbf16ps: amx_dp_reference
//                 below, which the AMX atom's mma also is), so the policy's
//                 packing, tile walk and edges are tested on any x86-64 (CI
//                 has no AMX). A tile instruction with no configuration loaded
//                 on its thread throws, where the hardware faults.
// Interface (T, C, A, B: tile register numbers 0..7, compile-time):
//   configure()                 every tile 16 rows × 64 bytes (palette 1); contents undefined
//   release()                   tiles back to their initial state (unconfigured)
//   load<T>(p, stride)          16 rows of 64 bytes at p, p + stride, ...
//   store<T>(p, stride)         the reverse
//   zero<T>()
//   dp<C, A, B>()               C(16 × 16 fp32) += A(16 × 32 bf16) · B(16 × 16 bf16 pairs, VNNI)
// The assembly names tile registers by number (%c of an "i" operand), so no
// -mamx-* flags are needed to build it; the "memory" clobbers keep the compiler
// from moving loads and stores of the same bytes across the tile instructions.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "tessel/core/element.hpp"

namespace tessel::cpu {

// One tdpbf16ps in scalar C++, in the order the hardware rounds (measured on
// an Intel Xeon with AMX, 2026-12-02: 51,200 of 51,200 results bit-identical
// on mixed-scale random tiles, bench/amx_rounding_probe.cpp; the intrinsics
// guide's pseudo-code, c += a(2k)·b(2k) then += a(2k+1)·b(2k+1) pair after
// pair, matched 35%). For each C element, with the products exact in fp32:
//   e = Σ_k a(m, 2k) · b(2k, n),  o = Σ_k a(m, 2k+1) · b(2k+1, n)   k = 0 .. 15, each from 0, each sum rounded
//   c(m, n) = c(m, n) + (e + o)                                     two more roundings
// all to nearest even; bf16 denormal inputs read as zero and denormal sums
// flushed to zero, as the SDM states (not probed: the probe's values stay normal).
// Layouts (row-major, 64-byte rows): c[m·16 + n] fp32 16 × 16; a[m·32 + kk]
// bf16 16 × 32; b[k·32 + 2n + p] bf16 pairs: element (2k + p, n) of the 32 × 16 B.
inline void amx_dp_reference(float (&c)[256], const bf16 (&a)[512], const bf16 (&b)[512]) {
  const auto daz = [](bf16 x) {
    return (x.bits & 0x7f80u) == 0 ? 0.0f * to_float(x) : to_float(x);  // keeps the sign of a zero
  };
  const auto ftz = [](float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0) u &= 0x80000000u;
    std::memcpy(&x, &u, 4);
    return x;
  };
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) {
      float e = 0.0f, o = 0.0f;
      for (int k = 0; k < 16; ++k) {
        e = ftz(e + daz(a[m * 32 + 2 * k]) * daz(b[k * 32 + 2 * n]));
        o = ftz(o + daz(a[m * 32 + 2 * k + 1]) * daz(b[k * 32 + 2 * n + 1]));
      }
      c[m * 16 + n] = ftz(c[m * 16 + n] + ftz(e + o));
    }
}

struct amx_hw {
  static void configure() {
    alignas(64) unsigned char cfg[64] = {};
    cfg[0] = 1;  // palette 1
    for (int t = 0; t < 8; ++t) {
      const std::uint16_t colsb = 64;
      std::memcpy(cfg + 16 + 2 * t, &colsb, 2);  // bytes per row
      cfg[48 + t] = 16;                          // rows
    }
    asm volatile("ldtilecfg %0" ::"m"(cfg) : "memory");
  }
  static void release() { asm volatile("tilerelease" ::: "memory"); }
  template <int T> static void load(const void* p, std::int64_t stride) {
    asm volatile("tileloadd (%0,%1,1), %%tmm%c2" ::"r"(p), "r"(stride), "i"(T) : "memory");
  }
  template <int T> static void store(void* p, std::int64_t stride) {
    asm volatile("tilestored %%tmm%c2, (%0,%1,1)" ::"r"(p), "r"(stride), "i"(T) : "memory");
  }
  template <int T> static void zero() { asm volatile("tilezero %%tmm%c0" ::"i"(T)); }
  template <int C, int A, int B> static void dp() {
    asm volatile("tdpbf16ps %%tmm%c2, %%tmm%c1, %%tmm%c0" ::"i"(C), "i"(A), "i"(B));
  }
};

struct amx_emulated {
  // As ldtilecfg: the tiles usable, their contents not to be relied on (poisoned
  // here: 0xff bytes, NaN as fp32); counted (configurations(), all threads).
  static void configure() {
    std::memset(regs(), 0xff, sizeof(file));
    configured() = true;
    configurations().fetch_add(1, std::memory_order_relaxed);
  }
  static void release() { configured() = false; }
  template <int T> static void load(const void* p, std::int64_t stride) {
    require_configuration();
    for (int r = 0; r < 16; ++r) std::memcpy(regs()[T] + 64 * r, static_cast<const char*>(p) + r * stride, 64);
  }
  template <int T> static void store(void* p, std::int64_t stride) {
    require_configuration();
    for (int r = 0; r < 16; ++r) std::memcpy(static_cast<char*>(p) + r * stride, regs()[T] + 64 * r, 64);
  }
  template <int T> static void zero() {
    require_configuration();
    std::memset(regs()[T], 0, 1024);
  }
  template <int C, int A, int B> static void dp() {
    static_assert(C != A && C != B, "tdpbf16ps: the destination must differ from the sources");
    require_configuration();
    float c[256];
    bf16 a[512], b[512];
    std::memcpy(c, regs()[C], sizeof c);
    std::memcpy(a, regs()[A], sizeof a);
    std::memcpy(b, regs()[B], sizeof b);
    amx_dp_reference(c, a, b);
    std::memcpy(regs()[C], c, sizeof c);
  }
  // How many configure() calls every thread made so far (the tests count a launch's).
  static std::atomic<long>& configurations() {
    static std::atomic<long> n{0};
    return n;
  }

 private:
  using file = unsigned char[8][1024];
  static file& regs() {
    alignas(64) static thread_local file tiles;
    return tiles;
  }
  static bool& configured() {
    static thread_local bool c = false;
    return c;
  }
  // The hardware faults (#UD) on a tile instruction with no configuration loaded.
  static void require_configuration() {
    if (!configured()) throw std::logic_error("amx_emulated: a tile instruction with no tile configuration loaded");
  }
};

}  // namespace tessel::cpu
