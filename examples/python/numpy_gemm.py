# examples/python/numpy_gemm.py — the README's NumPy example, run as written by python/tests/test_example.py.
import numpy as np, ml_dtypes, tessel
a = np.random.rand(1024, 512).astype(ml_dtypes.bfloat16)       # bf16 NumPy arrays through ml_dtypes
c = tessel.gemm(a, a.T, out_dtype=np.float32, threads=2)       # C = A·Aᵀ (a strided view), fp32 out
q = k = v = np.random.rand(1, 2048, 8, 64).astype(np.float32)  # [batch, seq, heads, head_dim]
out = tessel.attention(q, k, v, causal=True)                   # fused causal attention, NumPy out
