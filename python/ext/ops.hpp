// python/ext/ops.hpp — the ops' bindings: tessel._tessel.gemm and .attention.
//
// Contract: the Python layer (src/tessel/_gemm.py, _attention.py) has checked
// that every array has __dlpack__, allocated the outputs in the caller's array
// kind, and checked and normalised the options; these functions turn the arrays into
// views (views.hpp), pick the stream (host arrays: the CPU with `threads`,
// 0 = all cores; device arrays: `stream` as a native stream handle, 0 = the
// default stream) and call the C++ op with the GIL released. Errors are
// tessel::Error, raised in Python as tessel.Error with the message unchanged.
#pragma once
#include <nanobind/nanobind.h>

namespace tessel_py {

void bind_ops(nanobind::module_& m);

}  // namespace tessel_py
