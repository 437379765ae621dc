// tools/check_report.hpp — how tessel-check compares a result with its
// references, NaN and inf included (--allow-nonfinite), and prints the errors.
//
// Contract: compare_positions(ref, x) puts every element of both in one of four
// classes — finite, NaN, +inf, -inf — and counts the positions whose classes
// differ (`mismatched`: a NaN where the reference is finite, an inf of the
// wrong sign, a finite value where the reference is NaN, ...); its errors are
// taken over the positions finite in both: the relative Frobenius error
// ‖x − r‖/‖r‖ (‖x‖ where r is all 0, as support::relative_error) and max |x − r|.
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

namespace tessel::tools {

struct position_comparison {
  std::size_t mismatched = 0;
  std::size_t nan = 0, pos_inf = 0, neg_inf = 0;  // positions where both are NaN / +inf / -inf
  double relative = 0;                            // over the positions finite in both
  double max_abs = 0;
};

position_comparison compare_positions(const std::vector<double>& ref, const std::vector<double>& x);

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
