// tools/check_operand.cpp — reading and drawing tessel-check's inputs.
#include "check_operand.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "check.hpp"
#include "npy.hpp"

namespace tessel::tools {

std::size_t elements(const shape_t& s) {
  std::size_t n = 1;
  for (auto d : s) n *= std::size_t(d);
  return n;
}

operand read_operand(const std::string& path, dtype t, const char* role, std::initializer_list<std::size_t> ranks,
                     const char* expected) {
  npy_array a = read_npy(path);
  if (std::find(ranks.begin(), ranks.end(), a.shape.size()) == ranks.end())
    throw input_error(path + ": " + role + " must be " + expected + ", got shape " + shape_string(a.shape));
  operand o{path, a.shape, support::host_tensor(t, a.count())};
  std::size_t nonfinite = 0;
  for (std::size_t i = 0; i < a.count(); ++i) {
    nonfinite += !std::isfinite(a.values[i]);
    o.data.set(i, a.values[i]);
  }
  if (nonfinite)
    std::fprintf(stderr, "tessel-check: warning: %s: %zu non-finite values (errors will read inf)\n", path.c_str(),
                 nonfinite);
  return o;
}

operand random_operand(const shape_t& shape, dtype t, std::mt19937_64& rng) {
  operand o{"random", shape, support::host_tensor(t, elements(shape))};
  support::fill_random(o.data, rng);
  return o;
}

std::string format_error(double e) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", e);
  return buf;
}

}  // namespace tessel::tools
