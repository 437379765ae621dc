// bench/amx_rounding_probe.cpp — how one tdpbf16ps rounds, measured: the hardware against candidate orders.
//
// Runs tdpbf16ps (backends/cpu/arch/amx.hpp, amx_hw) on random tiles and counts,
// per candidate definition of the instruction, how many of the 16 × 16 results
// it reproduces bit for bit. Candidates (for each C element c, pairs k = 0..15
// of products p0 = a(2k)·b(2k), p1 = a(2k+1)·b(2k+1), each exact in fp32):
//   seq      c += p0; c += p1, k in order, each sum rounded (the intrinsics guide's pseudo-code; amx_dp_reference)
//   pair     c += round(p0 + p1), k in order (each pair's dot product rounded once, then accumulated)
//   pair3    c = round(c + p0 + p1), k in order (the pair and the accumulator in one rounding)
//   evenodd  e = Σ p0, o = Σ p1 (each in order from 0, rounded each step); c = round(c + round(e + o))
//   fused    c = round(c + Σ all 32 products), one rounding
// Measured on the Intel Xeon host of the nvidia-h200 machine, 2026-12-02 (200 random tiles, values and C
// in [-1, 1] · 2^[-8, 8]; bench/results/cpu_xeon_amx_tuning_and_rounding_2026-12-02.txt): evenodd 51,200 of 51,200,
// seq 17,669, pair 16,847, pair3 17,493, fused 21,004. amx_dp_reference (arch/amx.hpp) is evenodd.
// Needs an AMX machine (Linux 5.16+). Build: g++ -O2 -I<tree>/include-tree bench/amx_rounding_probe.cpp.
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>

#include "tessel/cpu/arch/amx.hpp"

using tessel::bf16;
using tessel::to_bf16;
using tessel::to_float;

int main() {
  if (syscall(SYS_arch_prctl, 0x1023, 18) != 0) {
    std::printf("no AMX tile state from the OS\n");
    return 1;
  }
  std::mt19937_64 rng(7);
  constexpr int cands = 8;
  const char* names[cands] = {"seq", "pair", "pair3", "evenodd", "fused", "eo_wide", "eo_wide1", "eo_c_e_o"};
  // Three kinds of data: mixed scales (values and C in [-1, 1] · 2^[-8, 8]); the GEMM tests' values (uniform
  // in [-1, 1], as bf16) with C = 0; the same with C uniform in [-1, 1].
  const char* kinds[3] = {"mixed scales", "uniform, C = 0", "uniform, C uniform"};
  for (int kind = 0; kind < 3; ++kind) {
    long match[cands] = {}, total = 0;
    for (int trial = 0; trial < 200; ++trial) {
      alignas(64) bf16 a[512], b[512];
      alignas(64) float c[256], hw[256];
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      std::uniform_int_distribution<int> e(-8, 8);
      const auto value = [&] { return kind == 0 ? std::ldexp(u(rng), e(rng)) : u(rng); };
      for (bf16& x : a) x = to_bf16(value());
      for (bf16& x : b) x = to_bf16(value());
      for (float& x : c) x = kind == 1 ? 0.0f : value();
      tessel::cpu::amx_hw::configure();
      tessel::cpu::amx_hw::load<0>(c, 64);
      tessel::cpu::amx_hw::load<1>(a, 64);
      tessel::cpu::amx_hw::load<2>(b, 64);
      tessel::cpu::amx_hw::dp<0, 1, 2>();
      tessel::cpu::amx_hw::store<0>(hw, 64);
      tessel::cpu::amx_hw::release();
      for (int m = 0; m < 16; ++m)
        for (int n = 0; n < 16; ++n) {
          float p[16][2];
          for (int k = 0; k < 16; ++k)
            for (int q = 0; q < 2; ++q) p[k][q] = to_float(a[m * 32 + 2 * k + q]) * to_float(b[k * 32 + 2 * n + q]);
          const float c0 = c[m * 16 + n];
          float cand[cands];
          volatile float s = c0;  // volatile: each sum rounded to float, no contraction
          for (int k = 0; k < 16; ++k) {
            s = s + p[k][0];
            s = s + p[k][1];
          }
          cand[0] = s;
          s = c0;
          for (int k = 0; k < 16; ++k) s = s + float(double(p[k][0]) + double(p[k][1]));
          cand[1] = s;
          s = c0;
          for (int k = 0; k < 16; ++k) s = float(double(s) + double(p[k][0]) + double(p[k][1]));
          cand[2] = s;
          volatile float ev = 0.0f, od = 0.0f;
          for (int k = 0; k < 16; ++k) {
            ev = ev + p[k][0];
            od = od + p[k][1];
          }
          cand[3] = float(double(c0) + double(float(double(ev) + double(od))));
          long double all = c0, we = 0, wo = 0;
          for (int k = 0; k < 16; ++k) {
            all += (long double)p[k][0] + (long double)p[k][1];
            we += p[k][0];
            wo += p[k][1];
          }
          cand[4] = float(all);
          cand[5] = float((long double)c0 + (long double)float(we + wo));  // e, o exact; e + o rounded; then c
          cand[6] = float((long double)c0 + we + wo);                       // e, o exact; one rounding
          volatile float t = c0;
          t = t + ev;
          t = t + od;
          cand[7] = t;  // (c + e) + o
          for (int i = 0; i < cands; ++i) match[i] += std::memcmp(&cand[i], &hw[m * 16 + n], 4) == 0;
          ++total;
        }
    }
    std::printf("%s:\n", kinds[kind]);
    for (int i = 0; i < cands; ++i) std::printf("  %-9s %ld of %ld bit-identical\n", names[i], match[i], total);
  }
  return 0;
}
