"""tessel.plot._tessel_bench — charts of a `tessel-bench --json` file (gemm or attention).

Contract: is_kind(doc) says whether doc is such a file (meta.tool ==
"tessel-bench" and a rows list); charts(doc) returns one Chart: series
"tessel" and the peer (named from meta.peer: cuBLAS, OpenBLAS, ...), one
Case per row, grouped by dtype (and threads where the file has several).
A row marked memory-bound (`"memory_bound": true` or `"bound": "memory"`)
is drawn in GB/s: `<who>_gbps`, or `bytes` over `<who>_ms`. An op other
than gemm and attention raises PlotError.
"""
import re

from ._model import Case, Chart, PlotError, shape_label, size_label, varies


def is_kind(doc):
    return (isinstance(doc, dict) and isinstance(doc.get("meta"), dict)
            and doc["meta"].get("tool") == "tessel-bench" and isinstance(doc.get("rows"), list))


def peer_name(peer):
    """'cuBLAS 13.1.0, CUDA runtime ...' -> 'cuBLAS 13.1.0'; 'unfused attention: ...; OpenBLAS 0.3.21 ...' ->
    'unfused OpenBLAS 0.3.21'."""
    found = re.search(r"\b(\w*BLAS\w*|cuDNN|oneDNN|MKL|rocBLAS|hipBLASLt)\s+v?[\d.]+\d", peer or "")
    name = found.group(0) if found else (peer or "peer").split(",")[0].split(";")[0][:40]
    return f"unfused {name}" if (peer or "").startswith("unfused") else name


def throughput(row, who):
    """(value, unit) of `who` ('tessel' or 'peer') in this row."""
    if row.get("memory_bound") is True or row.get("bound") == "memory":
        if row.get(f"{who}_gbps") is not None:
            return row[f"{who}_gbps"], "GB/s"
        ms, nbytes = row.get(f"{who}_ms"), row.get("bytes")
        return (nbytes / (ms * 1e-3) / 1e9 if ms and nbytes else None), "GB/s"
    return row.get(f"{who}_tflops"), "TFLOP/s"


def _dtype_group(row, rows):
    out = row.get("out_dtype") or row.get("dtype_out") or row["dtype"]
    text = row["dtype"] if out == row["dtype"] else f"{row['dtype']}→{out}"
    if varies(rows, "threads"):
        text += f", {row['threads']} thread" + ("s" if row["threads"] != 1 else "")
    return text


def _gemm_label(row, rows):
    label = shape_label(row["shape"], row.get("batch", 1))
    return label + (f"\n{row['trans']}" if varies(rows, "trans") else "")


def _attention_label(row, rows):
    q, kv = row["q_len"], row["kv_len"]
    seq = size_label(q) if q == kv else f"{size_label(q)}/{size_label(kv)}"
    heads = f" h{row['heads_label']}" if varies(rows, "heads_label") else ""
    return f"{seq}{heads}\nd{row['head_dim']}" + (" causal" if row.get("causal") else "")


def _device(meta):
    if str(meta.get("device", "")).startswith("host"):
        return (f"{meta.get('host_cpu', 'host CPU')}, {meta.get('hardware_threads', '?')} hw threads, "
                f"{meta.get('tessel_cpu_isa', '')}").rstrip(", ")
    return meta.get("device_description") or meta.get("device", "?")


def charts(doc):
    meta, rows = doc["meta"], doc["rows"]
    op = meta.get("op")
    label = {"gemm": _gemm_label, "attention": _attention_label}.get(op)
    if label is None:
        raise PlotError(f"tessel-bench op {op!r}: tessel.plot draws gemm and attention files")
    peer = peer_name(meta.get("peer"))
    sweep = " (transposes)" if varies(rows, "trans") else " (strided batches)" if any(
        (r.get("batch") or 1) > 1 for r in rows) else ""
    chart = Chart(title=f"tessel {op}{sweep} vs {peer} — {_device(meta)} — {str(meta.get('date_utc', ''))[:10]}",
                  subtitle=("M×N×K; " if op == "gemm" else "")
                  + f"tessel-bench {meta.get('tessel_version', '')}, {meta.get('compiler', '')}; "
                  f"{meta.get('timing', 'medians')}",
                  series=["tessel", peer], peers=[peer])
    for row in rows:
        mine, unit = throughput(row, "tessel")
        theirs, _ = throughput(row, "peer")
        chart.cases.append(Case(group=_dtype_group(row, rows), label=label(row, rows),
                                values={"tessel": mine, peer: theirs}, unit=unit))
    return [chart]
