// tools/check.hpp — the sub-commands of tessel-check.
//
// Contract: each takes the parsed words after its name, prints its report on
// stdout, and returns the exit status: 0 within tolerance, 1 past it.
// Problems with input files throw npy_error (or input_error for shapes and
// options that conflict with the files); bad command lines throw usage_error;
// main() turns those into a one-line message and exit 1 / exit 2.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.hpp"

namespace tessel::tools {

// A problem with the inputs that is not a malformed file (mismatched shapes, a
// missing device): reported as one line, exit 1.
class input_error : public std::runtime_error {
 public:
  explicit input_error(const std::string& what) : std::runtime_error(what) {}
};

extern const std::vector<option_spec> check_gemm_options;

int check_gemm(const parsed_args& args);

// The default tolerances, documented in the usage text.
inline constexpr double default_gemm_tol = 1e-3;
inline constexpr double default_compare_tol = 1e-2;

}  // namespace tessel::tools
