// tools/check_report.hpp — how tessel-check compares a result with its
// references, NaN and inf included (--allow-nonfinite), and prints the errors.
//
// Contract: support::compare_positions (host_tensor.hpp) classes every element
// (finite, NaN, +inf, -inf), counts the positions whose classes differ, and
// takes the errors over the positions finite in both.
//
// compare_results() gives the three errors tessel-check reports for an output
// (device and CPU backend vs the float64 reference, device vs CPU). Without
// allow_nonfinite they are support::relative_error, inf as soon as either side
// holds a NaN or an inf (always past tolerance); with it they are taken over
// the positions finite in both, and the NaN/inf positions of the device's and
// the CPU's results must be the reference's: within() is false otherwise.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "host_tensor.hpp"

namespace tessel::tools {

using support::compare_positions;
using support::position_comparison;

// "2 mismatched positions (non-finite in both: 12 NaN, 3 +inf, 0 -inf)"
std::string describe_positions(const position_comparison& c);

struct result_errors {
  bool allow_nonfinite = false;
  double dev = 0, host = 0, dev_host = 0;
  position_comparison dev_pos, host_pos;  // vs the reference; filled with allow_nonfinite
  std::size_t dev_nonfinite = 0;          // NaN/inf in the device's result
  bool within(double tol) const;
};

result_errors compare_results(const std::vector<double>& ref, const std::vector<double>& dev,
                              const std::vector<double>& host, bool allow_nonfinite);
// The three error lines (and, with allow_nonfinite, the position lines); `dev_label` e.g. "cuda:0".
void print_result_errors(const result_errors& e, const std::string& dev_label);

// An error figure as tessel-check prints it ("1.234e-05").
std::string format_error(double e);

}  // namespace tessel::tools
