#!/usr/bin/env python3
"""bench/gemm_clock.py — tessel GEMM against cuBLAS under sustained load: time, SM clock and power.

The H100 runs at its power cap, so a kernel that spends less energy per FLOP
holds a higher clock. This script tells the two apart: each contender runs
alone for a block of --seconds (calls back to back, inputs rotated over sets
spanning >= 256 MiB), blocks interleaved over --rounds, while nvidia-smi
samples the SM clock and the board power every 50 ms. Per block it reports
ms per call, TFLOP/s, the mean SM clock and power over the block (its first
0.2 s left out), and kcycles per call = ms x MHz: the work a call takes in
SM cycles, whatever the clock. If tessel needs no more cycles than cuBLAS but
more time, the difference is the clock (power); otherwise it is the schedule.

tessel is called through its C ABI (BUILD/c_api/libtessel_c.so); cuBLAS through
torch.matmul (PyTorch picks cublas or cublasLt). Each tessel result is checked
against torch's before timing (relative Frobenius error).

  python3 bench/gemm_clock.py --lib BUILD/c_api/libtessel_c.so [--shapes 4096x4096x4096,16x2048x2048x2048]
      [--dtypes bf16,fp16] [--seconds 1.5] [--rounds 3] [--json out.json]
Shapes: MxNxK, or BxMxNxK for a strided batch; C in the input type, A and B row-major (nn).
"""
import argparse
import ctypes
import datetime
import json
import statistics
import subprocess
import sys
import threading
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from attention_vs_sdpa import Tessel, TesselTensor, tensor  # noqa: E402  (the C ABI's ctypes mirror)

DT = {"bf16": torch.bfloat16, "fp16": torch.float16}


class Sampler:
    """nvidia-smi every 50 ms: (unix time, SM MHz, board W) per line, stamped by nvidia-smi itself."""

    def __init__(self):
        self.samples, self.proc = [], subprocess.Popen(
            ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu", "--format=csv,noheader,nounits",
             "-lms", "50", "-i", "0"], stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            parts = [p.strip() for p in line.split(",")]
            try:
                ts = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
                self.samples.append((ts, float(parts[1]), float(parts[2]), float(parts[3])))
            except (ValueError, IndexError):
                pass

    def window(self, t0, t1):
        got = [s for s in list(self.samples) if t0 <= s[0] <= t1]
        if not got:
            return float("nan"), float("nan"), float("nan"), 0
        return (statistics.mean(s[1] for s in got), statistics.mean(s[2] for s in got),
                max(s[3] for s in got), len(got))

    def stop(self):
        self.proc.terminate()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--shapes", default="4096x4096x4096,16x2048x2048x2048")
    ap.add_argument("--dtypes", default="bf16,fp16")
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    lib = Tessel(a.lib)
    ptr = ctypes.POINTER(TesselTensor)
    lib.lib.tessel_gemm.restype = ctypes.c_int32
    lib.lib.tessel_gemm.argtypes = [ptr, ptr, ptr, ctypes.c_float, ctypes.c_float, ctypes.c_int32, ctypes.c_int32,
                                    ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p]
    torch.manual_seed(20261124)
    sampler = Sampler()
    time.sleep(0.5)
    if not sampler.samples:
        sys.exit("nvidia-smi gave no samples")
    print(f"device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; date {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%dT%H:%MZ}")
    print(f"{'shape':>22} {'dtype':>5} {'who':>7} {'round':>5} | {'ms':>8} {'TFLOP/s':>8} {'MHz':>6} {'W':>6} {'maxC':>4}"
          f" {'kcyc/call':>9} {'n':>3}")
    rows = []
    for shape in a.shapes.split(","):
        dims = [int(x) for x in shape.split("x")]
        batch, (m, n, k) = (dims[0], dims[1:]) if len(dims) == 4 else (1, dims)
        flops = 2.0 * batch * m * n * k
        for dname in a.dtypes.split(","):
            dt = DT[dname]
            lead = (batch,) if batch > 1 else ()
            per_set = (m * k + k * n + 2 * m * n) * batch * 2
            sets = max(1, min(16, -(-256 * 2**20 // per_set)))
            A = [torch.empty(*lead, m, k, device="cuda", dtype=dt).uniform_(-1, 1) for _ in range(sets)]
            B = [torch.empty(*lead, k, n, device="cuda", dtype=dt).uniform_(-1, 1) for _ in range(sets)]
            Ct = [torch.full((*lead, m, n), float("nan"), device="cuda", dtype=dt) for _ in range(sets)]
            Cp = [torch.empty(*lead, m, n, device="cuda", dtype=dt) for _ in range(sets)]
            views = [(tensor(A[i]), tensor(B[i]), tensor(Ct[i])) for i in range(sets)]
            stream = torch.cuda.current_stream().cuda_stream

            def run_tessel(i):
                va, vb, vc = views[i]
                rc = lib.lib.tessel_gemm(va, vb, vc, 1.0, 0.0, 0, 0, 0, 0, stream)
                if rc != 0:
                    raise RuntimeError(lib.lib.tessel_last_error().decode())

            def run_cublas(i):
                torch.matmul(A[i], B[i], out=Cp[i])

            for i in range(sets):
                run_tessel(i)
                run_cublas(i)
            torch.cuda.synchronize()
            err = max(((Ct[i].float() - Cp[i].float()).norm() / Cp[i].float().norm()).item() for i in range(sets))
            if not err < 1e-2:
                sys.exit(f"{shape} {dname}: tessel differs from torch.matmul (relative error {err})")
            fns = {"tessel": run_tessel, "cublas": run_cublas}
            calls = {}
            for who, fn in fns.items():  # calibrate: calls per block
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for j in range(20):
                    fn(j % sets)
                end.record()
                end.synchronize()
                calls[who] = max(20, int(a.seconds * 1e3 / (start.elapsed_time(end) / 20)))
            for r in range(a.rounds):
                order = list(fns) if r % 2 == 0 else list(fns)[::-1]
                for who in order:
                    fn = fns[who]
                    torch.cuda.synchronize()
                    time.sleep(0.3)  # idle between blocks: each starts from the same thermal/power state
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    t0 = time.time()
                    start.record()
                    for j in range(calls[who]):
                        fn(j % sets)
                    end.record()
                    end.synchronize()
                    t1 = time.time()
                    ms = start.elapsed_time(end) / calls[who]
                    mhz, watts, temp, ns = sampler.window(t0 + 0.2, t1)
                    row = dict(shape=shape, dtype=dname, who=who, round=r, ms=ms, tflops=flops / ms / 1e9, mhz=mhz,
                               watts=watts, max_temp=temp, kcycles=ms * mhz, samples=ns, calls=calls[who], sets=sets,
                               err_vs_torch=err)
                    rows.append(row)
                    print(f"{shape:>22} {dname:>5} {who:>7} {r:>5} | {ms:8.4f} {row['tflops']:8.1f} {mhz:6.0f} {watts:6.1f}"
                          f" {temp:4.0f} {row['kcycles']:9.1f} {ns:3d}", flush=True)
            for who in fns:
                mine = [x for x in rows if x["shape"] == shape and x["dtype"] == dname and x["who"] == who]
                print(f"{shape:>22} {dname:>5} {who:>7} {'med':>5} | {statistics.median(x['ms'] for x in mine):8.4f}"
                      f" {statistics.median(x['tflops'] for x in mine):8.1f} {statistics.median(x['mhz'] for x in mine):6.0f}"
                      f" {statistics.median(x['watts'] for x in mine):6.1f} {'':>4}"
                      f" {statistics.median(x['kcycles'] for x in mine):9.1f}", flush=True)
            del A, B, Ct, Cp, views
            torch.cuda.empty_cache()
    sampler.stop()
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"tool": "bench/gemm_clock.py", "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
