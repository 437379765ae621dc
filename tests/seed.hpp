// tests/seed.hpp — one seed per run (printed), a derived seed per case.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "host_tensor.hpp"

namespace tessel::test {
// The run seed (TESSEL_SEED to replay) mixed with the case's name.
inline std::uint64_t case_seed(const std::string& name) {
  return support::run_seed() ^ (std::hash<std::string>{}(name) * 0x9e3779b97f4a7c15ull);
}
}  // namespace tessel::test
