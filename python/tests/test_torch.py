"""python/tests/test_torch.py — tessel.torch: custom ops, torch.compile, the SDPA helper, a transformer block.

Runs where PyTorch is installed (skipped elsewhere, as in CI), on the CPU and,
where torch sees a GPU and tessel has the cuda backend, on CUDA too.
Covers: tessel.torch.gemm and scaled_dot_product_attention against float64
and against torch.matmul / F.scaled_dot_product_attention (causal, GQA,
explicit scale); torch.library.opcheck of both ops (schema, fake tensors,
autograd registration, AOT dispatch); torch.compile(fullgraph=True) of a
module using both, against eager; a pre-norm transformer block with random
weights built on tessel.torch against the same block on PyTorch's ops, both
against float64; backward raising tessel.Error; each refusal by name; a CUDA
graph replaying tessel.torch ops; the README's PyTorch example as written.
Tolerances: reference.py's TOL for one op (relative Frobenius error against
float64); the block, whose ~10 roundings per output compound, must be within
1.5× PyTorch's own error against float64, plus a tenth of TOL as a floor —
as accurate as the PyTorch block in the same dtype.
"""
import pathlib
import runpy

import numpy as np
import pytest

import tessel
from reference import TOL

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import tessel.torch as tt  # noqa: E402

HAVE_CUDA = torch.cuda.is_available() and "cuda" in tessel.built_backends()
DEVICES = ["cpu"] + (["cuda"] if HAVE_CUDA else [])
# 16-bit types everywhere; float32 attention is CPU-only in tessel.
CASES = [(d, t) for d in DEVICES for t in ("bfloat16", "float16")] + [("cpu", "float32")]
EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "torch_sdpa.py"


def fresh(rng, shape, dtype, device, lo=-1.0, hi=1.0):
    return torch.from_numpy(rng.uniform(lo, hi, shape).astype(np.float32)).to(device, getattr(torch, dtype))


def rel(got, ref):
    got, ref = got.double().cpu(), ref.double().cpu()
    return float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


@pytest.mark.parametrize("device,dtype", CASES)
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (False, True), (True, False)])
def test_gemm_matches_float64_and_matmul(rng, device, dtype, trans_a, trans_b):
    m, n, k = 136, 200, 72
    a = fresh(rng, (k, m), dtype, device).t() if trans_a else fresh(rng, (m, k), dtype, device)
    b = fresh(rng, (n, k), dtype, device).t() if trans_b else fresh(rng, (k, n), dtype, device)
    # op(a), op(b) given as transposed views; trans_* tells tessel to transpose them back
    a_op, b_op = (a.t() if trans_a else a), (b.t() if trans_b else b)
    c = tt.gemm(a_op, b_op, trans_a=trans_a, trans_b=trans_b, alpha=0.75)
    sync(device)
    assert c.shape == (m, n) and c.dtype == a.dtype and c.device == a.device
    ref = 0.75 * (a.double() @ b.double())
    assert rel(c, ref) < TOL[dtype]
    assert rel(c, 0.75 * (a @ b)) < 2 * TOL[dtype]


@pytest.mark.parametrize("device", DEVICES)
def test_gemm_batched_fp32_out(rng, device):
    a, b = fresh(rng, (3, 64, 40), "bfloat16", device), fresh(rng, (40, 56), "bfloat16", device)
    c = tt.gemm(a, b, out_dtype=torch.float32)
    sync(device)
    assert c.shape == (3, 64, 56) and c.dtype == torch.float32
    assert rel(c, a.double() @ b.double()) < TOL["float32"]


def sdpa_ref(q, k, v, causal, scale):
    """float64 F.scaled_dot_product_attention (q_len == kv_len where causal), kv heads repeated for GQA."""
    q, k, v = (x.double().cpu() for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    return F.scaled_dot_product_attention(q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1),
                                          is_causal=causal, scale=scale)


@pytest.mark.parametrize("device,dtype", CASES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kv_heads,scale", [(4, None), (2, 0.3), (1, None)])
def test_sdpa_matches_float64_and_torch(rng, device, dtype, causal, kv_heads, scale):
    b, h, s, d = 2, 4, 203, 64
    kv = s if causal else 150
    q = fresh(rng, (b, h, s, d), dtype, device)
    k, v = fresh(rng, (b, kv_heads, kv, d), dtype, device), fresh(rng, (b, kv_heads, kv, d), dtype, device)
    out = tt.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, enable_gqa=kv_heads != h)
    sync(device)
    assert out.shape == q.shape and out.dtype == q.dtype and out.device == q.device
    ref = sdpa_ref(q, k, v, causal, scale)
    assert rel(out, ref) < TOL[dtype]
    group = h // kv_heads
    peer = F.scaled_dot_product_attention(q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1),
                                          is_causal=causal, scale=scale)
    assert rel(out, peer) < 2 * TOL[dtype]


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(rng, device):
    dtype = "bfloat16"
    a, b = fresh(rng, (48, 80), dtype, device), fresh(rng, (96, 80), dtype, device)
    torch.library.opcheck(torch.ops.tessel.gemm.default, (a, b, False, True, 1.0, None))
    torch.library.opcheck(torch.ops.tessel.gemm.default, (a, b.t(), False, False, 2.0, torch.float32))
    q, k, v = (fresh(rng, (1, 2, 70, 64), dtype, device) for _ in range(3))
    torch.library.opcheck(torch.ops.tessel.attention.default, (q, k, v, True, None))
    torch.library.opcheck(torch.ops.tessel.attention.default, (q, k[:, :1], v[:, :1], False, 0.5))


class Attention(torch.nn.Module):
    """Multi-head self-attention whose projections and attention are tessel.torch ops (or PyTorch's)."""

    def __init__(self, wq, wkv, wo, heads, kv_heads, tessel_ops):
        super().__init__()
        self.wq, self.wkv, self.wo, self.heads, self.kv_heads, self.tessel_ops = wq, wkv, wo, heads, kv_heads, tessel_ops

    def linear(self, x, w):
        return tt.gemm(x, w, trans_b=True) if self.tessel_ops else x @ w.t()

    def forward(self, x):
        b, s, dm = x.shape
        d = dm // self.heads
        flat = x.reshape(b * s, dm)
        q = self.linear(flat, self.wq).view(b, s, self.heads, d).transpose(1, 2)
        kv = self.linear(flat, self.wkv).view(b, s, 2, self.kv_heads, d)
        k, v = kv[:, :, 0].transpose(1, 2), kv[:, :, 1].transpose(1, 2)
        gqa = self.kv_heads != self.heads
        if self.tessel_ops:
            o = tt.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
        else:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
        return self.linear(o.transpose(1, 2).reshape(b * s, dm), self.wo).view(b, s, dm)


class Block(torch.nn.Module):
    """A pre-norm transformer block: x + attn(norm(x)), then + W2·gelu(W1·norm(x))."""

    def __init__(self, weights, heads, kv_heads, tessel_ops):
        super().__init__()
        wq, wkv, wo, self.w1, self.w2 = weights
        self.attn = Attention(wq, wkv, wo, heads, kv_heads, tessel_ops)

    def forward(self, x):
        x = x + self.attn(F.layer_norm(x, x.shape[-1:]))
        h = F.layer_norm(x, x.shape[-1:])
        b, s, dm = h.shape
        h = self.attn.linear(F.gelu(self.attn.linear(h.reshape(b * s, dm), self.w1)), self.w2)
        return x + h.view(b, s, dm)


def block_weights(rng, dm, kv_dm, dtype, device):
    # uniform(-a, a) with a = sqrt(3 / fan_in): unit-variance outputs, as a trained block keeps them
    shapes = [(dm, dm), (2 * kv_dm, dm), (dm, dm), (4 * dm, dm), (dm, 4 * dm)]
    return [fresh(rng, s, dtype, device, -(3 / s[1]) ** 0.5, (3 / s[1]) ** 0.5) for s in shapes]


@pytest.mark.parametrize("device,dtype", [c for c in CASES if c[1] != "float16"])
def test_transformer_block_matches_pytorch(rng, device, dtype):
    b, s, heads, kv_heads, d = 2, 96, 4, 2, 64
    dm = heads * d
    weights = block_weights(rng, dm, kv_heads * d, dtype, device)
    x = fresh(rng, (b, s, dm), dtype, device)
    with torch.no_grad():
        ours = Block(weights, heads, kv_heads, tessel_ops=True)(x)
        theirs = Block(weights, heads, kv_heads, tessel_ops=False)(x)
        exact = Block([w.double().cpu() for w in weights], heads, kv_heads, tessel_ops=False)(x.double().cpu())
    sync(device)
    e_ours, e_theirs = rel(ours, exact), rel(theirs, exact)
    print(f"block {device} {dtype}: tessel {e_ours:.2e}, PyTorch {e_theirs:.2e} (relative to float64)")
    assert ours.dtype == x.dtype and ours.shape == x.shape
    assert e_ours <= 1.5 * e_theirs + TOL[dtype] / 10


@pytest.mark.parametrize("device", DEVICES)
def test_compile_fullgraph_matches_eager(rng, device):
    torch._dynamo.reset()
    heads, kv_heads, d = 4, 1, 64
    dm = heads * d
    dtype = "bfloat16"
    weights = block_weights(rng, dm, kv_heads * d, dtype, device)
    block = Block(weights, heads, kv_heads, tessel_ops=True)
    x = fresh(rng, (2, 80, dm), dtype, device)
    with torch.no_grad():
        eager = block(x)
        compiled = torch.compile(block, fullgraph=True)(x)
    sync(device)
    # the ops are opaque to the compiler, so it runs the same kernels on the same inputs: only the
    # fused elementwise code (layer_norm, gelu, residual adds) may round differently
    assert rel(compiled, eager) < TOL[dtype]


@pytest.mark.parametrize("device", DEVICES)
def test_backward_is_refused_clearly(rng, device):
    a = fresh(rng, (32, 16), "bfloat16", device).requires_grad_()
    c = tt.gemm(a, a, trans_b=True)  # the forward runs
    with pytest.raises(tessel.Error, match=r"tessel\.torch\.gemm: no backward pass yet"):
        c.sum().backward()
    q = fresh(rng, (1, 2, 40, 64), "bfloat16", device).requires_grad_()
    out = tt.scaled_dot_product_attention(q, q, q)
    with pytest.raises(tessel.Error, match=r"scaled_dot_product_attention: no backward pass yet"):
        out.sum().backward()


def test_refusals_name_the_argument(rng):
    q = fresh(rng, (1, 4, 32, 64), "bfloat16", "cpu")
    k = fresh(rng, (1, 2, 48, 64), "bfloat16", "cpu")
    with pytest.raises(tessel.Error, match="argument 'attn_mask'"):
        tt.scaled_dot_product_attention(q, q, q, attn_mask=torch.ones(32, 32, dtype=torch.bool))
    with pytest.raises(tessel.Error, match="argument 'dropout_p'"):
        tt.scaled_dot_product_attention(q, q, q, dropout_p=0.1)
    with pytest.raises(tessel.Error, match="argument 'is_causal': q_len 32 != kv_len 48"):
        tt.scaled_dot_product_attention(q, k, k, is_causal=True, enable_gqa=True)
    with pytest.raises(tessel.Error, match="argument 'k': 2 heads where q has 4; pass enable_gqa=True"):
        tt.scaled_dot_product_attention(q, k, k)
    with pytest.raises(tessel.Error, match="argument 'out_dtype'"):
        tt.gemm(q[0, 0], q[0, 0], trans_b=True, out_dtype=torch.float16)
    with pytest.raises(tessel.Error, match=r"tessel::gemm: argument 'b'"):  # the C++ message, unchanged
        tt.gemm(q[0, 0], k[0, 0])


@pytest.mark.skipif(not HAVE_CUDA, reason="needs a CUDA device and tessel built with the cuda backend")
def test_cuda_graph_replays_tessel_torch_ops(rng):
    x = fresh(rng, (1, 2, 128, 64), "bfloat16", "cuda")
    w = fresh(rng, (64, 64), "bfloat16", "cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the default stream, as graph capture asks
        tt.gemm(tt.scaled_dot_product_attention(x, x, x, is_causal=True).flatten(0, 2), w, trans_b=True)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = tt.gemm(tt.scaled_dot_product_attention(x, x, x, is_causal=True).flatten(0, 2), w, trans_b=True)
    for _ in range(2):  # new inputs, copied into the captured buffers
        x.copy_(fresh(rng, x.shape, "bfloat16", "cuda"))
        graph.replay()
        torch.cuda.synchronize()
        ref = sdpa_ref(x, x, x, True, None).flatten(0, 2) @ w.double().cpu().t()
        assert rel(y, ref) < 2 * TOL["bfloat16"]


def test_readme_torch_example_runs_as_written():
    code = [line for line in EXAMPLE.read_text().splitlines() if line and not line.startswith("#")]
    assert len(code) <= 5  # the README shows these lines
    done = runpy.run_path(str(EXAMPLE))
    q, k, v, out, y = done["q"], done["k"], done["v"], done["out"], done["y"]
    sync(done["dev"])
    assert rel(out, sdpa_ref(q, k, v, True, None)) < TOL["bfloat16"]
    assert y.shape == (8 * 512, 256) and y.dtype == torch.bfloat16
