// python/ext/views.hpp — a Python array as a tessel::tensor_view.
//
// Contract: to_view imports any object nanobind can (DLPack capsule or
// __dlpack__; the Python layer has already refused objects without
// __dlpack__) and describes its memory as a tensor_view: DLPack's element
// strides as they are, the device mapped (CPU, CUDA- and ROCm-pinned host memory ->
// host, CUDA/managed -> cuda, ROCm -> hip), the dtype mapped (float32,
// float16, bfloat16; `bf16_bits` reads a uint16 array as bfloat16, for NumPy
// arrays of ml_dtypes.bfloat16, which NumPy cannot export through DLPack).
// `bhsd` swaps dimensions 1 and 2 (attention's [batch, heads, seq, dim]
// layout seen as tessel's [batch, seq, heads, dim]). A rank above 4 is kept
// so that the op refuses it by name. Anything else throws tessel::Error
// naming the op and the argument. The returned array keeps the memory alive.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <tessel/tensor.hpp>

namespace tessel_py {

struct array_view {
  nanobind::ndarray<> array;
  tessel::tensor_view view;
};

struct view_request {
  const char* op;
  const char* name;
  bool writable;
  bool bf16_bits;
  bool bhsd;
};

array_view to_view(nanobind::handle obj, const view_request& r);

}  // namespace tessel_py
