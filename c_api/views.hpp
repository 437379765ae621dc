// c_api/views.hpp — the C ABI's arguments as the C++ API's values, each
// checked by name first.
//
// Contract: every function returns the C++ value or throws tessel::Error
// (invalid_argument) with "<fn>: argument '<name>': <what was expected>".
// to_view checks that the tensor pointer is not null, its rank lies in
// [min_rank, max_rank] and its shape array is not null, and only then reads
// `rank` values of shape and strides (null strides: packed row-major, as
// tensor_view::contiguous); it checks the dtype, device kind and device index
// values. Extents, strides, null data and overflow are left to the C++ op,
// whose checks name them.
#pragma once
#include <cstdint>

#include "tessel/c_api.h"
#include "tessel/tensor.hpp"

namespace tessel::c_api {

tensor_view to_view(const char* fn, const char* name, const tessel_tensor* t, int min_rank, int max_rank);
// A C boolean that must be 0 or 1 (trans_a, causal, ...).
bool to_flag(const char* fn, const char* name, std::int32_t value);
kernel_path to_path(const char* fn, std::int32_t value);
// The stream of an op: `threads` (>= 0) for the host, `native` for a device.
stream to_stream(const char* fn, std::int32_t threads, void* native);

}  // namespace tessel::c_api
