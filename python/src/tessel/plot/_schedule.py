"""tessel.plot._schedule — charts of a CPU GEMM before/after summary (bench/results/cpu_gemm_*schedule*.json).

Contract: is_kind(doc) says whether doc is such a file (`summary_<isa>`
lists whose entries hold shape, dtype, threads, after_ms_median,
before_ms_median and peer_ms_runs_after_invocations); charts(doc) returns one
Chart per summary (per ISA): series tessel (after), tessel (before) and the
peer (medians of its runs in the same invocations as `after`), TFLOP/s =
2·M·N·K / median time; the ratio is tessel (after) / peer.
"""
import statistics

from ._model import Case, Chart, shape_label
from ._tessel_bench import peer_name

_NEEDED = ("shape", "dtype", "threads", "after_ms_median", "before_ms_median", "peer_ms_runs_after_invocations")


def _summaries(doc):
    return {k[len("summary_"):]: v for k, v in doc.items() if k.startswith("summary_") and isinstance(v, list)}


def is_kind(doc):
    found = _summaries(doc) if isinstance(doc, dict) else {}
    return bool(found) and all(isinstance(e, dict) and all(k in e for k in _NEEDED)
                               for entries in found.values() for e in entries)


def _tflops(shape, ms):
    m, n, k = (int(d) for d in shape.split("x"))
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12 if ms else None


def charts(doc):
    meta = doc.get("tessel_bench_meta", {})
    peer = peer_name(meta.get("peer", "peer"))
    after, before = "tessel (after)", "tessel (before)"
    out = []
    for isa, entries in _summaries(doc).items():
        chart = Chart(title=f"{doc.get('title', 'CPU GEMM')} — {isa} — {meta.get('host_cpu', 'host CPU')}, "
                            f"{meta.get('hardware_threads', '?')} hw threads",
                      subtitle=f"M×N×K; after: {doc.get('after', '?')}"[:150], series=[after, before, peer],
                      peers=[peer])
        for e in entries:
            threads = f"{e['threads']} thread" + ("s" if e["threads"] != 1 else "")
            chart.cases.append(Case(group=f"{e['dtype']}, {threads}", label=shape_label(e["shape"]), values={
                after: _tflops(e["shape"], e["after_ms_median"]),
                before: _tflops(e["shape"], e["before_ms_median"]),
                peer: _tflops(e["shape"], statistics.median(e["peer_ms_runs_after_invocations"]))}))
        out.append(chart)
    return out
