"""tessel.plot._sdpa — charts of a `bench/attention_vs_sdpa.py --json` file (CUDA attention vs PyTorch SDPA).

Contract: is_kind(doc) says whether doc is such a file (device, torch and
rows whose entries hold a `tflops` mapping); charts(doc) returns one Chart:
series tessel, then any `tessel:<variant>` contenders (tuning builds), then
the SDPA backends (flash, cudnn) which are the peers; one Case per row,
grouped by head_dim and causal.
"""
from ._model import Case, Chart, contenders, size_label


def is_kind(doc):
    rows = doc.get("rows") if isinstance(doc, dict) else None
    return ("device" in doc and "torch" in doc and isinstance(rows, list) and bool(rows)
            and all(isinstance(r, dict) and isinstance(r.get("tflops"), dict) for r in rows))


def charts(doc):
    rows = doc["rows"]
    ours, peers = contenders(n for row in rows for n in row["tflops"])
    chart = Chart(title=f"tessel attention vs PyTorch SDPA ({', '.join(peers)}) — {doc['device']} — "
                        f"{doc.get('date', '')}",
                  subtitle=f"bf16, [batch, heads, seq, head_dim]; torch {doc['torch']}, CUDA {doc.get('cuda', '?')}; "
                           "median of CUDA-event timings",
                  series=ours + peers, peers=peers)
    for row in rows:
        chart.cases.append(Case(group=f"d{row['head_dim']}" + (" causal" if row["causal"] else ""),
                                label=f"seq {size_label(row['seq'])}\nb{row['batch']} h{row['heads']}",
                                values=dict(row["tflops"])))
    return [chart]
