#!/usr/bin/env python3
"""bench/attention_profile.py — one attention shape for a profiler: tessel, then cuDNN (PyTorch SDPA).

Runs each contender `--calls` times on the same fresh random bf16 inputs ([batch, seq, heads, head_dim]
views of SDPA's [b, h, s, d] storage, as bench/attention_vs_sdpa.py), so that ncu can capture the
kernels of both by name (device.sh step ncuattn), and checks tessel's output against SDPA's.

  ncu -k regex:'attention_stages|sdpa|fmha|cudnn' -c 4 python3 bench/attention_profile.py \
      --lib BUILD/c_api/libtessel_c.so --head-dim 128 --seq 4096 --batch 4
"""
import argparse

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

from attention_vs_sdpa import Tessel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--model-dim", type=int, default=2048, help="heads = model_dim / head_dim")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--calls", type=int, default=2)
    a = ap.parse_args()
    lib = Tessel(a.lib)
    torch.manual_seed(1234)
    h = a.model_dim // a.head_dim
    q, k, v = (torch.randn(a.batch, h, a.seq, a.head_dim, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    out = torch.full_like(q, float("nan"))
    views = [x.transpose(1, 2) for x in (q, k, v, out)]
    for _ in range(a.calls):
        lib.attention(*views, a.causal)
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        for _ in range(a.calls):
            want = F.scaled_dot_product_attention(q, k, v, is_causal=a.causal)
    torch.cuda.synchronize()
    err = ((out.float() - want.float()).norm() / want.float().norm()).item()
    print(f"hd {a.head_dim} seq {a.seq} batch {a.batch} heads {h} causal {a.causal}: tessel vs cuDNN rel. error {err:.2e}")
    if not err < 1e-2:
        raise SystemExit("tessel's output does not match cuDNN's")


if __name__ == "__main__":
    main()
