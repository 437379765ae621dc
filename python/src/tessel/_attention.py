"""tessel._attention — tessel.attention on any DLPack arrays.

Contract: the fused attention forward of api/attention.hpp. layout "bshd":
q [batch, q_len, heads, head_dim], k and v [batch, kv_len, kv_heads,
head_dim]; layout "bhsd": [batch, heads, seq, head_dim] (passed to C++ as a
strided view, so its messages name shapes in [batch, seq, heads, head_dim]
order). Writes `out` when given, otherwise a new array of q's kind, shape and
dtype; with return_lse also a new float32 log-sum-exp [batch, heads, q_len],
returning (out, lse). scale None: 1/sqrt(head_dim). Errors: tessel.Error
naming the argument, C++ messages unchanged.
"""
from . import _arrays, _options
from . import _tessel
from ._tessel import Error

_OP = "tessel.attention"


def _lse_shape(q, layout):
    if q.ndim != 4:
        return (0, 0, 0)  # any shape: the op refuses q's rank by name first
    b, s, h = (q.shape[0], q.shape[1], q.shape[2]) if layout == "bshd" else (q.shape[0], q.shape[2], q.shape[1])
    return (b, h, s)


def _check(layout, scale):
    """The scale for the C++ op (0: its default, 1/sqrt(head_dim))."""
    if layout not in ("bshd", "bhsd"):
        raise Error(f"{_OP}: argument 'layout': expected 'bshd' or 'bhsd', got {layout!r}")
    if scale is None:
        return 0.0
    if not _options.number(scale, _OP, "scale") > 0:
        raise Error(f"{_OP}: argument 'scale': expected a number > 0 or None (1/sqrt(head_dim)), got {scale!r}")
    return float(scale)


def attention(q, k, v, *, causal=False, scale=None, return_lse=False, out=None, layout="bshd", threads=None,
              stream=None, path="fastest"):
    """softmax(scale·q·kᵀ + mask)·v; returns out (or (out, lse)). See the module docstring."""
    scale = _check(layout, scale)
    inputs = [_arrays.importable(x, _OP, name) for x, name in ((q, "q"), (k, "k"), (v, "v"))]
    if out is None:
        out = _arrays.empty_like_kind(q, q.shape, _arrays.check_dtype(q.dtype, _OP, "q"), _OP, "out")
    outputs = [_arrays.importable(out, _OP, "out")]
    lse = _arrays.empty_like_kind(q, _lse_shape(q, layout), "float32", _OP, "lse") if return_lse else None
    mask = sum(bf16 << i for i, (_, bf16) in enumerate(inputs + outputs))
    _tessel.attention(*(x for x, _ in inputs + outputs), lse, mask, layout == "bhsd", bool(causal), scale,
                      _options.threads(threads, _OP), _options.stream(stream, _OP, q), _options.portable(path, _OP))
    return (out, lse) if return_lse else out
