// tools/check_report.cpp — comparing and printing tessel-check's results (see check_report.hpp).
#include "check_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "host_tensor.hpp"

namespace tessel::tools {
namespace {

enum class value_class { finite, nan, pos_inf, neg_inf };

value_class classify(double v) {
  if (std::isnan(v)) return value_class::nan;
  if (std::isinf(v)) return v > 0 ? value_class::pos_inf : value_class::neg_inf;
  return value_class::finite;
}

}  // namespace

position_comparison compare_positions(const std::vector<double>& ref, const std::vector<double>& x) {
  position_comparison c;
  double num = 0, den = 0, xn = 0;
  const std::size_t n = std::min(ref.size(), x.size());
  for (std::size_t i = 0; i < n; ++i) {
    const value_class r = classify(ref[i]);
    if (r != classify(x[i])) {
      ++c.mismatched;
      continue;
    }
    switch (r) {
      case value_class::nan: ++c.nan; break;
      case value_class::pos_inf: ++c.pos_inf; break;
      case value_class::neg_inf: ++c.neg_inf; break;
      case value_class::finite: {
        const double d = x[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
        xn += x[i] * x[i];
        c.max_abs = std::max(c.max_abs, std::fabs(d));
        break;
      }
    }
  }
  c.mismatched += std::max(ref.size(), x.size()) - n;
  c.relative = den > 0 ? std::sqrt(num / den) : std::sqrt(xn);
  return c;
}

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
