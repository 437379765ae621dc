#!/usr/bin/env python3
"""bench/sm90_trace.py — summarise a timeline of the sm90 GEMM schedule (backends/cuda/sm90_trace.hpp).

Input: the output of a tessel-bench built with -DTESSEL_SM90_TRACE=N (lines
"TRACE role event unit step clock64"; role 0 the producer thread of block 0,
roles 1 and 2 the first thread of consumer warpgroups 0 and 1). Events:
  e  producer: stage of (unit, step) empty, its loads issued right after
  S  consumer: unit started;  f: stage of step k full;  r: retire<1> after
     issuing step k returned (step k - 1's MMAs done);  R: retire<0> (the
     unit's last MMAs done);  F: epilogue done;  w, b, i: a staged epilogue
     round (step = round) found its half free, was staged, had its stores issued.
Per consumer it prints, per unit, the step period (r[k] - r[k-1], cycles:
1024 is the tensor peak for a 128 x 256 x 64 step), how long the consumer
waited for data (f[k] - r[k-1]) and the epilogue (F - R); then the loads'
latency (e -> f) and the producer's reaction to the last release (e[k] -
r[k-2] of the later consumer, 3 stages; meaningful for a 3-stage ring only);
then, per staged epilogue round, the medians of its wait for its half, its
staging and its stores' issue. The per-round events (since fecc8b2) lengthen
the epilogue they time: F - R of an fp32-C unit reads ~7,200 cycles traced
against ~4,900 before them, so compare F - R only between traces of one build.

  python3 bench/sm90_trace.py trace.txt
"""
import statistics as st
import sys
from collections import defaultdict


def main(path):
    ev = defaultdict(dict)
    for line in open(path):
        if line.startswith("TRACE"):
            _, role, e, unit, k, t = line.split()
            ev[(int(role), e)][(int(unit), int(k))] = int(t)
    if not ev:
        sys.exit(f"{path}: no TRACE lines")
    for role in (1, 2):
        r, f = ev[(role, "r")], ev[(role, "f")]
        R, F = ev[(role, "R")], ev[(role, "F")]
        print(f"consumer {role - 1}:")
        for (u, _) in sorted(x for x in R if x in F):  # a unit the recorder's capacity cut short has no F
            ks = sorted(k for (uu, k) in r if uu == u)
            per = [r[(u, k)] - r[(u, k - 1)] for k in ks if k >= 2]
            wait = [f[(u, k)] - r[(u, k - 1)] for k in ks if k >= 1]
            print(f"  unit {u:2d}: {len(ks)} steps, period median {st.median(per):6.0f} (min {min(per)}, max {max(per)}), "
                  f"full wait median {st.median(wait):5.0f}, epilogue F-R {F[(u, 0)] - R[(u, 0)]:5d}")
    e, f1, f2 = ev[(0, "e")], ev[(1, "f")], ev[(2, "f")]
    r1, r2 = ev[(1, "r")], ev[(2, "r")]
    lat = [f1[x] - e[x] for x in e if x in f1 and x[1] > 2]
    if lat:
        print(f"loads, issue -> full (consumer 0): median {st.median(lat):.0f}, min {min(lat)}")
    react = [e[(u, k)] - max(r1[(u, k - 2)], r2[(u, k - 2)]) for (u, k) in e
             if k >= 3 and (u, k - 2) in r1 and (u, k - 2) in r2]
    if react:
        print(f"producer issue after the later consumer's release (3 stages): median {st.median(react):.0f}")
    # The staged epilogue's rounds (events w, b, i of tma_storer): per round R, the
    # wait for its half (from the previous round's issue, or from R for round 0),
    # the staging (barrier, shared stores, proxy fence, barrier) and the issue of its stores.
    for role in (1, 2):
        w, b, i, R = ev[(role, "w")], ev[(role, "b")], ev[(role, "i")], ev[(role, "R")]
        if not w:
            continue
        rounds = sorted({k for (_, k) in w})
        parts = []
        for k in rounds:
            units = [u for (u, kk) in w if kk == k and (u, k) in b and (u, k) in i]
            start = [(i[(u, k - 1)] if k > 0 else R.get((u, 0))) for u in units]
            wait = [w[(u, k)] - s0 for u, s0 in zip(units, start) if s0 is not None]
            stage = [b[(u, k)] - w[(u, k)] for u in units]
            issue = [i[(u, k)] - b[(u, k)] for u in units]
            if units and wait:
                parts.append(f"r{k} {st.median(wait):.0f}/{st.median(stage):.0f}/{st.median(issue):.0f}")
        print(f"consumer {role - 1} epilogue rounds, median wait/stage/issue cycles: " + ", ".join(parts))
    skew = [f2[x] - f1[x] for x in f1 if x in f2]
    if skew:
        print(f"consumer 1 minus consumer 0, full seen: median {st.median(skew):.0f}")


if __name__ == "__main__":
    main(sys.argv[1])
