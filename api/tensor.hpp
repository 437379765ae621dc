// tessel/tensor.hpp — non-owning tensor views, devices and streams.
//
// Contract: a tensor_view names memory it does not own: a pointer, an element
// type, up to 4 dimensions with element (not byte) strides, and the device the
// memory lives on. Strides may be any non-negative value, so row-major,
// column-major and batched layouts are all views of the same kind (zero strides
// broadcast an input). tessel checks a view against the op's expectations and
// throws tessel::Error on a mismatch.
//
// Outputs (gemm's c, attention's out and lse) are refused when they overlap:
// - themselves: leaving out the dimensions of extent 1 and ordering the others
//   by stride, every stride must be > 0 and larger than the span
//   sum((extent - 1) * stride) of the dimensions before it, i.e. the
//   dimensions nest, as in any packed, padded, batched or permuted layout. (A
//   few interleaved layouts whose elements are in fact disjoint, such as shape
//   [2, 3] with strides [3, 2], are refused too.)
// - another argument of the op: the byte ranges [first element, last element]
//   of the two views must not intersect, even where the elements themselves
//   would interleave without touching.
// A view with no elements overlaps nothing.
//
// The helpers here never overflow, whatever int64 values they are given
// (negative or huge extents included): a product of extents that does not fit
// saturates at INT64_MAX (or INT64_MIN), and the op's checks then refuse the
// view by name ("more elements than fit in int64", "dimension 1 is -1").
#pragma once
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

#include "tessel/core/element.hpp"

namespace tessel {

enum class device_kind : int { host = 0, cuda = 1, hip = 2 };

// Which kernels an op runs on its device. fastest: the best the device and
// operands allow (the default). portable: the backend's baseline kernels,
// which every device of the backend runs — on CUDA the sm_80 (mma.sync)
// kernels even on an sm_90 device, where fastest takes TMA + wgmma; on the CPU
// and HIP backends the same kernels as fastest (the CPU's ISA is chosen by
// set_cpu_isa). For cross-checking a fast path against the baseline in one
// process, and for tests that cover both.
enum class kernel_path : int { fastest = 0, portable = 1 };

inline const char* device_name(device_kind k) {
  return k == device_kind::host ? "host" : k == device_kind::cuda ? "cuda" : k == device_kind::hip ? "hip" : "unknown";
}

// x · y, clamped to [INT64_MIN, INT64_MAX] instead of overflowing (portable:
// unsigned magnitudes, no compiler builtin).
constexpr std::int64_t saturating_mul(std::int64_t x, std::int64_t y) {
  if (x == 0 || y == 0) return 0;
  const bool negative = (x < 0) != (y < 0);
  const std::uint64_t ux = x < 0 ? 0 - std::uint64_t(x) : std::uint64_t(x);
  const std::uint64_t uy = y < 0 ? 0 - std::uint64_t(y) : std::uint64_t(y);
  const std::uint64_t max = std::uint64_t(std::numeric_limits<std::int64_t>::max());
  const std::uint64_t bound = negative ? max + 1 : max;  // |INT64_MIN| = INT64_MAX + 1
  if (ux > bound / uy) return negative ? std::numeric_limits<std::int64_t>::min() : std::int64_t(max);
  const std::uint64_t p = ux * uy;
  if (!negative) return std::int64_t(p);
  return p == max + 1 ? std::numeric_limits<std::int64_t>::min() : -std::int64_t(p);
}

struct device {
  device_kind kind = device_kind::host;
  int index = 0;
  static device host() { return {device_kind::host, 0}; }
  static device cuda(int i = 0) { return {device_kind::cuda, i}; }
  static device hip(int i = 0) { return {device_kind::hip, i}; }
};

inline constexpr int max_rank = 4;

struct tensor_view {
  void* data = nullptr;
  dtype type = dtype::f32;
  int rank = 0;
  std::int64_t shape[max_rank] = {0, 0, 0, 0};
  std::int64_t stride[max_rank] = {0, 0, 0, 0};  // in elements
  device dev = device::host();

  // A densely packed row-major view (last dimension contiguous). Strides are
  // products of the later extents, saturated (see above).
  static tensor_view contiguous(void* data, dtype type, std::initializer_list<std::int64_t> shape,
                                device dev = device::host()) {
    tensor_view v;
    v.data = data;
    v.type = type;
    v.dev = dev;
    v.rank = int(shape.size());  // a rank over max_rank is kept so that checks can refuse it
    int i = 0;
    for (std::int64_t s : shape)
      if (i < max_rank) v.shape[i++] = s;
    std::int64_t st = 1;
    for (int d = (v.rank < max_rank ? v.rank : max_rank) - 1; d >= 0; --d) {
      v.stride[d] = st;
      st = saturating_mul(st, v.shape[d]);
    }
    return v;
  }
  // The same view with strides given explicitly (elements).
  static tensor_view strided(void* data, dtype type, std::initializer_list<std::int64_t> shape,
                             std::initializer_list<std::int64_t> strides, device dev = device::host()) {
    tensor_view v = contiguous(data, type, shape, dev);
    int i = 0;
    for (std::int64_t s : strides)
      if (i < max_rank) v.stride[i++] = s;
    return v;
  }
  // The product of the extents, saturated (see above).
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (int d = 0; d < rank && d < max_rank; ++d) n = saturating_mul(n, shape[d]);
    return n;
  }
};

// A queue of work on one device. For cuda/hip, `native` is a cudaStream_t /
// hipStream_t (nullptr: the default stream); tessel enqueues and returns
// without waiting. For the CPU, work runs before the call returns, on at most
// `threads` threads (0: oneTBB's default, all cores).
struct stream {
  void* native = nullptr;
  int threads = 0;
  static stream cpu(int threads = 0) { return {nullptr, threads}; }
  static stream gpu(void* native) { return {native, 0}; }
};

}  // namespace tessel
