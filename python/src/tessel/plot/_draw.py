"""tessel.plot._draw — charts to a PNG with matplotlib (Agg, no display).

Contract: save(charts, out) draws each Chart as one section of one figure
(a chart of more than _MOST cases as several rows): its title, grouped bars
of every series per case (one bar panel per unit, TFLOP/s or GB/s), and
below them tessel / peer per case with a line at 1.0; writes a PNG to `out`.
matplotlib is imported here only, when called, and drawn through its Figure
class (Agg, no pyplot: headless, the caller's backend untouched); if it is
missing PlotError says how to install it.
"""
import itertools

from ._model import PlotError, split

_MOST = 20  # cases per row of a figure at most; a longer chart is cut into rows between groups
_GAP = 0.6  # extra x space between groups, in case widths
_TESSEL = "#1f5fa8"
_VARIANTS = ["#6d9eeb", "#3d85c6", "#9fc5e8", "#0b3d75"]  # other tessel builds: tessel:<variant>, tessel (before)
_PEERS = ["#e07b39", "#6aa84f", "#8e7cc3", "#c9a227", "#999999", "#d45087"]


def _figure_class():
    """matplotlib's Figure: drawn without pyplot, so no display and no change to the caller's backend."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotError("tessel.plot needs matplotlib, which is not installed: pip install matplotlib") from None
    return Figure


def _positions(chart):
    xs, groups, x = [], [], 0.0
    for i, case in enumerate(chart.cases):
        if i and case.group != chart.cases[i - 1].group:
            x += _GAP
        if not groups or groups[-1][0] != case.group:
            groups.append([case.group, x, x])
        groups[-1][2] = x
        xs.append(x)
        x += 1.0
    return xs, groups


def _colors(chart):
    peers, variants = itertools.cycle(_PEERS), itertools.cycle(_VARIANTS)
    colors = {name: next(variants if name.startswith("tessel") else peers) for name in chart.series[1:]}
    colors[chart.series[0]] = _TESSEL
    return colors


def _group_marks(ax, groups, heading):
    for i, (name, lo, hi) in enumerate(groups):
        if i:
            ax.axvline(lo - (1 + _GAP) / 2, color="#bbbbbb", lw=0.8)
        if heading:
            ax.text((lo + hi) / 2, 1.01, name, transform=ax.get_xaxis_transform(), ha="center", va="bottom",
                    fontsize=9, fontweight="bold")


def _bars(ax, chart, unit, xs, groups, colors):
    width = 0.8 / len(chart.series)
    for j, name in enumerate(chart.series):
        pts = [(x + (j - (len(chart.series) - 1) / 2) * width, c.values.get(name))
               for x, c in zip(xs, chart.cases) if c.unit == unit]
        pts = [(x, v) for x, v in pts if v is not None]
        if pts:
            ax.bar([x for x, _ in pts], [v for _, v in pts], width, label=name, color=colors[name])
    ax.set_ylabel(unit)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(fontsize=8, ncol=len(chart.series), loc="lower center", bbox_to_anchor=(0.5, 1.08), frameon=False)
    _group_marks(ax, groups, heading=True)


def _ratios(ax, chart, xs, groups, colors):
    for peer in chart.peers:
        for _, lo, hi in groups:
            pts = [(x, chart.ratio(c, peer)) for x, c in zip(xs, chart.cases) if lo <= x <= hi]
            pts = [(x, r) for x, r in pts if r is not None]
            if pts:
                ax.plot([x for x, _ in pts], [r for _, r in pts], "o-", color=colors[peer], ms=4, lw=1.2,
                        label=f"tessel / {peer}")
    ax.axhline(1.0, color="black", lw=1, ls="--")
    ax.set_ylabel("tessel / peer")
    lo, hi = ax.get_ylim()
    ax.set_ylim(min(lo, 0.9), max(hi, 1.1))
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    _dedupe_legend(ax)
    _group_marks(ax, groups, heading=False)
    ax.set_xticks(xs, [c.label for c in chart.cases], fontsize=8)


def _dedupe_legend(ax):
    """One legend entry per peer (its line is drawn once per group)."""
    first = {}
    for handle, label in zip(*ax.get_legend_handles_labels()):
        first.setdefault(label, handle)
    if first:
        ax.legend(first.values(), first.keys(), fontsize=8, loc="best")


def _section(fig, chart):
    units = [u for u in ("TFLOP/s", "GB/s") if any(c.unit == u for c in chart.cases)]
    axes = fig.subplots(len(units) + 1, 1, sharex=True, height_ratios=[3] * len(units) + [1.7])
    xs, groups = _positions(chart)
    colors = _colors(chart)
    for ax, unit in zip(axes, units):
        _bars(ax, chart, unit, xs, groups, colors)
    _ratios(axes[-1], chart, xs, groups, colors)
    if chart.title:
        fig.suptitle(chart.title, fontsize=11, fontweight="bold")
    if chart.subtitle:
        fig.supxlabel(chart.subtitle, fontsize=7, color="#555555")


def save(charts, out):
    figure = _figure_class()
    charts = [part for chart in charts for part in split(chart, _MOST)]
    cases = max(len(c.cases) for c in charts)
    bars = max(len(c.series) for c in charts)
    width = min(26.0, max(9.0, 1.2 + cases * (0.16 * bars + 0.3)))
    heights = [5.2 if any(x.unit == "GB/s" for x in c.cases) and any(x.unit == "TFLOP/s" for x in c.cases)
               else 4.4 for c in charts]
    fig = figure(figsize=(width, sum(heights)), layout="constrained")
    sections = fig.subfigures(len(charts), 1, height_ratios=heights) if len(charts) > 1 else [fig]
    for sub, chart in zip(sections, charts):
        _section(sub, chart)
    fig.savefig(out, dpi=110, format="png")
