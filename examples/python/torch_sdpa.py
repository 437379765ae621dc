# examples/python/torch_sdpa.py — the README's PyTorch example, run as written by python/tests/test_torch.py.
import torch, tessel.torch
dev = "cuda" if torch.cuda.is_available() else "cpu"
q, k, v = (torch.randn(1, 8, 512, 64, device=dev, dtype=torch.bfloat16) for _ in range(3))  # [batch, heads, seq, dim]
out = tessel.torch.scaled_dot_product_attention(q, k, v, is_causal=True)      # for F.scaled_dot_product_attention
y = tessel.torch.gemm(out.flatten(0, 2), torch.randn(256, 64, device=dev, dtype=torch.bfloat16), trans_b=True)  # x·Wᵀ
