"""tessel.plot — benchmark results as a PNG: `python -m tessel.plot RESULTS.json [MORE.json ...] [-o FILE.png]`.

Contract: draws `tessel-bench --json` files (gemm, attention),
`bench/attention_vs_sdpa.py --json` files, the CPU GEMM schedule
summaries and `bench/gemm_clock.py --json` files: per shape/case the TFLOP/s (GB/s for rows marked memory-bound)
of tessel and of the peer(s) as grouped bars, and tessel / peer on a panel
below with a line at 1.0; the title from the file (device, peer, date).
Several files make one figure, a section each. Output: -o, or the first
file's name with .png beside it. Headless (Agg). matplotlib is imported
only when drawing (`import tessel` does not need it); without it, or for a
file of an unknown kind, main() prints one line and returns 1 (render()
raises PlotError).
"""
import argparse
import os
import sys

from ._draw import save
from ._model import PlotError
from ._read import load

__all__ = ["PlotError", "main", "render"]


def render(paths, out=None):
    """Draw the results files `paths` (a path or a list) into one PNG; returns its path."""
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    charts = [chart for path in paths for chart in load(path)]
    out = out or os.path.splitext(paths[0])[0] + ".png"
    save(charts, out)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tessel.plot", description=(
        "Draw benchmark results as one PNG: TFLOP/s (GB/s for memory-bound rows) of tessel and its peers per "
        "case as grouped bars, and tessel / peer below."))
    ap.add_argument("results", nargs="+", help="tessel-bench --json, bench/attention_vs_sdpa.py --json, "
                    "bench/gemm_clock.py --json or CPU GEMM schedule summary files; several make one figure, a section each")
    ap.add_argument("-o", "--output", help="PNG to write (default: the first file's name with .png)")
    args = ap.parse_args(argv)
    try:
        print(f"wrote {render(args.results, args.output)}")
    except PlotError as e:
        print(f"tessel.plot: {e}", file=sys.stderr)
        return 1
    return 0
