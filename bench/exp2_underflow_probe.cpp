// bench/exp2_underflow_probe.cpp — what the CPU exp2 costs where its result underflows (the softmax of masked keys).
//
// The attention's P = exp2(c·s − b) runs on every score of a step, masked ones
// included: a hidden key's score is −inf, which arch/exp2.hpp clamps to −151 and
// scales to +0 (vscalefps on AVX-512; two multiplies on AVX2). A result below
// 2^-126 underflows; on Intel cores an underflowing SIMD instruction may take a
// microcode assist when MXCSR's flush-to-zero bit is clear (the default). The
// causal diagonal tiles are where many lanes underflow. This probe times, per
// 16 floats (one AVX-512 vector, two AVX2 ones), on one core with the data in L1:
//   normal     x in [−20, 0]          (results normal)
//   masked     x = −inf everywhere    (every lane → +0 through the clamp)
//   half       every other vector −inf (a diagonal tile's mix)
//   subnormal  x in [−148, −127]       (subnormal results)
// for exp2_batch_for_bf16 and exp2_batch (the AMX and the SIMD attention's P)
// and a "weight" form of each (x clamped at −125, so that no instruction
// underflows, then +0 where x < −125: a softmax weight under 2^-125 of the row's
// largest is lost in fp32's rounding anyway), on AVX-512 and on AVX2, first
// with MXCSR as the process has it, then with FTZ | DAZ set. Prints ns per 16
// floats, the median of 9 runs. Development VM (AMD EPYC Zen 4), 2026-12-07,
// three runs, degree 4 / 6: AVX2 masked 12.0-12.4 / 16.1-17.3 against normal
// 3.8 / 4.8; this weight form 4.6 / 5.5 on both (a form inside exp2, with one
// clamp and a masked vscalefps or an andnot, measured 4.1-4.3 on AVX2 and
// +5 % on AVX-512: bench/notes/cpu_attention.md, session 57); AVX-512 the same
// on every input (vscalefps); with FTZ | DAZ all alike.
// Needs an x86 CPU with AVX-512 (F, BW, DQ, VL).
//   g++ -O2 -std=c++17 -march=sapphirerapids -I BUILD/include bench/exp2_underflow_probe.cpp -o exp2_underflow_probe
#include <xmmintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tessel/cpu/arch/avx2.hpp"
#include "tessel/cpu/arch/avx512.hpp"
#include "tessel/cpu/arch/exp2.hpp"

namespace {
constexpr int n = 4096;  // 16 KiB in, 16 KiB out: L1
alignas(64) float in[n], out[n];
volatile float sink;

template <class Arch, bool ForBf16, bool Weight> double ns_per_16() {
  using vec = xsimd::batch<float, Arch>;
  constexpr int W = int(vec::size);
  std::vector<double> runs;
  for (int r = 0; r < 9; ++r) {
    const int iters = 200;
    const auto t0 = std::chrono::steady_clock::now();
    for (int it = 0; it < iters; ++it)
      for (int i = 0; i < n; i += W) {
        const vec x = vec::load_aligned(in + i);
        vec y;
        if constexpr (Weight) {  // x clamped at −125 (a normal result), then +0 where x < −125
          const vec xc = tessel::cpu::isa_ops<Arch>::max_or_x(vec(-125.0f), x);
          const vec r = ForBf16 ? tessel::cpu::exp2_batch_for_bf16<Arch>(xc) : tessel::cpu::exp2_batch<Arch>(xc);
          y = xsimd::select(x < vec(-125.0f), vec(0.0f), r);
        } else {
          y = ForBf16 ? tessel::cpu::exp2_batch_for_bf16<Arch>(x) : tessel::cpu::exp2_batch<Arch>(x);
        }
        y.store_aligned(out + i);
      }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    runs.push_back(s * 1e9 / (double(iters) * n / 16));
    sink = out[r];
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

void fill(const char* kind) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> normal(-20.0f, 0.0f), sub(-148.0f, -127.0f);
  for (int i = 0; i < n; ++i) {
    const std::string k = kind;
    if (k == "normal") in[i] = normal(rng);
    else if (k == "masked") in[i] = -INFINITY;
    else if (k == "half") in[i] = (i / 16) % 2 ? -INFINITY : normal(rng);
    else in[i] = sub(rng);
  }
}

template <class Arch> void row(const char* isa, const char* mode, const char* kind) {
  std::printf("%-10s %-7s %-10s %10.2f %10.2f %10.2f %10.2f\n", mode, isa, kind, ns_per_16<Arch, true, false>(),
              ns_per_16<Arch, false, false>(), ns_per_16<Arch, true, true>(), ns_per_16<Arch, false, true>());
}
void table(const char* mode) {
  std::printf("%-10s %-7s %-10s %10s %10s %10s %10s\n", mode, "isa", "input", "bf16", "f32", "weight16", "weight32");
  for (const char* kind : {"normal", "masked", "half", "subnormal"}) {
    fill(kind);
    row<xsimd::avx512bw>("avx512", mode, kind);
    row<xsimd::fma3<xsimd::avx2>>("avx2", mode, kind);
  }
}
}  // namespace

int main() {
  std::printf("exp2 probe: ns per 16 floats (median of 9 runs of 200 passes over %d floats); MXCSR 0x%04x\n", n,
              _mm_getcsr());
  table("default");
  _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ (bit 15) | DAZ (bit 6)
  table("ftz+daz");
  return 0;
}
