// tools/check_operand.hpp — an input of tessel-check: from a .npy file or random.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "host_tensor.hpp"

namespace tessel::tools {

using shape_t = std::vector<std::int64_t>;

struct operand {
  std::string origin;  // file name or "random"
  shape_t shape;
  support::host_tensor data;  // values rounded to the kernel's dtype
  std::size_t nonfinite = 0;  // NaN and inf among the values (as rounded)
};

std::size_t elements(const shape_t& s);

// Reads `path` (float32 / float16 .npy) as `role`, rounding to t. Its rank must
// be one of `ranks`, else input_error naming the file, the role and `expected`
// (e.g. "2-D [rows, cols] or 3-D [batch, rows, cols]"). Non-finite values are
// kept and counted (print_input_notes() reports them once all inputs are read,
// so that a bad input is the only line printed).
operand read_operand(const std::string& path, dtype t, const char* role, std::initializer_list<std::size_t> ranks,
                     const char* expected);
operand random_operand(const shape_t& shape, dtype t, std::mt19937_64& rng);

// The non-finite values of the inputs, one stdout line each; with
// `allow_nonfinite` false, also how to compare their positions instead.
void print_input_notes(std::initializer_list<const operand*> inputs, bool allow_nonfinite);

// What one check may allocate or loop over: throws input_error ("`what` ... too
// large") when the product of `dims`, each 0 counted as 1, exceeds 2^31.
void check_extent(const std::string& what, std::initializer_list<std::int64_t> dims);

}  // namespace tessel::tools
