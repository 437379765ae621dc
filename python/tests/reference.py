"""python/tests/reference.py — float64 NumPy references and the error measure.

Contract: inputs are the arrays the op was given (already rounded to their
dtype), widened exactly to float64; the references compute in float64 the
definitions of api/gemm.hpp and api/attention.hpp (GQA head mapping, causal
mask aligned bottom-right, rows without keys -> zeros and LSE -inf).
Tolerances (normwise relative error ‖x − ref‖_F / ‖ref‖_F), those of the C++
suite (tests/gemm_cases.cpp, tests/attention_cases.cpp):
  float32 out: 1e-5 — fp32 accumulation error grows like sqrt(K)·2^-24
    (6e-8); 1e-5 covers K up to ~10^5, far above the sizes here.
  float16 out: 2e-3, bfloat16 out: 1e-2 — one rounding of each output,
    unit roundoff 2^-11 (4.9e-4) / 2^-8 (3.9e-3), rms ≈ u/√3; attention also
    rounds P to the input type before P·V (as FlashAttention does), one more
    rounding of the same size. Both stay under the bound with margin ≥ 2.
  LSE (fp32 softmax arithmetic whatever the input type): 1e-5 as float32.
"""
import numpy as np

TOL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1e-2}


def f64(x):
    return np.asarray(x).astype(np.float64)


def rel_error(x, ref):
    x, ref = f64(x), f64(ref)
    return np.linalg.norm(x - ref) / max(np.linalg.norm(ref), np.finfo(np.float64).tiny)


def gemm_ref(a, b, c=None, alpha=1.0, beta=0.0, trans_a=False, trans_b=False):
    a, b = f64(a), f64(b)
    if trans_a:
        a = np.swapaxes(a, -1, -2)
    if trans_b:
        b = np.swapaxes(b, -1, -2)
    d = alpha * (a @ b)
    return d if c is None or beta == 0 else d + beta * f64(c)


def attention_ref(q, k, v, causal=False, scale=None):
    """q [B, Lq, H, D], k/v [B, Lk, Hk, D] -> (out [B, Lq, H, D], lse [B, H, Lq])."""
    q, k, v = f64(q), f64(k), f64(v)
    heads, kv_heads, lq, lk = q.shape[2], k.shape[2], q.shape[1], k.shape[1]
    group = heads // kv_heads
    k, v = np.repeat(k, group, axis=2), np.repeat(v, group, axis=2)
    scale = 1.0 / np.sqrt(q.shape[3]) if scale is None else scale
    s = scale * np.einsum("bihd,bjhd->bhij", q, k)
    if causal:
        seen = np.arange(lk)[None, :] <= np.arange(lq)[:, None] + (lk - lq)
        s = np.where(seen, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    total = p.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(total > 0, np.einsum("bhij,bjhd->bhid", p, v) / total, 0.0)
        lse = np.log(total[..., 0]) + m[..., 0]
    return np.swapaxes(out, 1, 2), np.where(total[..., 0] > 0, lse, -np.inf)
