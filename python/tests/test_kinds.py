"""python/tests/test_kinds.py — results come back as the caller's kind of array.

Contract: an array of a library other than NumPy, known to tessel only
through __dlpack__ and the array-API namespace (__array_namespace__().empty),
gets its result allocated by that library, written in place by tessel; NumPy
in gives NumPy out (test_gemm.py, test_attention.py).
"""
import numpy as np

import tessel
from arrays import random
from reference import TOL, attention_ref, gemm_ref, rel_error


class Namespace:
    float32, float16 = np.float32, np.float16

    @staticmethod
    def empty(shape, dtype, device):
        assert device == "cpu"
        return Wrapped(np.empty(shape, dtype))


class Wrapped:
    """A stand-in for another library's array, around NumPy memory."""

    device = "cpu"

    def __init__(self, array):
        self.array, self.shape, self.ndim, self.dtype = array, array.shape, array.ndim, array.dtype

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __array_namespace__(self):
        return Namespace


def test_gemm_result_of_the_callers_kind(rng):
    a, b = random(rng, (12, 20), "float32"), random(rng, (20, 9), "float32")
    c = tessel.gemm(Wrapped(a), Wrapped(b))
    assert type(c) is Wrapped and rel_error(c.array, gemm_ref(a, b)) < TOL["float32"]


def test_attention_result_of_the_callers_kind(rng):
    q, k = random(rng, (1, 10, 2, 64), "float16"), random(rng, (1, 14, 2, 64), "float16")
    out, lse = tessel.attention(Wrapped(q), Wrapped(k), Wrapped(k), return_lse=True)
    assert type(out) is Wrapped and type(lse) is Wrapped and out.dtype == np.float16
    ref_out, ref_lse = attention_ref(q, k, k)
    assert rel_error(out.array, ref_out) < TOL["float16"] and rel_error(lse.array, ref_lse) < TOL["float32"]
