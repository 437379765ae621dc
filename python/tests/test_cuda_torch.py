"""python/tests/test_cuda_torch.py — tessel on PyTorch CUDA tensors (runs where torch sees a GPU and tessel has CUDA).

Covers: gemm on bf16 / fp16 CUDA tensors (transposed views, fp32 out, c with
beta) against a float64 reference of the same inputs, and the result a CUDA
tensor on the inputs' device; attention in both layouts, causal and grouped
(kv_heads < heads), against float64; stream order: inputs written on a
non-default stream behind a long kernel, then tessel called without `stream=`
(PyTorch's current stream) and with it, must see the written values; a CUDA
graph holding tessel calls, replayed on new inputs. Skipped elsewhere.
Tolerances: reference.py's for the input type (bf16 1e-2, fp16 2e-3, relative
Frobenius error against float64).
"""
import numpy as np
import pytest

import tessel
from reference import TOL

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or "cuda" not in tessel.built_backends():
    pytest.skip("needs a CUDA device and tessel built with the cuda backend", allow_module_level=True)

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}


def rel(got, ref):
    got, ref = got.double().cpu(), ref.double().cpu()
    return float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))


def fresh(rng, shape, dtype):
    return torch.from_numpy(rng.uniform(-1, 1, shape).astype(np.float32)).to("cuda", DTYPES[dtype])


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("out_dtype", [None, "float32"])
def test_gemm_matches_float64(rng, dtype, trans_b, out_dtype):
    m, n, k = 384, 520, 264
    a = fresh(rng, (m, k), dtype)
    b = fresh(rng, (n, k), dtype).t() if trans_b else fresh(rng, (k, n), dtype)  # a transposed view
    c = tessel.gemm(a, b, out_dtype=out_dtype)
    assert isinstance(c, torch.Tensor) and c.device == a.device and c.shape == (m, n)
    assert c.dtype == (torch.float32 if out_dtype else a.dtype)
    torch.cuda.synchronize()
    assert rel(c, a.double() @ b.double()) < TOL[dtype]


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_gemm_beta_writes_c_in_place(rng, dtype):
    a, b, c0 = fresh(rng, (200, 96), dtype), fresh(rng, (96, 300), dtype), fresh(rng, (200, 300), dtype)
    c = c0.clone()
    out = tessel.gemm(a, b, c=c, alpha=0.5, beta=-1.25)
    assert out is c
    torch.cuda.synchronize()
    assert rel(c, 0.5 * (a.double() @ b.double()) - 1.25 * c0.double()) < TOL[dtype]


def attention_ref(q, k, v, causal, scale):
    """float64 attention on [batch, seq, heads, dim] tensors, kv heads shared by groups of query heads."""
    q, k, v = (x.double().cpu().transpose(1, 2) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    s = (q @ k.transpose(-1, -2)) * scale
    if causal:
        lq, lk = q.shape[2], k.shape[2]
        mask = torch.arange(lk)[None, :] > torch.arange(lq)[:, None] + (lk - lq)
        s = s.masked_fill(mask, float("-inf"))
    return (torch.softmax(s, dim=-1) @ v).transpose(1, 2)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_matches_float64(rng, dtype, layout, causal):
    b, lq, lk, h, hk, d = 2, 200, 333, 8, 2, 64
    q, k, v = fresh(rng, (b, lq, h, d), dtype), fresh(rng, (b, lk, hk, d), dtype), fresh(rng, (b, lk, hk, d), dtype)
    ref = attention_ref(q, k, v, causal, d ** -0.5)
    if layout == "bhsd":  # [batch, heads, seq, dim] tensors of their own
        out = tessel.attention(*(x.transpose(1, 2).contiguous() for x in (q, k, v)), causal=causal, layout="bhsd")
        out = out.transpose(1, 2)
    else:
        out = tessel.attention(q, k, v, causal=causal)
    torch.cuda.synchronize()
    assert isinstance(out, torch.Tensor) and out.is_cuda
    assert rel(out, ref) < TOL[dtype]


@pytest.mark.parametrize("explicit", [False, True])
def test_call_is_ordered_on_the_callers_stream(rng, explicit):
    """Inputs rewritten on a side stream behind a ~50 ms kernel: a call on any other stream would read the old ones."""
    a_old, a_new, b = (fresh(rng, s, "bfloat16") for s in ((256, 128), (256, 128), (128, 192)))
    a = a_old.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)  # ~50 ms of spinning on `side`
        a.copy_(a_new)
        c = torch.empty(256, 192, device="cuda", dtype=torch.bfloat16)
        tessel.gemm(a, b, c=c, stream=side if explicit else None)
    torch.cuda.synchronize()
    assert rel(c, a_new.double() @ b.double()) < TOL["bfloat16"]


def test_cuda_graph_replays_tessel_calls(rng):
    q, k, v = (fresh(rng, (1, 256, 4, 128), "bfloat16") for _ in range(3))
    a, b = fresh(rng, (256, 512), "bfloat16"), fresh(rng, (512, 128), "bfloat16")
    c = torch.empty(256, 128, device="cuda", dtype=torch.float32)
    # One 128 x 256 tile, K = 4096: on an H100 the sm90 GEMM splits it by steps,
    # its workspace allocated inside the capture (a graph allocation node).
    a2, b2 = fresh(rng, (128, 4096), "bfloat16"), fresh(rng, (4096, 256), "bfloat16")
    c2 = torch.empty(128, 256, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(q)
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):  # first calls outside the capture (one-time device queries)
        tessel.gemm(a, b, c=c)
        tessel.gemm(a2, b2, c=c2)
        tessel.attention(q, k, v, out=out, causal=True)
    torch.cuda.current_stream().wait_stream(warm)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tessel.gemm(a, b, c=c)
        tessel.gemm(a2, b2, c=c2)
        tessel.attention(q, k, v, out=out, causal=True)
    for _ in range(2):  # new inputs each replay, written into the captured buffers
        for x in (q, k, v, a, b, a2, b2):
            x.copy_(fresh(rng, tuple(x.shape), "bfloat16"))
        c.fill_(float("nan"))
        c2.fill_(float("nan"))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert rel(c, a.double() @ b.double()) < TOL["bfloat16"]
        assert rel(c2, a2.double() @ b2.double()) < TOL["bfloat16"]
        assert rel(out, attention_ref(q, k, v, True, 128 ** -0.5)) < TOL["bfloat16"]
