"""bench/python_call_overhead.py — the time of one 1×1×1 fp32 GEMM called from Python, and of its pieces.

    python bench/python_call_overhead.py [--lib BUILD/c_api/libtessel_c.so] [--samples N] [--calls N]
    python bench/python_call_overhead.py --profile N    # cProfile of N calls of tessel.gemm(a, b, c=c, threads=1)

Times, per call (median, min and 90th percentile over samples of `calls` back-to-back calls, perf_counter_ns
around each sample): tessel.gemm on NumPy arrays (threads=1; a new result, then a preallocated c=), the
extension function alone (DLPack import, views, the C++ call), the Python-side argument handling alone, the
result allocation, one NumPy __dlpack__ export, one NumPy dtype.name, NumPy's own a @ b, and with --lib
tessel_gemm through the C ABI by ctypes. bench/call_overhead.cpp is the C++ side (tessel::gemm on host
tensors). Needs tessel, numpy.
"""
import argparse
import cProfile
import ctypes
import pstats
import platform
import statistics
import time

import numpy as np

import tessel
from tessel import _arrays, _options, _tessel


def timed(what, fn, samples, calls):
    for _ in range(calls * 10):  # warm-up
        fn()
    per_call = []
    for _ in range(samples):
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        per_call.append((time.perf_counter_ns() - start) / calls)
    per_call.sort()
    print(f"{what:<52} median {statistics.median(per_call):9.1f} ns  min {per_call[0]:9.1f} ns  "
          f"p90 {per_call[len(per_call) * 9 // 10]:9.1f} ns", flush=True)


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("device_kind", ctypes.c_int32), ("device_index", ctypes.c_int32)]


def c_abi(lib_path, a, b, c):
    """tessel_gemm through ctypes: (call with tensors built once, call building them per call)."""
    lib = ctypes.CDLL(lib_path)
    ptr = ctypes.POINTER(Tensor)
    lib.tessel_gemm.argtypes = [ptr, ptr, ptr, ctypes.c_float, ctypes.c_float, ctypes.c_int32, ctypes.c_int32,
                                ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p]
    lib.tessel_gemm.restype = ctypes.c_int32
    shape = (ctypes.c_int64 * 2)(1, 1)

    def tensor(x):
        return Tensor(x.ctypes.data, shape, None, 0, 2, 0, 0)

    ta, tb, tc = (ctypes.byref(tensor(x)) for x in (a, b, c))
    return (lambda: lib.tessel_gemm(ta, tb, tc, 1.0, 0.0, 0, 0, 0, 1, None),
            lambda: lib.tessel_gemm(ctypes.byref(tensor(a)), ctypes.byref(tensor(b)), ctypes.byref(tensor(c)),
                                    1.0, 0.0, 0, 0, 0, 1, None))


def argument_handling(a, b, c):
    """What tessel.gemm does in Python before the extension call, with c given (_gemm.py)."""
    op = "tessel.gemm"
    _options.number(1.0, op, "alpha"), _options.number(0.0, op, "beta")
    _arrays.importable(a, op, "a"), _arrays.importable(b, op, "b"), _arrays.importable(c, op, "c")
    _arrays.importable(c, op, "c")
    _options.threads(1, op), _options.stream(None, op, a), _options.portable("fastest", op)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", help="libtessel_c.so, for the ctypes rows")
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--profile", type=int, metavar="N", help="cProfile N calls instead (top 15 by own time)")
    args = ap.parse_args()
    s, n = args.samples, args.calls
    a, b = np.full((1, 1), 1.5, np.float32), np.full((1, 1), 2.0, np.float32)
    c = np.zeros((1, 1), np.float32)
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(lambda: [tessel.gemm(a, b, c=c, threads=1) for _ in range(args.profile)])
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)
        return
    print(f"python {platform.python_version()}, numpy {np.__version__}, tessel {tessel.__version__}, "
          f"cpu_isa {tessel.cpu_isa()}, {platform.machine()}; {s} samples x {n} calls each")
    timed("tessel.gemm(a, b, threads=1)", lambda: tessel.gemm(a, b, threads=1), s, n)
    timed("tessel.gemm(a, b, c=c, threads=1)", lambda: tessel.gemm(a, b, c=c, threads=1), s, n)
    timed("  _tessel.gemm (extension: DLPack, views, C++ call)",
          lambda: _tessel.gemm(a, b, c, 0, 1.0, 0.0, False, False, 1, 0, False), s, n)
    timed("  Python argument handling (c given)", lambda: argument_handling(a, b, c), s, n)
    timed("  result allocation (empty_like_kind)",
          lambda: _arrays.empty_like_kind(a, (1, 1), "float32", "tessel.gemm", "c"), s, n)
    timed("  one a.__dlpack__() export", a.__dlpack__, s, n)
    timed("  one a.dtype.name (tessel reads dtype.type.__name__ instead)", lambda: a.dtype.name, s, n)
    timed("numpy a @ b (reference)", lambda: a @ b, s, n)
    timed("numpy np.matmul(a, b, out=c) (reference)", lambda: np.matmul(a, b, out=c), s, n)
    if args.lib:
        once, per_call = c_abi(args.lib, a, b, c)
        timed("ctypes tessel_gemm (C ABI), tensors built once", once, s, n)
        timed("ctypes tessel_gemm (C ABI), tensors built per call", per_call, s, n)
    assert c[0, 0] == 3.0, c


if __name__ == "__main__":
    main()
