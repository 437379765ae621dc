"""tessel.torch — tessel's ops as PyTorch custom operators (torch.library).

    tessel.torch.gemm(a, b, *, trans_a=False, trans_b=False, alpha=1.0, out_dtype=None) -> Tensor
    tessel.torch.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
                                              scale=None, enable_gqa=False) -> Tensor

Contract:
- Both are registered as custom ops (torch.ops.tessel.gemm,
  torch.ops.tessel.attention) with fake implementations, so torch.compile
  (fullgraph=True too) traces through them without a graph break, and
  torch.library.opcheck passes. They run on PyTorch's current stream (CUDA
  graphs capture them) and return new tensors, never views of the inputs.
- gemm: alpha·op(a)·op(b) as tessel.gemm, ranks 2 or 3; out_dtype None (a's
  dtype) or torch.float32.
- scaled_dot_product_attention: F.scaled_dot_product_attention's signature on
  [batch, heads, seq, head_dim] tensors. What tessel's attention cannot do
  is refused by name with tessel.Error, never computed differently:
  attn_mask (only is_causal), dropout_p != 0, is_causal with q_len != kv_len
  (PyTorch aligns that mask top-left, tessel bottom-right: call
  tessel.attention(..., causal=True) for the latter), kv heads != heads
  without enable_gqa.
- Autograd: neither op has a backward pass yet; backward through either
  raises tessel.Error saying so (the forward runs as usual).
- Shapes, dtypes and devices are checked by the C++ library when the op runs
  (tessel.Error with its message); the fake implementations only compute the
  output's shape and dtype.
"""
from typing import Optional

import torch

from . import _attention, _gemm
from ._tessel import Error

__all__ = ["gemm", "scaled_dot_product_attention"]


def _gemm_shape(a, b, trans_a, trans_b):
    m = a.shape[-1] if trans_a else a.shape[-2]
    n = b.shape[-2] if trans_b else b.shape[-1]
    if a.dim() == 2 and b.dim() == 2:
        return (m, n)
    batch = max(x.shape[0] if x.dim() == 3 else 1 for x in (a, b))
    return (batch, m, n)


@torch.library.custom_op("tessel::gemm", mutates_args=())
def _gemm_op(a: torch.Tensor, b: torch.Tensor, trans_a: bool, trans_b: bool, alpha: float,
             out_dtype: Optional[torch.dtype]) -> torch.Tensor:
    return _gemm.gemm(a, b, trans_a=trans_a, trans_b=trans_b, alpha=alpha, out_dtype=out_dtype)


@_gemm_op.register_fake
def _(a, b, trans_a, trans_b, alpha, out_dtype):
    if a.dim() not in (2, 3) or b.dim() not in (2, 3):
        raise Error(f"tessel.torch.gemm: arguments 'a', 'b': expected rank 2 or 3, got {a.dim()} and {b.dim()}")
    return a.new_empty(_gemm_shape(a, b, trans_a, trans_b), dtype=out_dtype or a.dtype)


@torch.library.custom_op("tessel::attention", mutates_args=())
def _attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, scale: Optional[float]) -> torch.Tensor:
    return _attention.attention(q, k, v, causal=causal, scale=scale, layout="bhsd")


@_attention_op.register_fake
def _(q, k, v, causal, scale):
    return q.new_empty(q.shape)


def _no_backward(name):
    def backward(ctx, grad):
        raise Error(f"{name}: no backward pass yet (tessel has no attention or GEMM backward); "
                    "call it under torch.no_grad() or use the PyTorch op for training")
    return backward


_gemm_op.register_autograd(_no_backward("tessel.torch.gemm"))
_attention_op.register_autograd(_no_backward("tessel.torch.scaled_dot_product_attention"))


def gemm(a, b, *, trans_a=False, trans_b=False, alpha=1.0, out_dtype=None):
    """alpha·op(a)·op(b) as a new tensor (tessel.gemm as a custom op); see the module docstring."""
    if out_dtype not in (None, torch.float32):
        raise Error(f"tessel.torch.gemm: argument 'out_dtype': expected None (a's dtype) or torch.float32, "
                    f"got {out_dtype}")
    return _gemm_op(a, b, bool(trans_a), bool(trans_b), float(alpha), out_dtype)


def scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """F.scaled_dot_product_attention on [batch, heads, seq, head_dim] through tessel; see the module docstring."""
    op = "tessel.torch.scaled_dot_product_attention"
    if attn_mask is not None:
        raise Error(f"{op}: argument 'attn_mask': expected None (tessel masks only causally: is_causal=True)")
    if dropout_p != 0.0:
        raise Error(f"{op}: argument 'dropout_p': expected 0.0 (tessel's attention has no dropout), got {dropout_p}")
    if q.dim() == 4 and k.dim() == 4:
        if is_causal and q.shape[-2] != k.shape[-2]:
            raise Error(f"{op}: argument 'is_causal': q_len {q.shape[-2]} != kv_len {k.shape[-2]}: PyTorch aligns "
                        "this mask top-left, tessel bottom-right; call tessel.attention(..., causal=True, "
                        "layout='bhsd') for the bottom-right mask")
        if not enable_gqa and q.shape[1] != k.shape[1]:
            raise Error(f"{op}: argument 'k': {k.shape[1]} heads where q has {q.shape[1]}; pass enable_gqa=True "
                        "for grouped-query attention")
    return _attention_op(q, k, v, bool(is_causal), None if scale is None else float(scale))
