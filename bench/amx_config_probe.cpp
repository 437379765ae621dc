// bench/amx_config_probe.cpp — what the AMX policy's per-mma tile configuration costs: ldtilecfg + tilerelease, timed.
//
// The AMX policy (backends/cpu/policy_amx.hpp) loads the tile configuration at
// the start of every mma and releases the tiles at its end (amx_hw::configure,
// release); the attention makes two such calls per 64 × 64 step. This probe
// times, per iteration, on one core, with the tile data in L1:
//   cfg      configure + release alone
//   block    one 32 × 32 micro-block of the policy's mma with K = 64 (4 C loads,
//            2 slices of 2 A + 2 B loads and 4 tdpbf16ps, 4 C stores), the
//            configuration loaded once outside the loop
//   block+cfg the same with configure + release around every block (the
//            policy's per-call cost where a call is one micro-block)
// and prints ns per iteration (median of 7 runs of N iterations) and the
// difference block+cfg − block. Needs an AMX machine (Linux 5.16+).
//   g++ -O2 -std=c++17 -I BUILD/include bench/amx_config_probe.cpp -o amx_config_probe
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tessel/cpu/arch/amx.hpp"

namespace {
using tiles = tessel::cpu::amx_hw;
alignas(64) unsigned char a_buf[2][1024], b_buf[2][1024], c_buf[4][1024];

void block() {
  constexpr std::int64_t row = 64;
  tiles::load<0>(c_buf[0], row);
  tiles::load<1>(c_buf[1], row);
  tiles::load<2>(c_buf[2], row);
  tiles::load<3>(c_buf[3], row);
  for (int s = 0; s < 2; ++s) {
    tiles::load<4>(a_buf[s], row);
    tiles::load<6>(b_buf[s], row);
    tiles::dp<0, 4, 6>();
    tiles::load<7>(b_buf[s ^ 1], row);
    tiles::dp<1, 4, 7>();
    tiles::load<5>(a_buf[s ^ 1], row);
    tiles::dp<2, 5, 6>();
    tiles::dp<3, 5, 7>();
  }
  tiles::store<0>(c_buf[0], row);
  tiles::store<1>(c_buf[1], row);
  tiles::store<2>(c_buf[2], row);
  tiles::store<3>(c_buf[3], row);
}

template <class F> double ns_per_iteration(F f, int n) {
  std::vector<double> runs;
  for (int r = 0; r < 7; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) f();
    runs.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n);
  }
  std::sort(runs.begin(), runs.end());
  return runs[3];
}
}  // namespace

int main() {
  if (syscall(SYS_arch_prctl, 0x1023, 18) != 0) {
    std::printf("no AMX tile state from the OS\n");
    return 1;
  }
  // Small bf16 values (0x3c00 = 2^-7): C stays finite however often the block adds to it.
  for (auto* buf : {&a_buf[0][0], &a_buf[1][0], &b_buf[0][0], &b_buf[1][0]})
    for (int i = 0; i < 1024; i += 2) buf[i] = 0x00, buf[i + 1] = 0x3c;
  std::memset(c_buf, 0, sizeof c_buf);
  constexpr int n = 200000;
  const double cfg = ns_per_iteration([] { tiles::configure(); tiles::release(); }, n);
  tiles::configure();
  const double plain = ns_per_iteration(block, n);
  tiles::release();
  const double with_cfg = ns_per_iteration([] { tiles::configure(); block(); tiles::release(); }, n);
  std::printf("cfg (ldtilecfg + tilerelease)   %8.2f ns\n", cfg);
  std::printf("block (configured once)         %8.2f ns\n", plain);
  std::printf("block + cfg around each         %8.2f ns   (difference %.2f ns)\n", with_cfg, with_cfg - plain);
  std::printf("C[0] = %g (finite: the blocks ran)\n", double(reinterpret_cast<const float*>(c_buf[0])[0]));
  return 0;
}
