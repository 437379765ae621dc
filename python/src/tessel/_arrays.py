"""tessel._arrays — the caller's arrays in, outputs of the caller's kind out.

Contract:
- importable(x, op, name) -> (obj, is_bf16_bits): what the extension imports
  for argument `name`. An object with __dlpack__ is passed as it is. A NumPy
  array of ml_dtypes.bfloat16 is passed as its uint16 view (the same memory)
  with is_bf16_bits set, because NumPy's DLPack export refuses that dtype
  (BufferError) and its buffer protocol too. Anything else raises tessel.Error
  naming the argument.
- dtype_name(x): 'float32', 'float16', 'bfloat16', ... for NumPy, PyTorch and
  array-API dtypes alike.
- empty_like_kind(x, shape, dtype, op, name): an uninitialised output of x's
  kind (NumPy, PyTorch, or any array-API namespace) on x's device, written
  in place by the op and returned as it is: no copy of the result.
"""
import sys

from ._tessel import Error

SUPPORTED = ("float32", "float16", "bfloat16")


def _is_instance(x, module, name):
    """isinstance(x, module.name), without importing a module the caller has not imported."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(x, getattr(loaded, name))


def _is_numpy(x):
    return _is_instance(x, "numpy", "ndarray")


def _is_numpy_bf16(x):
    # dtype.type's name, not dtype.name: the latter costs ~1.5 µs a read in NumPy 2 (docs/python.md, "Call overhead")
    return _is_numpy(x) and x.dtype.type.__name__ == "bfloat16"


def importable(x, op, name):
    if _is_numpy_bf16(x):
        return x.view("uint16"), True
    if not hasattr(type(x), "__dlpack__"):
        raise Error(f"{op}: argument '{name}': expected an array with __dlpack__ (NumPy >= 1.22, PyTorch, CuPy, "
                    f"JAX, ...), got {type(x).__module__}.{type(x).__qualname__}")
    return x, False


def dtype_name(dtype):
    """'float32' for np.float32, np.dtype('float32'), torch.float32, 'float32', ml_dtypes.bfloat16, ..."""
    name = getattr(dtype, "__name__", None) or getattr(dtype, "name", None) or str(dtype)
    return str(name).rsplit(".", 1)[-1]


def check_dtype(dtype, op, name):
    got = dtype_name(dtype)
    if got not in SUPPORTED:
        raise Error(f"{op}: argument '{name}': expected dtype float32, float16 or bfloat16, got {got}")
    return got


def _numpy_empty(shape, dtype):
    import numpy as np
    if dtype == "bfloat16":
        import ml_dtypes
        return np.empty(shape, ml_dtypes.bfloat16)
    return np.empty(shape, dtype)


def empty_like_kind(x, shape, dtype, op, name):
    if _is_numpy(x):
        return _numpy_empty(shape, dtype)
    if _is_instance(x, "torch", "Tensor"):
        import torch
        return torch.empty(shape, dtype=getattr(torch, dtype), device=x.device)
    namespace = getattr(x, "__array_namespace__", None)
    xp_dtype = getattr(namespace(), dtype, None) if namespace else None
    if xp_dtype is None:
        raise Error(f"{op}: argument '{name}': cannot allocate a {dtype} array of the kind of "
                    f"{type(x).__qualname__}; pass {name}= explicitly")
    return namespace().empty(shape, dtype=xp_dtype, device=x.device)
