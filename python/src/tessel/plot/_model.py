"""tessel.plot._model — what a chart shows, whatever file kind it came from.

Contract:
- Case: one shape/case of a benchmark. `group` (cases of one group sit side
  by side under one heading), `label` (its tick text, may hold a newline),
  `values` (series name -> throughput, None where that series did not run),
  `unit` ("TFLOP/s", or "GB/s" for a row its file marks memory-bound).
- Chart: one section of a figure: `title`, `subtitle` (method, one line),
  `series` (bar names, tessel's first), `peers` (the series tessel's ratio
  is drawn against), `cases` in drawing order. ratio(case, peer) is
  tessel / peer, None where either is missing.
- PlotError (a ValueError): every refusal (unknown or unreadable file,
  missing matplotlib), with a message meant for a person.
- split(chart, most): a long chart cut into rows at group boundaries.
- shape_label, size_label, varies: label helpers shared by the readers.
- contenders(names): (tessel's series, tessel first then its variants; the
  peers), in first-seen order, from the series names a file holds.
"""
from dataclasses import dataclass, field


class PlotError(ValueError):
    pass


@dataclass
class Case:
    group: str
    label: str
    values: dict
    unit: str = "TFLOP/s"


@dataclass
class Chart:
    title: str
    subtitle: str
    series: list
    peers: list
    cases: list = field(default_factory=list)

    def ratio(self, case, peer):
        mine, theirs = case.values.get(self.series[0]), case.values.get(peer)
        return mine / theirs if mine and theirs else None


def size_label(n):
    """1024 -> '1k', 16384 -> '16k', 1000 -> '1000'."""
    n = int(n)
    return f"{n // 1024}k" if n >= 1024 and n % 1024 == 0 else str(n)


def shape_label(shape, batch=1):
    """M×N×K: '4096x4096x4096' -> '4k³', '4096x14336x4096' -> '4k×14k\n×4k', batch 16 -> '16× 2k³'."""
    dims = [size_label(d) for d in str(shape).split("x")]
    if len(dims) == 3 and len(set(dims)) == 1:
        text = f"{dims[0]}³"
    else:
        text = "×".join(dims[:2]) + "".join("\n×" + d for d in dims[2:])
    return f"{batch}× {text}" if batch and int(batch) > 1 else text


def split(chart, most):
    """chart as rows of about equal length, as few as hold at most `most` cases each (more where one group is
    larger), cut between groups; the rows after the first have no title, those before the last no subtitle."""
    rows = -(-len(chart.cases) // most)
    target = len(chart.cases) / max(rows, 1)
    parts, part = [], []
    for case in chart.cases:
        if part and len(part) >= target and case.group != part[-1].group:
            parts.append(part)
            part = []
        part.append(case)
    parts.append(part)
    return [Chart(chart.title if i == 0 else "", chart.subtitle if i == len(parts) - 1 else "", chart.series,
                  chart.peers, p) for i, p in enumerate(parts)]


def contenders(names):
    names = list(dict.fromkeys(names))
    ours = sorted((n for n in names if n.startswith("tessel")), key=lambda n: (n != "tessel", n))
    return ours, [n for n in names if not n.startswith("tessel")]


def varies(rows, key):
    return len({str(r.get(key)) for r in rows}) > 1
