// tools/check_report.cpp — comparing and printing tessel-check's results (see check_report.hpp).
#include "check_report.hpp"

#include <cmath>
#include <cstdio>

namespace tessel::tools {

std::string describe_positions(const position_comparison& c) {
  return std::to_string(c.mismatched) + " mismatched position" + (c.mismatched == 1 ? "" : "s") +
         " (non-finite in both: " + std::to_string(c.nan) + " NaN, " + std::to_string(c.pos_inf) + " +inf, " +
         std::to_string(c.neg_inf) + " -inf)";
}

bool result_errors::within(double tol) const {
  const bool positions = !allow_nonfinite || (dev_pos.mismatched == 0 && host_pos.mismatched == 0);
  return positions && dev <= tol && host <= tol && dev_host <= tol;
}

result_errors compare_results(const std::vector<double>& ref, const std::vector<double>& dev,
                              const std::vector<double>& host, bool allow_nonfinite) {
  result_errors e;
  e.allow_nonfinite = allow_nonfinite;
  for (double v : dev) e.dev_nonfinite += !std::isfinite(v);
  if (!allow_nonfinite) {
    e.dev = support::relative_error(ref, dev);
    e.host = support::relative_error(ref, host);
    e.dev_host = support::relative_error(host, dev);
    return e;
  }
  e.dev_pos = compare_positions(ref, dev);
  e.host_pos = compare_positions(ref, host);
  e.dev = e.dev_pos.relative;
  e.host = e.host_pos.relative;
  e.dev_host = compare_positions(host, dev).relative;
  return e;
}

void print_result_errors(const result_errors& e, const std::string& dev_label) {
  std::printf("  device %-8s vs float64   %s\n", dev_label.c_str(), format_error(e.dev).c_str());
  std::printf("  cpu    %-8s vs float64   %s\n", "host", format_error(e.host).c_str());
  std::printf("  device vs cpu              %s\n", format_error(e.dev_host).c_str());
  if (e.allow_nonfinite) {
    std::printf("  NaN/inf positions, device %-8s vs float64: %s\n", dev_label.c_str(),
                describe_positions(e.dev_pos).c_str());
    std::printf("  NaN/inf positions, cpu    %-8s vs float64: %s\n", "host", describe_positions(e.host_pos).c_str());
  } else if (e.dev_nonfinite) {
    std::printf("  device output has %zu non-finite values\n", e.dev_nonfinite);
  }
}

std::string format_error(double e) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", e);
  return buf;
}

}  // namespace tessel::tools
