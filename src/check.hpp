// src/check.hpp — building the messages of tessel::Error.
#pragma once
#include <sstream>
#include <string>

#include "tessel/error.hpp"
#include "tessel/tensor.hpp"

namespace tessel::detail {

template <class... Parts> [[noreturn]] void fail(const char* op, const Parts&... parts) {
  std::ostringstream s;
  s << "tessel::" << op << ": ";
  (s << ... << parts);
  throw Error(s.str());
}

inline std::string shape_string(const tensor_view& t) {
  std::ostringstream s;
  s << "[";
  for (int d = 0; d < t.rank && d < max_rank; ++d) s << (d ? ", " : "") << t.shape[d];
  s << "]";
  return s.str();
}

// Common checks on one tensor argument: rank in [min_rank, max_rank_allowed],
// non-negative extents and strides, no int64 overflow of the spanned range,
// non-null data when it has elements. Returns the number of elements.
std::int64_t check_view(const char* op, const char* name, const tensor_view& t, int min_rank, int max_rank_allowed);

// Whether the memory spanned by two views (nx, ny elements) overlaps.
bool views_overlap(const tensor_view& x, std::int64_t nx, const tensor_view& y, std::int64_t ny);

// Refuses memory that is not on the device the view claims.
void check_device(const char* op, const char* name, const tensor_view& t);

}  // namespace tessel::detail
