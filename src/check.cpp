// src/check.cpp — argument checks shared by every public op.
#include "check.hpp"

#include <limits>

#include "backend_entry.hpp"
#include "tessel/backend.hpp"

namespace tessel::detail {

std::int64_t check_view(const char* op, const char* name, const tensor_view& t, int min_rank, int max_rank_allowed) {
  if (t.rank < min_rank || t.rank > max_rank_allowed)
    fail(op, "argument '", name, "': expected rank ", min_rank, min_rank == max_rank_allowed ? "" : " to ",
         min_rank == max_rank_allowed ? std::string() : std::to_string(max_rank_allowed), ", got rank ", t.rank);
  if (int(t.type) < 0 || int(t.type) > 2) fail(op, "argument '", name, "': unknown dtype value ", int(t.type));
  constexpr std::int64_t limit = std::numeric_limits<std::int64_t>::max() / 4;
  std::int64_t elements = 1, span = 0;
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] < 0)
      fail(op, "argument '", name, "': dimension ", d, " is ", t.shape[d], ", expected a size >= 0");
    if (t.stride[d] < 0)
      fail(op, "argument '", name, "': stride ", d, " is ", t.stride[d], ", expected a stride >= 0");
  }
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] == 0) return 0;
    if (elements > limit / t.shape[d])
      fail(op, "argument '", name, "': shape ", shape_string(t), " has more elements than fit in int64");
    elements *= t.shape[d];
    if (t.stride[d] != 0 && (t.shape[d] - 1) > (limit - span) / t.stride[d])
      fail(op, "argument '", name, "': shape ", shape_string(t), " with its strides spans more than fits in int64");
    span += (t.shape[d] - 1) * t.stride[d];
  }
  if (t.data == nullptr)
    fail(op, "argument '", name, "': data is a null pointer, expected memory for ", elements, " elements");
  return elements;
}

bool views_overlap(const tensor_view& x, std::int64_t nx, const tensor_view& y, std::int64_t ny) {
  if (nx == 0 || ny == 0) return false;
  auto span = [](const tensor_view& t) {
    std::int64_t s = 0;
    for (int d = 0; d < t.rank; ++d) s += (t.shape[d] - 1) * t.stride[d];
    return (s + 1) * dtype_size(t.type);
  };
  const char* a = static_cast<const char*>(x.data);
  const char* b = static_cast<const char*>(y.data);
  return a < b + span(y) && b < a + span(x);
}

void check_device(const char* op, const char* name, const tensor_view& t) {
  if (t.data == nullptr) return;  // empty tensors are never touched
  switch (t.dev.kind) {
    case device_kind::host: return;
    case device_kind::cuda:
#if TESSEL_HAS_CUDA
      if (!cuda_pointer_on_device(t.data, t.dev.index))
        fail(op, "argument '", name, "': the pointer is not memory of cuda device ", t.dev.index,
             " (a host pointer passed to a device op?)");
      return;
#else
      fail(op, "argument '", name, "': the tensor is on a cuda device, but this tessel was built with backends: ",
           built_backends());
#endif
    case device_kind::hip:
#if TESSEL_HAS_HIP
      if (!hip_pointer_on_device(t.data, t.dev.index))
        fail(op, "argument '", name, "': the pointer is not memory of hip device ", t.dev.index,
             " (a host pointer passed to a device op?)");
      return;
#else
      fail(op, "argument '", name, "': the tensor is on a hip device, but this tessel was built with backends: ",
           built_backends());
#endif
  }
  fail(op, "argument '", name, "': unknown device kind ", int(t.dev.kind));
}

}  // namespace tessel::detail
