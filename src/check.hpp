// src/check.hpp — building the messages of tessel::Error, and the argument
// checks shared by every public op.
#pragma once
#include <sstream>
#include <string>

#include "tessel/error.hpp"
#include "tessel/tensor.hpp"

namespace tessel::detail {

template <class... Parts> [[noreturn]] void fail_as(error_kind kind, const char* op, const Parts&... parts) {
  std::ostringstream s;
  s << "tessel::" << op << ": ";
  (s << ... << parts);
  throw Error(s.str(), kind);
}
// Bad input (error_kind::invalid_argument).
template <class... Parts> [[noreturn]] void fail(const char* op, const Parts&... parts) {
  fail_as(error_kind::invalid_argument, op, parts...);
}
// Well-formed input this build does not provide (error_kind::unsupported).
template <class... Parts> [[noreturn]] void unsupported(const char* op, const Parts&... parts) {
  fail_as(error_kind::unsupported, op, parts...);
}

// Runs a call into a device backend: a tessel::Error it throws with the
// default kind (a launch, the runtime, the driver failing) is a device failure.
template <class F> void on_device(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.kind() != error_kind::invalid_argument) throw;
    throw Error(e.what(), error_kind::device);
  }
}

// "[a, b, c]" of the first `rank` values (at most max_rank).
inline std::string dims_string(const std::int64_t* v, int rank) {
  std::ostringstream s;
  s << "[";
  for (int d = 0; d < rank && d < max_rank; ++d) s << (d ? ", " : "") << v[d];
  s << "]";
  return s.str();
}
inline std::string shape_string(const tensor_view& t) { return dims_string(t.shape, t.rank); }
inline std::string stride_string(const tensor_view& t) { return dims_string(t.stride, t.rank); }

// Common checks on one tensor argument: rank in [min_rank, max_rank_allowed],
// a known dtype and device kind, non-negative extents (all of them first) then
// non-negative strides, no int64 overflow of the element count or of the
// spanned range, non-null data when it has elements. Returns the number of
// elements. Every later check may rely on these.
std::int64_t check_view(const char* op, const char* name, const tensor_view& t, int min_rank, int max_rank_allowed);

// Refuses a view that is written by the op when two of its elements may share
// memory (api/tensor.hpp states the rule: ignoring extent-1 dimensions, the
// dimensions ordered by stride must nest, each stride > 0 and larger than the
// span of the smaller-stride ones). Needs check_view first.
void check_no_self_overlap(const char* op, const char* name, const tensor_view& t);

// Refuses an output (n_out elements) whose byte range [first, last element]
// intersects that of another argument (n_in elements). Empty views overlap
// nothing. Conservative: interleaved but disjoint views are refused too.
void check_disjoint(const char* op, const char* out_name, const tensor_view& out, std::int64_t n_out,
                    const char* in_name, const tensor_view& in, std::int64_t n_in);

// Refuses a device kind whose backend this build lacks (memory is not looked at).
void check_backend(const char* op, const char* name, const tensor_view& t);

// Refuses memory that is not on the device the view claims (asks the device's
// runtime; views without data are skipped). Needs check_backend first.
void check_device(const char* op, const char* name, const tensor_view& t);

}  // namespace tessel::detail
