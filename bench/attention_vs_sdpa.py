#!/usr/bin/env python3
"""bench/attention_vs_sdpa.py — tessel attention vs PyTorch SDPA (flash and cuDNN) on one GPU.

Same random bf16 inputs for every contender, in the same process; each round
runs every contender once (interleaved), timed with CUDA events; the table
shows medians. tessel is called through its C ABI, BUILD/c_api/libtessel_c.so
(api/c_api.h; an --extra-lib built from a tree older than the C ABI may be its
bench/capi/libtessel_capi.so). Each tessel result is checked against SDPA's
(relative Frobenius error) so a fast wrong kernel cannot look good.

  python3 bench/attention_vs_sdpa.py --lib BUILD/c_api/libtessel_c.so [--json out.json]
FLOPs: 4 · batch · heads · seq_q · seq_kv · head_dim, halved when causal.
"""
import argparse
import ctypes
import datetime
import json
import statistics
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

import tessel_c_abi as abi

DTYPES = {torch.float32: abi.DTYPE_F32, torch.float16: abi.DTYPE_F16, torch.bfloat16: abi.DTYPE_BF16}


def tensor(t):
    """A tessel_tensor of a CUDA tensor."""
    return abi.view(t.data_ptr(), t.shape, t.stride(), DTYPES[t.dtype], abi.DEVICE_CUDA, t.device.index or 0)


class Tessel:
    """One tessel build loaded through its C ABI (libtessel_c), or through the
    earlier bench entry point (libtessel_capi) of a tree older than it."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        self.legacy = not hasattr(lib, "tessel_attention")
        if self.legacy:
            self.lib = lib
            lib.tessel_capi_last_error.restype = lib.tessel_capi_backends.restype = ctypes.c_char_p
            i64p = ctypes.POINTER(ctypes.c_int64)
            lib.tessel_capi_attention.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, i64p, i64p,
                                                  ctypes.c_void_p, i64p, i64p, ctypes.c_void_p, i64p, ctypes.c_void_p,
                                                  i64p, ctypes.c_void_p, ctypes.c_int, ctypes.c_float, ctypes.c_void_p]
            return
        self.lib = abi.open_library(path)

    def backends(self):
        return (self.lib.tessel_capi_backends() if self.legacy else self.lib.tessel_backends()).decode()

    def attention(self, q, k, v, out, causal):
        """q, k, v, out: [b, s, h, d] CUDA tensors (any strides), on the current stream."""
        stream = torch.cuda.current_stream().cuda_stream
        if self.legacy:
            arr = lambda vals: (ctypes.c_int64 * 4)(*vals)  # noqa: E731
            rc = self.lib.tessel_capi_attention(DTYPES[q.dtype], 1, q.data_ptr(), arr(q.shape), arr(q.stride()),
                                                k.data_ptr(), arr(k.shape), arr(k.stride()), v.data_ptr(),
                                                arr(v.stride()), out.data_ptr(), arr(out.stride()), None, int(causal),
                                                0.0, stream)
            if rc != 0:
                raise RuntimeError(self.lib.tessel_capi_last_error().decode())
            return
        abi.check(self.lib, self.lib.tessel_attention(tensor(q), tensor(k), tensor(v), tensor(out), None, int(causal),
                                                      0.0, 0, 0, stream))


def time_once(fn):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--json")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--seqs", default="1024,4096,16384")
    ap.add_argument("--model-dim", type=int, default=2048, help="heads = model_dim / head_dim")
    ap.add_argument("--head-dims", default="64,128")
    ap.add_argument("--extra-lib", action="append", default=[], metavar="NAME=PATH",
                    help="another tessel build (a tuning variant) timed as one more contender; not a peer")
    a = ap.parse_args()
    lib = Tessel(a.lib)
    extras = {n: Tessel(p) for n, p in (e.split("=", 1) for e in a.extra_lib)}
    torch.manual_seed(1234)
    dev = torch.cuda.get_device_name(0)
    print(f"device: {dev}; torch {torch.__version__}; cuda {torch.version.cuda}; "
          f"date {datetime.date.today()}; tessel backends {lib.backends()}")
    rows = []
    header = (f"{'hd':>4} {'causal':>6} {'seq':>6} {'batch':>5} {'heads':>5} | {'tessel':>8} {'flash':>8} {'cudnn':>8} TFLOP/s"
              f" | {'vs best':>7} | {'err':>8}" + "".join(f" | {n:>10}" for n in extras))
    print(header)
    peers = ("flash", "cudnn")
    for hd in [int(d) for d in a.head_dims.split(",")]:
        for causal in (False, True):
            for seq in [int(s) for s in a.seqs.split(",")]:
                b, h = max(1, a.tokens // seq), a.model_dim // hd
                # [b, h, s, d] storage as SDPA likes it; tessel gets the [b, s, h, d] strided view.
                q, k, v = (torch.randn(b, h, seq, hd, device="cuda", dtype=torch.bfloat16) for _ in range(3))
                out_t = torch.full_like(q, float("nan"))
                tq, tk, tv, to = (x.transpose(1, 2) for x in (q, k, v, out_t))
                fns = {"tessel": lambda: lib.attention(tq, tk, tv, to, causal)}
                for n, xl in extras.items():
                    fns["tessel:" + n] = lambda xl=xl: xl.attention(tq, tk, tv, to, causal)
                for name, backend in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                    def run(backend=backend):
                        with sdpa_kernel([backend]):
                            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    try:
                        ref = run()
                        fns[name] = run
                    except Exception as e:  # a backend that does not take this shape
                        print(f"  ({name} unavailable for hd={hd} seq={seq}: {type(e).__name__})", file=sys.stderr)
                with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION]):
                    want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                errs = {}
                for n in [n for n in fns if n.startswith("tessel")]:
                    to.fill_(float("nan"))
                    fns[n]()
                    torch.cuda.synchronize()
                    errs[n] = ((out_t.float() - want.float()).norm() / want.float().norm()).item()
                err = errs["tessel"]
                for fn in fns.values():  # warm-up
                    fn()
                times = {n: [] for n in fns}
                for _ in range(a.rounds):
                    for n, fn in fns.items():
                        times[n].append(time_once(fn))
                flops = 4 * b * h * seq * seq * hd / (2 if causal else 1)
                tf = {n: flops / (statistics.median(t) * 1e-3) / 1e12 for n, t in times.items()}
                best = max((v for n, v in tf.items() if n in peers), default=float("nan"))
                row = dict(head_dim=hd, causal=causal, seq=seq, batch=b, heads=h, tflops=tf,
                           median_ms={n: statistics.median(t) for n, t in times.items()},
                           ratio_vs_best=tf["tessel"] / best, rel_error_vs_sdpa=err, rel_errors=errs)
                rows.append(row)
                print(f"{hd:>4} {str(causal):>6} {seq:>6} {b:>5} {h:>5} | {tf['tessel']:8.1f} "
                      f"{tf.get('flash', float('nan')):8.1f} {tf.get('cudnn', float('nan')):8.1f}         | "
                      f"{row['ratio_vs_best']:7.2f} | {err:8.2e}" +
                      "".join(f" | {tf['tessel:' + n]:6.1f} {errs['tessel:' + n]:.0e}" for n in extras), flush=True)
                del q, k, v, out_t
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(device=dev, torch=torch.__version__, cuda=torch.version.cuda,
                           date=str(datetime.date.today()), rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
