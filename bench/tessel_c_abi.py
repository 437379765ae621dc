"""bench/tessel_c_abi.py — tessel's C ABI (api/c_api.h) through ctypes, for the benchmark scripts beside it.

The scripts run as `python3 bench/NAME.py`, so this file is importable as
`tessel_c_abi`. It needs no framework: a tensor is described by its data
pointer, shape, strides (in elements) and TESSEL_DTYPE_* code; the scripts map
their own tensor types onto view().

  lib = open_library(path)            # version-checked, argtypes set for tessel_gemm / tessel_attention
  check(lib, lib.tessel_gemm(...))    # raises RuntimeError with tessel_last_error() on a failed status
"""
import ctypes
import sys

C_API_MAJOR = 1  # TESSEL_C_API_VERSION_MAJOR of the header this module mirrors
DTYPE_F32, DTYPE_F16, DTYPE_BF16 = 0, 1, 2  # TESSEL_DTYPE_*
DEVICE_HOST, DEVICE_CUDA = 0, 1  # TESSEL_DEVICE_*


class TesselTensor(ctypes.Structure):
    """tessel_tensor of api/c_api.h."""
    _fields_ = [("data", ctypes.c_void_p), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("device_kind", ctypes.c_int32), ("device_index", ctypes.c_int32)]


def view(data, shape, strides, dtype, device_kind, device_index=0):
    """A tessel_tensor; its shape and stride arrays ride along so that they outlive the call."""
    rank = len(shape)
    s, st = (ctypes.c_int64 * rank)(*shape), (ctypes.c_int64 * rank)(*strides)
    v = TesselTensor(data, s, st, dtype, rank, device_kind, device_index)
    v._keep = (s, st)
    return v


def open_library(path):
    """libtessel_c at `path`, its major version checked, tessel_gemm and tessel_attention typed."""
    lib = ctypes.CDLL(path)
    lib.tessel_c_api_version.restype = ctypes.c_int32
    version = lib.tessel_c_api_version()
    if version // 10000 != C_API_MAJOR:
        sys.exit(f"{path}: C ABI version {version}, this script speaks major version {C_API_MAJOR}")
    lib.tessel_last_error.restype = lib.tessel_backends.restype = ctypes.c_char_p
    ptr = ctypes.POINTER(TesselTensor)
    lib.tessel_gemm.restype = lib.tessel_attention.restype = ctypes.c_int32
    lib.tessel_gemm.argtypes = [ptr, ptr, ptr, ctypes.c_float, ctypes.c_float, ctypes.c_int32, ctypes.c_int32,
                                ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p]
    lib.tessel_attention.argtypes = [ptr, ptr, ptr, ptr, ptr, ctypes.c_int32, ctypes.c_float, ctypes.c_int32,
                                     ctypes.c_int32, ctypes.c_void_p]
    return lib


def check(lib, status):
    if status != 0:
        raise RuntimeError(lib.tessel_last_error().decode())
