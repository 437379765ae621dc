"""tessel.plot._clock — charts of a `bench/gemm_clock.py --json` file (sustained GEMM, tessel vs cuBLAS).

Contract: is_kind(doc) says whether doc is such a file (device, torch and
rows each naming `who`, `shape`, `dtype`, `tflops` and the sampled `mhz`);
charts(doc) returns one Chart: series tessel then cublas (the peer), one
Case per (dtype, shape), its value the median TFLOP/s over the rounds
(each round one sustained block of calls), grouped by dtype. A shape of
four numbers is batch×M×N×K.
"""
import statistics

from ._model import Case, Chart, contenders, shape_label

_ROW_KEYS = ("who", "shape", "dtype", "tflops", "mhz")


def is_kind(doc):
    if not isinstance(doc, dict):
        return False
    rows = doc.get("rows")
    return (doc.get("tool") in (None, "bench/gemm_clock.py") and "device" in doc and "torch" in doc
            and isinstance(rows, list) and bool(rows)
            and all(isinstance(r, dict) and all(k in r for k in _ROW_KEYS) for r in rows))


def _label(shape):
    dims = str(shape).split("x")
    return shape_label("x".join(dims[-3:]), dims[0] if len(dims) == 4 else 1)


def charts(doc):
    rows = doc["rows"]
    ours, peers = contenders(row["who"] for row in rows)
    chart = Chart(title=f"tessel GEMM vs {', '.join(peers)} under sustained load — {doc['device']}",
                  subtitle=f"M×N×K; torch {doc['torch']}; median over rounds of ~1.5 s blocks of back-to-back calls "
                           "(nvidia-smi clock and power sampled alongside)",
                  series=ours + peers, peers=peers)
    keys = []
    for row in rows:
        key = (row["dtype"], row["shape"])
        keys += [key] if key not in keys else []
    dtypes = list(dict.fromkeys(d for d, _ in keys))
    keys.sort(key=lambda k: dtypes.index(k[0]))  # stable: shapes keep their order within a dtype
    for dtype, shape in keys:
        mine = [r for r in rows if r["dtype"] == dtype and r["shape"] == shape]
        values = {w: statistics.median(r["tflops"] for r in mine if r["who"] == w)
                  for w in ours + peers if any(r["who"] == w for r in mine)}
        chart.cases.append(Case(group=dtype, label=_label(shape), values=values))
    return [chart]
