#!/usr/bin/env python3
"""bench/cpu_vs_torch.py — tessel's CPU GEMM and attention against PyTorch's CPU kernels, in one process.

The peers are what PyTorch brings on an Intel host: torch.mm on fp32 runs MKL's
sgemm, on bf16 oneDNN's matmul (AMX where the CPU has it); attention runs
F.scaled_dot_product_attention's CPU flash kernel. tessel is called through
its C ABI (BUILD/c_api/libtessel_c.so, api/c_api.h) on the same host tensors.

Per row: fresh random inputs, rotated through enough sets to span --rotate-mib
(so the timed calls do not find their operands in the last-level cache); every
round times each contender once in turn (interleaved, the order flipped every
round; the second contender's calls half the rotated sets away from the first's),
a sample batching calls until it takes --min-sample-ms; the table shows medians. Outputs are poisoned
(NaN) before tessel writes them, and each contender's result is checked against
a float64 reference (relative Frobenius error), so a fast wrong answer cannot
look good. Threads: tessel's `threads` argument and torch.set_num_threads get
the same count; pin the process (taskset) so both use the same cores.

  taskset -c 0 python3 bench/cpu_vs_torch.py --lib BUILD/c_api/libtessel_c.so --threads 1
FLOPs: GEMM 2·M·N·K; attention 4 · batch · heads · seq² · head_dim, halved when causal.
"""
import argparse
import datetime
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import tessel_c_abi as abi

DTYPES = {torch.float32: abi.DTYPE_F32, torch.float16: abi.DTYPE_F16, torch.bfloat16: abi.DTYPE_BF16}
NAMES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def view(t):
    """A host tessel_tensor of a CPU tensor."""
    return abi.view(t.data_ptr(), t.shape, t.stride(), DTYPES[t.dtype], abi.DEVICE_HOST)


class Tessel:
    def __init__(self, path, threads):
        self.lib = abi.open_library(path)
        self.threads = threads

    def gemm(self, a, b, c):
        abi.check(self.lib, self.lib.tessel_gemm(view(a), view(b), view(c), 1.0, 0.0, 0, 0, 0, self.threads, None))

    def attention(self, q, k, v, out, causal):
        """q, k, v, out: [b, s, h, d] host tensors (any strides, head_dim contiguous)."""
        abi.check(self.lib, self.lib.tessel_attention(view(q), view(k), view(v), view(out), None, int(causal), 0.0,
                                                      0, self.threads, None))


def sample(fn, min_ms):
    """Seconds per call: calls batched until one sample takes min_ms."""
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt * 1e3 >= min_ms or n >= 1 << 12:
            return dt / n
        n *= 2


def tolerance(dt):
    """The largest relative error of a tessel result: tessel-bench's bound, 1e-3 + the output type's rounding
    (bf16 2^-8, fp16 2^-11), and 1e-4 for fp32."""
    return {torch.float32: 1e-4, torch.bfloat16: 1e-3 + 2.0 ** -8, torch.float16: 1e-3 + 2.0 ** -11}[dt]


def rel_err(x, ref):
    return float(torch.linalg.norm((x.double() - ref).flatten()) / torch.linalg.norm(ref.flatten()))


def time_row(fns, sets, rounds, min_ms):
    """fns: name -> fn(set index). Interleaved rounds, the order flipped every round, each call on the next input
    set; the second contender's calls half the sets away from the first's, so that neither reads inputs the
    other just read (as tessel-bench: tools/bench_ops.hpp, rotated_set); median seconds."""
    times = {n: [] for n in fns}
    counter = {n: 0 for n in fns}

    def rotating(name, fn, offset):
        def call():
            fn((counter[name] + offset) % sets)
            counter[name] += 1
        return call
    calls = [(n, rotating(n, f, j * (sets // 2))) for j, (n, f) in enumerate(fns.items())]
    for _, c in calls:  # warm-up: threads started, packs allocated
        c()
    for r in range(rounds):
        for n, c in (calls if r % 2 == 0 else calls[::-1]):
            times[n].append(sample(c, min_ms))
    return {n: statistics.median(t) for n, t in times.items()}


def report(out_rows, a, op, name, dt, shape, flop, med, err_t, err_p, peer, extra=None):
    """One row: both contenders' GFLOP/s from their median seconds, the ratio, tessel's error against the bound."""
    row = {"op": op, "dtype": name, "shape": shape, "threads": a.threads, **(extra or {}),
           "tessel_gflops": flop / med["tessel"] / 1e9, "peer_gflops": flop / med["torch"] / 1e9, "peer": peer,
           "err_tessel": err_t, "err_peer": err_p}
    row["ratio"] = row["tessel_gflops"] / row["peer_gflops"]
    row["ok"] = err_t <= tolerance(dt)
    out_rows.append(row)
    tail = "".join(f" {k} {int(v)}" for k, v in (extra or {}).items())
    label = {"gemm": "gemm", "attention": "attn"}[op]
    print(f"{label} {name:>4} thr {a.threads:>2} {shape:>20}{tail} tessel {row['tessel_gflops']:8.1f} "
          f"peer {row['peer_gflops']:8.1f} GFLOP/s ratio {row['ratio']:.3f} err {err_t:.1e} / {err_p:.1e} "
          f"{'ok' if row['ok'] else 'FAIL'}", flush=True)


def operand(rows, cols, dt, transposed):
    """A rows × cols matrix, row-major, or (transposed) the transposed view of a cols × rows one."""
    return torch.randn(cols, rows, dtype=dt).t() if transposed else torch.randn(rows, cols, dtype=dt)


def gemm_rows(lib, a, out_rows):
    for name in a.dtype.split(","):
        dt = NAMES[name]
        for mnk, layout in ((s, lay) for s in a.shapes.split(",") for lay in a.layouts.split(",")):
            m, n, k = (int(x) for x in (mnk.split("x") if "x" in mnk else (mnk,) * 3))
            per_set = (m * k + k * n + m * n) * torch.tensor([], dtype=dt).element_size()
            sets = max(1, min(64, (a.rotate_mib << 20) // per_set))
            A = [operand(m, k, dt, layout[0] == "t") for _ in range(sets)]
            B = [operand(k, n, dt, layout[1] == "t") for _ in range(sets)]
            C = [torch.full((m, n), float("nan"), dtype=dt) for _ in range(sets)]
            ref = A[0].double() @ B[0].double()
            lib.gemm(A[0], B[0], C[0])
            err_t, err_p = rel_err(C[0], ref), rel_err(torch.mm(A[0], B[0]), ref)
            med = time_row({"tessel": lambda i: lib.gemm(A[i], B[i], C[i]),
                            "torch": lambda i: torch.mm(A[i], B[i], out=C[i])}, sets, a.rounds, a.min_sample_ms)
            peer = "torch.mm (MKL sgemm)" if dt == torch.float32 else "torch.mm (oneDNN)"
            shape = f"{m}x{n}x{k}" + ("" if layout == "nn" else f" {layout}")
            report(out_rows, a, "gemm", name, dt, shape, 2.0 * m * n * k, med, err_t, err_p, peer)


def attention_rows(lib, a, out_rows):
    for name in a.attention_dtype.split(","):
        dt = NAMES[name]
        for seq in (int(s) for s in a.seqs.split(",")):
            for causal in (False, True):
                b, h, d = max(1, a.tokens // seq), a.heads, a.head_dim
                # [b, h, s, d] storage as SDPA likes it; tessel gets the [b, s, h, d] strided view.
                per_set = 4 * b * h * seq * d * torch.tensor([], dtype=dt).element_size()
                sets = max(1, min(16, (a.rotate_mib << 20) // per_set))
                Q, K, V = ([torch.randn(b, h, seq, d, dtype=dt) for _ in range(sets)] for _ in range(3))
                O = [torch.full_like(Q[0], float("nan")) for _ in range(sets)]
                tv = lambda x: x.transpose(1, 2)  # noqa: E731
                sdpa = lambda i: F.scaled_dot_product_attention(Q[i], K[i], V[i], is_causal=causal)  # noqa: E731
                lib.attention(tv(Q[0]), tv(K[0]), tv(V[0]), tv(O[0]), causal)
                ref = F.scaled_dot_product_attention(Q[0].double(), K[0].double(), V[0].double(), is_causal=causal)
                err_t, err_p = rel_err(O[0], ref), rel_err(sdpa(0), ref)
                med = time_row({"tessel": lambda i: lib.attention(tv(Q[i]), tv(K[i]), tv(V[i]), tv(O[i]), causal),
                                "torch": sdpa}, sets, a.rounds, a.min_sample_ms)
                report(out_rows, a, "attention", name, dt, f"b{b} h{h} s{seq} d{d}",
                       4.0 * b * h * seq * seq * d / (2 if causal else 1), med, err_t, err_p,
                       "F.scaled_dot_product_attention (CPU)", {"causal": causal})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="libtessel_c.so of a build with the cpu backend")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--dtype", default="fp32,bf16", help="GEMM input types (C in the input type)")
    ap.add_argument("--shapes", default="512,1024,2048,4096", help="N (N³) or MxNxK, comma-separated")
    ap.add_argument("--layouts", default="nn", help="GEMM operand layouts, comma-separated: nn, tn, nt, tt "
                    "(t: that operand is the transposed view of a row-major matrix, as x.t() in PyTorch)")
    ap.add_argument("--attention-dtype", default="fp32,bf16", help="attention types; '' for none")
    ap.add_argument("--seqs", default="1024,4096")
    ap.add_argument("--tokens", type=int, default=4096, help="batch = tokens / seq")
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--min-sample-ms", type=float, default=20.0)
    ap.add_argument("--rotate-mib", type=int, default=256)
    a = ap.parse_args()
    torch.manual_seed(20261129)
    torch.set_num_threads(a.threads)
    lib = Tessel(a.lib, a.threads)
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    flags = next((ln.split(":", 1)[1].split() for ln in open("/proc/cpuinfo") if ln.startswith("flags")), [])
    simd = " ".join(f for f in flags if f.startswith(("avx512f", "avx512_bf16", "amx")))
    print(f"host: {cpu}; {simd}; affinity {sorted(os.sched_getaffinity(0))}; torch {torch.__version__} "
          f"({torch.backends.mkldnn.is_available() and 'oneDNN' or 'no oneDNN'}, "
          f"{torch.backends.mkl.is_available() and 'MKL' or 'no MKL'}); tessel backends "
          f"{lib.lib.tessel_backends().decode()}; threads {a.threads}; date {datetime.date.today()}", flush=True)
    rows = []
    if a.dtype:
        gemm_rows(lib, a, rows)
    if a.attention_dtype:
        attention_rows(lib, a, rows)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
