"""python/tests/test_attention.py — tessel.attention on NumPy arrays against float64.

Covers float32 / float16 / bfloat16, head_dim 64 and 128, multi-head, GQA and
MQA, causal (bottom-right) with q_len < and > kv_len (rows without keys: zeros,
LSE -inf), both layouts, return_lse, an explicit scale, strided views (a head
slice of a wider buffer, bhsd views of bshd memory), `out` written in place,
and the portable path. Tolerances: reference.py.
"""
import numpy as np
import pytest

import tessel
from arrays import DTYPES, random
from reference import TOL, attention_ref, rel_error


def qkv(rng, dtype, batch=2, q_len=23, kv_len=41, heads=4, kv_heads=2, head_dim=64):
    q = random(rng, (batch, q_len, heads, head_dim), dtype)
    k = random(rng, (batch, kv_len, kv_heads, head_dim), dtype)
    v = random(rng, (batch, kv_len, kv_heads, head_dim), dtype)
    return q, k, v


def check(out, lse, q, k, v, dtype, causal=False, scale=None):
    ref_out, ref_lse = attention_ref(q, k, v, causal, scale)
    assert out.dtype == DTYPES[dtype] and out.shape == ref_out.shape
    assert rel_error(out, ref_out) < TOL[dtype]
    if lse is not None:
        assert lse.dtype == np.float32 and lse.shape == ref_lse.shape
        seen = np.isfinite(ref_lse)
        np.testing.assert_array_equal(lse[~seen], ref_lse[~seen])
        assert rel_error(lse[seen], ref_lse[seen]) < TOL["float32"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kv_heads", [4, 2, 1])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_attention_matches_float64(rng, dtype, causal, kv_heads, head_dim):
    q, k, v = qkv(rng, dtype, kv_heads=kv_heads, head_dim=head_dim)
    out, lse = tessel.attention(q, k, v, causal=causal, return_lse=True)
    assert type(out) is np.ndarray
    check(out, lse, q, k, v, dtype, causal)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
def test_attention_bhsd_layout(rng, dtype, causal):
    q, k, v = qkv(rng, dtype, q_len=35, kv_len=30)
    to_bhsd = lambda x: np.ascontiguousarray(x.transpose(0, 2, 1, 3))  # noqa: E731
    out, lse = tessel.attention(to_bhsd(q), to_bhsd(k), to_bhsd(v), causal=causal, return_lse=True, layout="bhsd")
    assert out.shape == (2, 4, 35, 64) and out.flags.c_contiguous
    check(out.transpose(0, 2, 1, 3), lse, q, k, v, dtype, causal)


def test_attention_rows_without_keys(rng):
    """Causal with q_len > kv_len: the first q_len - kv_len rows see no key."""
    q, k, v = qkv(rng, "float32", q_len=30, kv_len=12)
    out, lse = tessel.attention(q, k, v, causal=True, return_lse=True)
    assert np.all(out[:, :18] == 0) and np.all(lse[:, :, :18] == -np.inf)
    check(out, lse, q, k, v, "float32", causal=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_attention_strided_views_and_out(rng, dtype):
    """q, k, v: head slices of wider buffers; bhsd views of bshd memory; out written in place."""
    wide = random(rng, (2, 23, 7, 64), dtype)
    q = wide[:, :, 2:6]
    kv = random(rng, (2, 41, 2, 2, 64), dtype)  # k and v interleaved per head
    k, v = kv[:, :, :, 0], kv[:, :, :, 1]
    out = np.zeros((2, 4, 23, 64), DTYPES[dtype]).transpose(0, 2, 1, 3)  # bshd view of bhsd memory
    result = tessel.attention(q, k, v, out=out, scale=0.3)
    assert result is out
    check(out, None, q, k, v, dtype, scale=0.3)
    t = lambda x: x.transpose(0, 2, 1, 3)  # noqa: E731
    out_bhsd = tessel.attention(t(q), t(k), t(v), layout="bhsd", scale=0.3)
    check(t(out_bhsd), None, q, k, v, dtype, scale=0.3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_attention_portable_path_and_threads(rng, dtype):
    q, k, v = qkv(rng, dtype)
    out = tessel.attention(q, k, v, causal=True, path="portable", threads=1)
    check(out, None, q, k, v, dtype, causal=True)
