// tools/check.hpp — the sub-commands of tessel-check.
//
// Contract: each takes the parsed words after its name, prints its report on
// stdout, and returns the exit status: 0 within tolerance, 1 past it.
// Problems with input files throw npy_error (or input_error for shapes and
// options that conflict with the files), with output paths output_error
// (checked before any input is read; see output_file.hpp); bad command lines
// throw usage_error; main() turns those into a one-line message and exit 1 /
// exit 2. Notes about the inputs (non-finite values, an unread C) are printed
// with the report, after every input has been read and checked.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.hpp"
#include "tessel/tensor.hpp"

namespace tessel::tools {

// A problem with the inputs that is not a malformed file (mismatched shapes, a
// missing device): reported as one line, exit 1.
class input_error : public std::runtime_error {
 public:
  explicit input_error(const std::string& what) : std::runtime_error(what) {}
};

extern const std::vector<option_spec> check_gemm_options;
extern const std::vector<option_spec> check_attention_options;

int check_gemm(const parsed_args& args);
int check_attention(const parsed_args& args);

// The default tolerances, documented in the usage text.
inline constexpr double default_gemm_tol = 1e-3;
inline constexpr double default_compare_tol = 1e-2;
// attention: out's relative error per input type, as in tests/attention_cases.cpp (P
// is rounded to the input type before P·V and out is rounded once to it); LSE max
// abs error 1e-3. Shared by tessel-check attention and tessel-bench attention.
inline double default_attention_tol(dtype t) {
  return t == dtype::bf16 ? 1e-2 : t == dtype::f16 ? 2e-3 : 1e-5;
}
inline constexpr double default_lse_tol = 1e-3;

}  // namespace tessel::tools
