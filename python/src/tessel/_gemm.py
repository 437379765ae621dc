"""tessel._gemm — tessel.gemm on any DLPack arrays.

Contract: C = alpha·op(a)·op(b) + beta·c (api/gemm.hpp), written into `c`
when given (and returned), otherwise into a new array of a's kind and device,
of dtype out_dtype (default a's dtype; float32 allowed for any input type). Ranks 2
or 3 (batched; a rank-2 operand is shared by every batch entry). beta != 0
needs c. Errors: tessel.Error naming the argument, C++ messages unchanged.
"""
from . import _arrays, _options
from . import _tessel
from ._tessel import Error

_OP = "tessel.gemm"


def _out_shape(a, b, trans_a, trans_b):
    if a.ndim not in (2, 3) or b.ndim not in (2, 3):
        return (0, 0)  # any shape: the op refuses a's or b's rank by name first
    m = a.shape[-1] if trans_a else a.shape[-2]
    n = b.shape[-2] if trans_b else b.shape[-1]
    if a.ndim == 2 and b.ndim == 2:
        return (m, n)
    return (max(x.shape[0] if x.ndim == 3 else 1 for x in (a, b)), m, n)


def _output(a, b, c, beta, trans_a, trans_b, out_dtype):
    if c is not None:
        if out_dtype is not None and _arrays.dtype_name(out_dtype) != _arrays.dtype_name(c.dtype):
            raise Error(f"{_OP}: argument 'out_dtype': {_arrays.dtype_name(out_dtype)} differs from c's dtype "
                        f"{_arrays.dtype_name(c.dtype)}")
        return c
    if beta != 0:
        raise Error(f"{_OP}: argument 'beta': beta = {beta} needs c (C = alpha·op(a)·op(b) + beta·c)")
    a_dtype = _arrays.check_dtype(a.dtype, _OP, "a")
    dtype = a_dtype if out_dtype is None else _arrays.check_dtype(out_dtype, _OP, "out_dtype")
    return _arrays.empty_like_kind(a, _out_shape(a, b, trans_a, trans_b), dtype, _OP, "c")


def gemm(a, b, *, c=None, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, out_dtype=None, threads=None,
         stream=None, path="fastest"):
    """C = alpha·op(a)·op(b) + beta·c; returns c (given, or new of a's kind). See the module docstring."""
    alpha, beta = _options.number(alpha, _OP, "alpha"), _options.number(beta, _OP, "beta")
    a_in, a_bf16 = _arrays.importable(a, _OP, "a")
    b_in, b_bf16 = _arrays.importable(b, _OP, "b")
    if c is not None:
        _arrays.importable(c, _OP, "c")
    c = _output(a, b, c, beta, trans_a, trans_b, out_dtype)
    c_in, c_bf16 = _arrays.importable(c, _OP, "c")
    _tessel.gemm(a_in, b_in, c_in, a_bf16 | b_bf16 << 1 | c_bf16 << 2, alpha, beta, bool(trans_a), bool(trans_b),
                 _options.threads(threads, _OP), _options.stream(stream, _OP, a), _options.portable(path, _OP))
    return c
