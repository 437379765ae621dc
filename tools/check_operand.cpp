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
  for (std::size_t i = 0; i < a.count(); ++i) {
    o.data.set(i, a.values[i]);
    o.nonfinite += !std::isfinite(o.data.get(i));
  }
  return o;
}

operand random_operand(const shape_t& shape, dtype t, std::mt19937_64& rng) {
  operand o{"random", shape, support::host_tensor(t, elements(shape))};
  support::fill_random(o.data, rng);
  return o;
}

void print_input_notes(std::initializer_list<const operand*> inputs, bool allow_nonfinite) {
  std::size_t total = 0;
  for (const operand* o : inputs) {
    if (!o || !o->nonfinite) continue;
    std::printf("  note: %s holds %zu non-finite value%s (NaN or inf)\n", o->origin.c_str(), o->nonfinite,
                o->nonfinite == 1 ? "" : "s");
    total += o->nonfinite;
  }
  if (total && !allow_nonfinite)
    std::printf("  note: errors will read inf; --allow-nonfinite compares the positions of NaN and inf instead\n");
}

void check_extent(const std::string& what, std::initializer_list<std::int64_t> dims) {
  constexpr std::int64_t limit = std::int64_t(1) << 31;
  std::int64_t n = 1;
  for (std::int64_t d : dims) {
    const std::int64_t f = std::max<std::int64_t>(d, 1);
    if (f > limit / n) throw input_error(what + " is too large for a check (over 2^31 elements, a 0 counted as 1)");
    n *= f;
  }
}

}  // namespace tessel::tools
