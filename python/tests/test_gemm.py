"""python/tests/test_gemm.py — tessel.gemm on NumPy arrays against float64.

Covers float32 / float16 / bfloat16 inputs, C of the input type or float32,
both transposes, row-/column-major, padded and stepped views, c with alpha
and beta (written in place, returned as the same object), batches with a
shared operand, K = 0 and M = 0, both kernel paths, and that `threads` is
honoured. Tolerances: reference.py.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import tessel
from arrays import DTYPES, VIEWS, random, view
from reference import TOL, gemm_ref, rel_error


def operands(rng, dtype, m, n, k, trans_a=False, trans_b=False, batch=None):
    lead = () if batch is None else (batch,)
    a = random(rng, lead + ((k, m) if trans_a else (m, k)), dtype)
    b = random(rng, lead + ((n, k) if trans_b else (k, n)), dtype)
    return a, b


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("out_dtype", [None, "float32"])
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True), (True, True)])
def test_gemm_matches_float64(rng, dtype, out_dtype, trans_a, trans_b):
    a, b = operands(rng, dtype, 37, 29, 53, trans_a, trans_b)
    c = tessel.gemm(a, b, trans_a=trans_a, trans_b=trans_b, out_dtype=out_dtype)
    expected_dtype = out_dtype or dtype
    assert type(c) is np.ndarray and c.dtype == DTYPES[expected_dtype] and c.shape == (37, 29)
    assert rel_error(c, gemm_ref(a, b, trans_a=trans_a, trans_b=trans_b)) < TOL[expected_dtype]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("a_view", VIEWS)
@pytest.mark.parametrize("b_view", ["contiguous", "fortran", "step"])
def test_gemm_strided_views(rng, dtype, a_view, b_view):
    a, b = operands(rng, dtype, 24, 40, 33)
    c = tessel.gemm(view(a, a_view), view(b, b_view))
    assert rel_error(c, gemm_ref(a, b)) < TOL[dtype]


def test_gemm_transposed_views(rng):
    """a.T and b.T as NumPy views (column-major strides, no copy), with the op's own transposes."""
    at, bt = random(rng, (20, 50), "float32"), random(rng, (50, 30), "float32")
    c = tessel.gemm(at.T, bt.T, trans_a=True, trans_b=True)  # op(aᵀ)·op(bᵀ) = at · bt
    assert rel_error(c, gemm_ref(at, bt)) < TOL["float32"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("c_dtype", ["input", "float32"])
@pytest.mark.parametrize("c_view", ["contiguous", "fortran", "padded"])
def test_gemm_alpha_beta_c_in_place(rng, dtype, c_dtype, c_view):
    c_dtype = dtype if c_dtype == "input" else c_dtype
    a, b = operands(rng, dtype, 19, 45, 31)
    c0 = random(rng, (19, 45), c_dtype)
    c = view(c0, c_view)
    result = tessel.gemm(a, b, c=c, alpha=-1.5, beta=0.75)
    assert result is c
    assert rel_error(c, gemm_ref(a, b, c0, alpha=-1.5, beta=0.75)) < TOL[c_dtype]


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemm_batched_with_shared_operands(rng, dtype):
    a, b = operands(rng, dtype, 21, 17, 26, batch=3)
    c = tessel.gemm(a, b[0])  # b rank 2: shared by the 3 entries
    assert c.shape == (3, 21, 17) and rel_error(c, gemm_ref(a, b[0])) < TOL[dtype]
    shared = np.broadcast_to(a[1], a.shape)  # batch stride 0, read-only
    c = tessel.gemm(shared, b)
    assert rel_error(c, gemm_ref(shared, b)) < TOL[dtype]


def test_gemm_k_zero_and_m_zero(rng):
    c0 = random(rng, (4, 6), "float32")
    c = c0.copy()
    tessel.gemm(np.empty((4, 0), np.float32), np.empty((0, 6), np.float32), c=c, beta=0.5)
    np.testing.assert_array_equal(c, np.float32(0.5) * c0)
    empty = tessel.gemm(np.empty((0, 5), np.float32), random(rng, (5, 6), "float32"))
    assert empty.shape == (0, 6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemm_portable_path_agrees(rng, dtype):
    a, b = operands(rng, dtype, 33, 65, 70)
    fast = tessel.gemm(a, b, out_dtype="float32")
    portable = tessel.gemm(a, b, out_dtype="float32", path="portable")
    assert rel_error(portable, gemm_ref(a, b)) < TOL["float32"]
    assert rel_error(fast, portable) < TOL["float32"]


THREAD_PROBE = """
import os, numpy as np, tessel
a = np.ones((768, 768), np.float32)
before = len(os.listdir('/proc/self/task'))  # NumPy's BLAS may have started threads already
tessel.gemm(a, a, threads={threads})
print(len(os.listdir('/proc/self/task')) - before)
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads through Linux /proc")
@pytest.mark.parametrize("threads", [1, 2])
def test_gemm_threads_honoured(threads):
    """A fresh process: threads=1 runs on the calling thread alone; threads=2 starts one worker or more."""
    if threads > (os.cpu_count() or 1):
        pytest.skip("needs 2 CPUs")
    out = subprocess.run([sys.executable, "-c", THREAD_PROBE.format(threads=threads)], capture_output=True,
                         text=True, check=True).stdout
    started = int(out.split()[-1])
    assert started == 0 if threads == 1 else started >= 1
