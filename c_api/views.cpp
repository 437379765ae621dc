// c_api/views.cpp — checking the C ABI's arguments and converting them.
#include "views.hpp"

#include <sstream>
#include <string>

#include "tessel/error.hpp"

namespace tessel::c_api {

// The C enums are the C++ ones by value: a tessel_tensor's fields convert by cast.
static_assert(TESSEL_DTYPE_F32 == int(dtype::f32) && TESSEL_DTYPE_F16 == int(dtype::f16) &&
              TESSEL_DTYPE_BF16 == int(dtype::bf16));
static_assert(TESSEL_DEVICE_HOST == int(device_kind::host) && TESSEL_DEVICE_CUDA == int(device_kind::cuda) &&
              TESSEL_DEVICE_HIP == int(device_kind::hip));
static_assert(TESSEL_PATH_FASTEST == int(kernel_path::fastest) && TESSEL_PATH_PORTABLE == int(kernel_path::portable));
static_assert(TESSEL_MAX_RANK == max_rank);

namespace {

template <class... Parts> [[noreturn]] void refuse(const char* fn, const char* name, const Parts&... parts) {
  std::ostringstream s;
  s << fn << ": argument '" << name << "': ";
  (s << ... << parts);
  throw Error(s.str(), error_kind::invalid_argument);
}

std::string rank_range(int min_rank, int max_rank) {
  return min_rank == max_rank ? std::to_string(min_rank)
                              : std::to_string(min_rank) + " or " + std::to_string(max_rank);
}

void check_codes(const char* fn, const char* name, const tessel_tensor& t) {
  if (t.dtype < TESSEL_DTYPE_F32 || t.dtype > TESSEL_DTYPE_BF16)
    refuse(fn, name, "dtype ", t.dtype,
           " is not a TESSEL_DTYPE_* value; expected TESSEL_DTYPE_F32 (0), TESSEL_DTYPE_F16 (1) or "
           "TESSEL_DTYPE_BF16 (2)");
  if (t.device_kind < TESSEL_DEVICE_HOST || t.device_kind > TESSEL_DEVICE_HIP)
    refuse(fn, name, "device_kind ", t.device_kind,
           " is not a TESSEL_DEVICE_* value; expected TESSEL_DEVICE_HOST (0), TESSEL_DEVICE_CUDA (1) or "
           "TESSEL_DEVICE_HIP (2)");
  if (t.device_index < 0) refuse(fn, name, "device_index ", t.device_index, ", expected a device ordinal >= 0");
  if (t.device_kind == TESSEL_DEVICE_HOST && t.device_index != 0)
    refuse(fn, name, "device_index ", t.device_index, " with TESSEL_DEVICE_HOST, expected 0");
}

}  // namespace

tensor_view to_view(const char* fn, const char* name, const tessel_tensor* t, int min_rank, int max_rank) {
  if (!t) refuse(fn, name, "got a null pointer, expected a tessel_tensor of rank ", rank_range(min_rank, max_rank));
  if (t->rank < min_rank || t->rank > max_rank)
    refuse(fn, name, "rank ", t->rank, ", expected ", rank_range(min_rank, max_rank));
  if (!t->shape && t->rank > 0)
    refuse(fn, name, "shape is a null pointer; expected an array of ", t->rank, " extents (its rank)");
  check_codes(fn, name, *t);
  tensor_view v;
  v.data = t->data;
  v.type = dtype(t->dtype);
  v.rank = t->rank;
  v.dev = device{device_kind(t->device_kind), t->device_index};
  std::int64_t packed = 1;  // null strides: the row-major strides, saturated as tensor_view::contiguous does
  for (int d = t->rank - 1; d >= 0; --d) {
    v.shape[d] = t->shape[d];
    v.stride[d] = t->strides ? t->strides[d] : packed;
    packed = saturating_mul(packed, t->shape[d]);
  }
  return v;
}

bool to_flag(const char* fn, const char* name, std::int32_t value) {
  if (value != 0 && value != 1) refuse(fn, name, "expected 0 or 1, got ", value);
  return value == 1;
}

kernel_path to_path(const char* fn, std::int32_t value) {
  if (value != TESSEL_PATH_FASTEST && value != TESSEL_PATH_PORTABLE)
    refuse(fn, "path", "expected TESSEL_PATH_FASTEST (0) or TESSEL_PATH_PORTABLE (1), got ", value);
  return kernel_path(value);
}

stream to_stream(const char* fn, std::int32_t threads, void* native) {
  if (threads < 0) refuse(fn, "threads", "expected a thread count >= 0 (0: the library's default), got ", threads);
  return stream{native, threads};
}

}  // namespace tessel::c_api
