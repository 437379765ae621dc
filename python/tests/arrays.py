"""python/tests/arrays.py — random test inputs of each dtype, as views of several kinds.

Contract: random(rng, shape, dtype) draws uniform [-1, 1) values rounded to
dtype ('float32', 'float16', 'bfloat16' via ml_dtypes). view(x, kind) returns
a copy of x's values in a new buffer, seen through a view of the given kind: 'contiguous', 'fortran'
(column-major), 'padded' (rows of a wider buffer), 'step' (every other row of
a taller buffer); the last two leave the buffer's other elements as NaN, so a
read outside the view shows in the result.
"""
import ml_dtypes
import numpy as np

DTYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}
VIEWS = ("contiguous", "fortran", "padded", "step")


def random(rng, shape, dtype):
    return rng.uniform(-1.0, 1.0, size=shape).astype(DTYPES[dtype])


def view(x, kind):
    if kind == "contiguous":
        return x.copy(order="C")
    if kind == "fortran":  # each matrix column-major
        return np.swapaxes(np.swapaxes(x, -1, -2).copy(order="C"), -1, -2)
    buffer_shape = list(x.shape)
    if kind == "padded":
        buffer_shape[-1] += 5
        buffer = np.full(buffer_shape, np.nan, dtype=x.dtype)
        out = buffer[..., 2:2 + x.shape[-1]]
    elif kind == "step":
        buffer_shape[-2] *= 2
        buffer = np.full(buffer_shape, np.nan, dtype=x.dtype)
        out = buffer[..., ::2, :]
    else:
        raise ValueError(kind)
    out[...] = x
    return out
