"""tessel — GEMM and fused attention on NumPy, PyTorch, CuPy, JAX, ... arrays.

    tessel.gemm(a, b, *, c=None, alpha=1.0, beta=0.0, trans_a=False, trans_b=False,
                out_dtype=None, threads=None, stream=None, path="fastest")
    tessel.attention(q, k, v, *, causal=False, scale=None, return_lse=False, out=None,
                     layout="bshd", threads=None, stream=None, path="fastest")

Arrays come in through DLPack (NumPy bfloat16 from ml_dtypes through its
uint16 view), results are of the caller's kind, written in place. Host arrays
run on the CPU backend (threads: None or 0 = all cores); device arrays on the
backend this package was built with (built_backends()). tessel.Error (a
ValueError) carries the C++ library's message unchanged.
"""
from importlib.metadata import PackageNotFoundError, version

from ._attention import attention
from ._gemm import gemm
from ._tessel import Error, built_backends, cpu_isa, set_cpu_isa

Error.__module__ = "tessel"  # shown as tessel.Error in tracebacks

try:
    __version__ = version("tessel")
except PackageNotFoundError:  # imported from a source tree
    __version__ = "unknown"

__all__ = ["Error", "attention", "built_backends", "cpu_isa", "gemm", "set_cpu_isa"]
