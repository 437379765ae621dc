// python/ext/views.cpp — DLPack arrays to tensor_views (contract in views.hpp).
#include "views.hpp"

#include <string>

#include <tessel/error.hpp>

namespace nb = nanobind;

namespace tessel_py {
namespace {

[[noreturn]] void refuse(const view_request& r, const std::string& what) {
  throw tessel::Error(std::string(r.op) + ": argument '" + r.name + "': " + what);
}

std::string dlpack_dtype_name(nb::dlpack::dtype t) {
  static const char* codes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  std::string name = t.code < 7 ? codes[t.code] : "code" + std::to_string(t.code);
  name += std::to_string(t.bits);
  if (t.lanes != 1) name += "x" + std::to_string(t.lanes);
  return name;
}

tessel::dtype to_dtype(nb::dlpack::dtype t, const view_request& r) {
  using code = nb::dlpack::dtype_code;
  if (t.lanes == 1 && t.bits == 16 && r.bf16_bits && t.code == uint8_t(code::UInt)) return tessel::dtype::bf16;
  if (t.lanes == 1 && t.bits == 32 && t.code == uint8_t(code::Float)) return tessel::dtype::f32;
  if (t.lanes == 1 && t.bits == 16 && t.code == uint8_t(code::Float)) return tessel::dtype::f16;
  if (t.lanes == 1 && t.bits == 16 && t.code == uint8_t(code::Bfloat)) return tessel::dtype::bf16;
  refuse(r, "expected dtype float32, float16 or bfloat16, got " + dlpack_dtype_name(t));
}

tessel::device to_device(int type, int id, const view_request& r) {
  namespace dev = nb::device;
  if (type == dev::cpu::value || type == dev::cuda_host::value || type == dev::rocm_host::value)
    return tessel::device::host();
  if (type == dev::cuda::value || type == dev::cuda_managed::value) return tessel::device::cuda(id);
  if (type == dev::rocm::value) return tessel::device::hip(id);
  refuse(r, "DLPack device type " + std::to_string(type) + " is not one tessel runs on (CPU, CUDA, ROCm)");
}

nb::ndarray<> import_array(nb::handle obj, const view_request& r) {
  if (r.writable) {
    nb::ndarray<> out;
    if (nb::try_cast(obj, out, false)) return out;
    nb::ndarray<nb::ro> any;
    if (nb::try_cast(obj, any, false)) refuse(r, "expected a writable array, got a read-only one");
  } else {
    nb::ndarray<nb::ro> in;
    if (nb::try_cast(obj, in, false)) return nb::ndarray<>(in);
  }
  refuse(r, "its DLPack export failed (expected an array of at most 4 dimensions, dtype float32, float16 or "
            "bfloat16)");
}

}  // namespace

array_view to_view(nb::handle obj, const view_request& r) {
  array_view v{import_array(obj, r), {}};
  tessel::tensor_view& t = v.view;
  t.data = v.array.data();
  t.type = to_dtype(v.array.dtype(), r);
  t.dev = to_device(v.array.device_type(), v.array.device_id(), r);
  t.rank = int(v.array.ndim());
  for (int d = 0; d < t.rank && d < tessel::max_rank; ++d) {
    t.shape[d] = std::int64_t(v.array.shape(size_t(d)));
    t.stride[d] = v.array.stride(size_t(d));
  }
  if (r.bhsd && t.rank == 4) {
    std::swap(t.shape[1], t.shape[2]);
    std::swap(t.stride[1], t.stride[2]);
  }
  return v;
}

}  // namespace tessel_py
