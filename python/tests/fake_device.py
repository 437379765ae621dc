"""python/tests/fake_device.py — an array that says it lives on a GPU, for the device errors.

Contract: DeviceArray(shape, device_type=2 (CUDA), device_id=0) exports
through __dlpack__ a DLPack capsule (built with ctypes) describing a float32
tensor of that shape on that device, with a data pointer that must never be
read: tessel refuses the call by name before touching any data, here where no
GPU backend is built or devices are mixed.
"""
import ctypes


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32), ("dtype", _DType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class DeviceArray:
    dtype = "float32"

    def __init__(self, shape, device_type=2, device_id=0):
        self.shape, self.ndim = tuple(shape), len(shape)
        self._device = (device_type, device_id)
        self._shape = (ctypes.c_int64 * self.ndim)(*shape)
        strides, step = [], 1
        for extent in reversed(shape):
            strides.insert(0, step)
            step *= extent
        self._strides = (ctypes.c_int64 * self.ndim)(*strides)
        self._managed = []  # kept alive with the array: the capsules carry no destructor

    def __dlpack_device__(self):
        return self._device

    def __dlpack__(self, **kwargs):
        t = _Tensor(0x1000, _Device(*self._device), self.ndim, _DType(2, 32, 1), self._shape, self._strides, 0)
        managed = _Managed(t, None, None)
        self._managed.append(managed)
        return _capsule_new(ctypes.addressof(managed), b"dltensor", None)
