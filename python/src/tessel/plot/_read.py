"""tessel.plot._read — a results file in, its charts out, whatever kind it is.

Contract: load(path) -> [Chart]. Kinds: `tessel-bench --json` (gemm,
attention), `bench/attention_vs_sdpa.py --json`, the CPU GEMM schedule
summaries, `bench/gemm_clock.py --json`. A file that cannot be read, is not JSON, is of none of these
kinds or has no rows raises PlotError naming the file (and the kinds known).
"""
import json

from . import _clock, _schedule, _sdpa, _tessel_bench
from ._model import PlotError

KINDS = (
    ("tessel-bench --json (meta.tool = tessel-bench)", _tessel_bench),
    ("bench/attention_vs_sdpa.py --json (device, torch, rows[].tflops)", _sdpa),
    ("CPU GEMM schedule summary (summary_<isa> lists)", _schedule),
    ("bench/gemm_clock.py --json (device, torch, rows[].who/mhz)", _clock),
)


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise PlotError(f"{path}: cannot read: {e.strerror or e}") from None
    except ValueError as e:
        raise PlotError(f"{path}: not JSON: {e}") from None
    for _, kind in KINDS:
        if kind.is_kind(doc):
            try:
                charts = kind.charts(doc)
            except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
                if isinstance(e, PlotError):
                    raise PlotError(f"{path}: {e}") from None
                raise PlotError(f"{path}: malformed row: {type(e).__name__}: {e}") from None
            if not any(chart.cases for chart in charts):
                raise PlotError(f"{path}: no rows to draw")
            return charts
    raise PlotError(f"{path}: not a results file tessel.plot knows; it draws "
                    + "; ".join(name for name, _ in KINDS))
