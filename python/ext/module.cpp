// python/ext/module.cpp — the extension module tessel._tessel.
//
// Contract: tessel::Error becomes tessel.Error (a ValueError) with what() as
// its message, unchanged; the ops come from ops.cpp; built_backends, cpu_isa
// and set_cpu_isa are the C++ functions of api/backend.hpp.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <tessel/backend.hpp>
#include <tessel/error.hpp>

#include "ops.hpp"

namespace nb = nanobind;

NB_MODULE(_tessel, m) {
  nb::exception<tessel::Error>(m, "Error", PyExc_ValueError);
  m.def("built_backends", &tessel::built_backends);
  m.def("cpu_isa", &tessel::cpu_isa);
  m.def("set_cpu_isa", &tessel::set_cpu_isa, nb::arg("name"));
  tessel_py::bind_ops(m);
}
