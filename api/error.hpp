// tessel/error.hpp — the one exception type tessel throws.
//
// Contract: every refusal of bad input throws tessel::Error before any output is
// written; what() names the argument and what was expected, e.g.
//   "tessel::gemm: argument 'b': expected shape [K=64, N] (K from 'a'), got [63, 8]".
// kind() says which sort of error it is (the C ABI returns it as a status code).
#pragma once
#include <stdexcept>
#include <string>

namespace tessel {

enum class error_kind : int {
  invalid_argument = 1,  // the arguments break the op's contract (shape, stride, value, null data, overlap)
  unsupported = 2,       // well-formed, but not provided: a dtype pair, a head_dim, a backend not built, a size
  device = 3,            // the device's runtime or driver failed (launch, memory query, a missing feature)
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, error_kind kind = error_kind::invalid_argument)
      : std::runtime_error(what), kind_(kind) {}
  error_kind kind() const noexcept { return kind_; }

 private:
  error_kind kind_;
};

}  // namespace tessel
