// tests/hip/emulation_seed.hpp — the run seed of the emulation tests (printed;
// TESSEL_SEED replays it). These tests link no tessel library, so they keep
// their own copy of support::run_seed()'s rule.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>

namespace tessel::test {

inline std::uint64_t emulation_seed() {
  static const std::uint64_t s = [] {
    const char* env = std::getenv("TESSEL_SEED");
    const std::uint64_t v = env ? std::strtoull(env, nullptr, 0) : std::random_device{}();
    std::cout << "[ seed     ] TESSEL_SEED=" << v << "\n";
    return v;
  }();
  return s;
}

}  // namespace tessel::test
