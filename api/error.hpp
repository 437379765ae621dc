// tessel/error.hpp — the one exception type tessel throws.
//
// Contract: every refusal of bad input throws tessel::Error before any output is
// written; what() names the argument and what was expected, e.g.
//   "tessel::gemm: argument 'b': expected shape [K=64, N] (K from 'a'), got [63, 8]".
#pragma once
#include <stdexcept>
#include <string>

namespace tessel {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace tessel
