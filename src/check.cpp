// src/check.cpp — argument checks shared by every public op.
#include "check.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "backend_entry.hpp"
#include "tessel/backend.hpp"

namespace tessel::detail {
namespace {
bool known_device_kind(device_kind k) {
  return k == device_kind::host || k == device_kind::cuda || k == device_kind::hip;
}
// sum((extent - 1) * stride) over all dimensions: the distance from the first
// element to the last. check_view has made sure that it fits.
std::int64_t element_span(const tensor_view& t) {
  std::int64_t s = 0;
  for (int d = 0; d < t.rank; ++d) s += (t.shape[d] - 1) * t.stride[d];
  return s;
}
}  // namespace

std::int64_t check_view(const char* op, const char* name, const tensor_view& t, int min_rank, int max_rank_allowed) {
  if (t.rank < min_rank || t.rank > max_rank_allowed)
    fail(op, "argument '", name, "': expected rank ", min_rank, min_rank == max_rank_allowed ? "" : " to ",
         min_rank == max_rank_allowed ? std::string() : std::to_string(max_rank_allowed), ", got rank ", t.rank);
  if (int(t.type) < 0 || int(t.type) > 2) fail(op, "argument '", name, "': unknown dtype value ", int(t.type));
  if (!known_device_kind(t.dev.kind))
    fail(op, "argument '", name, "': unknown device kind ", int(t.dev.kind), ", expected host, cuda or hip");
  // Every extent before any stride: contiguous() derives strides from the
  // extents, so a negative extent is the error to name, not the stride it made.
  for (int d = 0; d < t.rank; ++d)
    if (t.shape[d] < 0)
      fail(op, "argument '", name, "': dimension ", d, " is ", t.shape[d], ", expected a size >= 0");
  for (int d = 0; d < t.rank; ++d)
    if (t.stride[d] < 0)
      fail(op, "argument '", name, "': stride ", d, " is ", t.stride[d], ", expected a stride >= 0");
  for (int d = 0; d < t.rank; ++d)
    if (t.shape[d] == 0) return 0;  // never touched, whatever the other extents and strides
  // The element count, then the byte offsets (span · element size, at most 4), must fit in int64.
  constexpr std::int64_t limit = std::numeric_limits<std::int64_t>::max() / 4;
  std::int64_t elements = 1, span = 0;
  for (int d = 0; d < t.rank; ++d) {
    if (elements > limit / t.shape[d])
      fail(op, "argument '", name, "': shape ", shape_string(t), " has more elements than fit in int64");
    elements *= t.shape[d];
  }
  for (int d = 0; d < t.rank; ++d) {
    if (t.stride[d] != 0 && (t.shape[d] - 1) > (limit - span) / t.stride[d])
      fail(op, "argument '", name, "': shape ", shape_string(t), " with strides ", stride_string(t),
           " spans more than fits in int64");
    span += (t.shape[d] - 1) * t.stride[d];
  }
  if (t.data == nullptr)
    fail(op, "argument '", name, "': data is a null pointer, expected memory for ", elements, " elements");
  return elements;
}

void check_no_self_overlap(const char* op, const char* name, const tensor_view& t) {
  int dims[max_rank], n = 0;
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] == 0) return;  // no elements
    if (t.shape[d] > 1) dims[n++] = d;
  }
  // Ordered by stride, each stride must step over everything the smaller ones
  // reach; then every index has its own offset (a mixed-radix number). Equal
  // strides fail: the second one steps inside the first's span.
  std::stable_sort(dims, dims + n, [&](int x, int y) { return t.stride[x] < t.stride[y]; });
  std::int64_t span = 0;
  for (int i = 0; i < n; ++i) {
    const int d = dims[i];
    if (t.stride[d] <= span)
      fail(op, "argument '", name, "': strides ", stride_string(t), " with shape ", shape_string(t),
           " make elements of '", name, "' overlap: dimension ", d, " (extent ", t.shape[d], ") has stride ",
           t.stride[d],
           t.stride[d] == 0 ? std::string()
                            : ", not larger than the span " + std::to_string(span) +
                                  " of the dimensions with smaller or equal strides",
           "; expected each element its own memory, with dimensions that nest (ordered by stride, each stride > 0 "
           "and larger than the span sum((extent - 1) * stride) of the smaller ones)");
    span += (t.shape[d] - 1) * t.stride[d];
  }
}

void check_disjoint(const char* op, const char* out_name, const tensor_view& out, std::int64_t n_out,
                    const char* in_name, const tensor_view& in, std::int64_t n_in) {
  if (n_out == 0 || n_in == 0) return;
  // As addresses and lengths (no pointer arithmetic past the views, no wrap):
  // [a, a + la) and [b, b + lb) intersect iff the later start is inside the earlier range.
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(out.data), b = reinterpret_cast<std::uintptr_t>(in.data);
  const std::uint64_t la = std::uint64_t(element_span(out) + 1) * std::uint64_t(dtype_size(out.type));
  const std::uint64_t lb = std::uint64_t(element_span(in) + 1) * std::uint64_t(dtype_size(in.type));
  if (a <= b ? b - a < la : a - b < lb)
    fail(op, "argument '", out_name, "': overlaps the memory of '", in_name,
         "'; expected disjoint memory (the byte ranges from first to last element must not intersect)");
}

void check_backend(const char* op, const char* name, const tensor_view& t) {
  const bool built = t.dev.kind == device_kind::host || (t.dev.kind == device_kind::cuda && TESSEL_HAS_CUDA) ||
                     (t.dev.kind == device_kind::hip && TESSEL_HAS_HIP);
  if (!built)
    unsupported(op, "argument '", name, "': the tensor is on a ", device_name(t.dev.kind),
                " device, but this tessel was built with backends: ", built_backends());
}

void check_device(const char* op, const char* name, const tensor_view& t) {
  if (t.data == nullptr) return;  // empty tensors are never touched
#if TESSEL_HAS_CUDA
  bool on_cuda = true;
  if (t.dev.kind == device_kind::cuda) on_device([&] { on_cuda = cuda_pointer_on_device(t.data, t.dev.index); });
  if (!on_cuda)
    fail(op, "argument '", name, "': the pointer is not memory of cuda device ", t.dev.index,
         " (a host pointer passed to a device op?)");
#endif
#if TESSEL_HAS_HIP
  bool on_hip = true;
  if (t.dev.kind == device_kind::hip) on_device([&] { on_hip = hip_pointer_on_device(t.data, t.dev.index); });
  if (!on_hip)
    fail(op, "argument '", name, "': the pointer is not memory of hip device ", t.dev.index,
         " (a host pointer passed to a device op?)");
#endif
  (void)op;
  (void)name;
}

}  // namespace tessel::detail
