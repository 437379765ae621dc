#!/usr/bin/env python3
"""bench/sm90_spans.py — how the persistent sm90 GEMM's work spreads over its blocks (TESSEL_SM90_SPANS).

Input: the output of tessel-bench processes built with -DTESSEL_SM90_SPANS=N
(lines "SPAN launch block smid units entry start t1 ... tn exit": %globaltimer
in ns at the block's kernel entry, when its first consumer thread began, when
it had issued each unit's epilogue and when its last stores were done), one
process per "tessel-bench gemm" header (a device.sh gvariants.txt works as it
is), and "CLOCK launch block start c1 ... cn": the SM's clock64 beside the
start and unit stamps. Run one GEMM type per process and --min-sample-ms
large enough (e.g. 20) that launches N .. N + 3 run back to back. Rows are
named by their gvariants.txt variant (its rounds together). Per launch it
prints:
  - the span from the first block's start to the last unit's end, and when the
    blocks that ran the most units and the others ended;
  - the median unit time, the first unit's, and the spread of the blocks' mean
    unit time (units after the first);
  - an estimate of what taking units from a shared queue could gain: the
    blocks' mean unit times, list-scheduled over the same units (each block
    takes the next unit when it ends one);
  - from one launch to the next: the period (first start to first start), and
    what lies outside the blocks' work: the last block's drain (last unit's
    end to its exit), the time from the last exit to the next launch's first
    entry and from there to its first start (blocks entered before the
    previous launch ended give a negative entry gap: the dependent launch);
  - how many pairs of blocks 2i, 2i + 1 share a TPC (%smid / 2): a launch
    onto idle SMs places them so; one whose blocks took SMs as the kernel
    before left them (an early dependent launch) scatters them;
  - per unit index (the block's 1st, 2nd, ... unit), the median over the
    blocks of the unit's time, its SM cycles and the SM clock they imply;
    then the same over the steady units (the 2nd to the last but one): the
    work a unit takes in cycles apart from the clock it ran at;
then, per row, how alike the SMs' speeds are from launch to launch (the
correlation of the per-%smid mean unit times within a process and across
processes) and the slowest and fastest SMs.

  python3 bench/sm90_spans.py gvariants.txt
"""
import heapq
import re
import statistics as st
import sys
from collections import defaultdict


def processes(text):
    """(row, launches, clocks) per tessel-bench process; the row names its gvariants.txt variant if any."""
    text = "\n" + text
    sections = [s.split("\n", 1) for s in text.split("\n## ")[1:]] if "\n## " in text else [["", text]]
    for name, body in sections:
        variant = re.sub(r"^gvariant_|_\d+\.txt$", "", name.strip())  # gvariant_NAME_ROUND.txt -> NAME
        yield from section(body, f"[{variant}] " if variant else "")


def section(text, label):
    for chunk in text.split("tessel-bench gemm —")[1:]:
        m = re.search(r"\n +(\d+) +(\S+) +(\S+) +(\S+)", chunk)
        row = label + (" ".join(m.groups()) if m else "?")
        launches = defaultdict(dict)
        clocks = defaultdict(dict)
        for line in chunk.splitlines():
            if line.startswith("CLOCK "):
                f = line.split()
                clocks[int(f[1])][int(f[2])] = list(map(int, f[3:]))
            if line.startswith("SPAN "):
                f = line.split()
                launch, block, smid, units = map(int, f[1:5])
                t = list(map(int, f[5:]))
                launches[launch][block] = (smid, units, t[1:-1], t[0], t[-1])  # stamps from start, entry, exit
        if launches:
            yield row, launches, clocks


def list_scheduled_end(first, mean, work):
    """Blocks end their first unit at first[b], then take queued units of mean[b] each."""
    queue = [(first[b], b) for b in first]
    heapq.heapify(queue)
    left, end = work - len(first), 0
    while queue:
        t, b = heapq.heappop(queue)
        end = max(end, t)
        if left > 0:
            left -= 1
            heapq.heappush(queue, (t + mean[b], b))
    return end


def correlation(a, b):
    keys = sorted(set(a) & set(b))
    x, y = [a[k] for k in keys], [b[k] for k in keys]
    mx, my = st.mean(x), st.mean(y)
    den = (sum((p - mx) ** 2 for p in x) * sum((q - my) ** 2 for q in y)) ** 0.5
    return sum((p - mx) * (q - my) for p, q in zip(x, y)) / den if den else float("nan")


def main(path):
    speeds = defaultdict(list)  # row -> per process, per launch {smid: mean unit ns}
    for proc, (row, launches, clocks) in enumerate(processes(open(path).read())):
        print(f"== process {proc}: {row}")
        per_launch = []
        previous = None
        for launch, blocks in sorted(launches.items()):
            entry = min(v[3] for v in blocks.values())
            start = min(v[2][0] for v in blocks.values())
            exit_ = max(v[4] for v in blocks.values())
            last_end = max(v[2][-1] for v in blocks.values())
            if previous:
                p_start, p_exit = previous
                print(f"  launch {launch - 1} -> {launch}: period {(start - p_start) / 1e3:.1f} us; "
                      f"last exit -> first entry {(entry - p_exit) / 1e3:+.2f} us, -> first start {(start - p_exit) / 1e3:+.2f} us")
            previous = (start, exit_)
            end = {b: v[2][-1] - start for b, v in blocks.items()}
            units = {b: v[1] for b, v in blocks.items()}
            most = max(units.values())
            top = [end[b] for b in blocks if units[b] == most]
            rest = [end[b] for b in blocks if units[b] < most]
            dur = {b: [v[2][i + 1] - v[2][i] for i in range(v[1])] for b, v in blocks.items()}
            later = {b: st.mean(d[1:]) for b, d in dur.items() if len(d) > 1}
            first = {b: v[2][1] - start for b, v in blocks.items() if v[1] > 0}  # when each block ended its first unit
            span = max(end.values())
            line = (f"  launch {launch}: {sum(units.values())} units, span {span / 1e3:.1f} us; "
                    f"{len(top)} blocks of {most} units end {min(top) / 1e3:.1f}-{max(top) / 1e3:.1f}")
            if rest:
                line += f", the others {min(rest) / 1e3:.1f}-{max(rest) / 1e3:.1f}"
            all_units = [x for d in dur.values() for x in d]
            line += (f"; unit median {st.median(all_units) / 1e3:.2f} us, first unit "
                     f"{st.median(d[0] for d in dur.values() if d) / 1e3:.2f}")
            if len(later) == len(blocks):
                est = list_scheduled_end(first, later, sum(units.values()))
                line += (f"; blocks' mean unit {min(later.values()) / 1e3:.2f}-{max(later.values()) / 1e3:.2f} us; "
                         f"list-scheduled end {est / 1e3:.1f} us ({(span - est) / span * 100:+.1f}%)")
                per_launch.append({blocks[b][0]: later[b] for b in blocks})
            line += (f"; entries spread {(max(v[3] for v in blocks.values()) - entry) / 1e3:.2f} us, entry -> first start "
                     f"{(start - entry) / 1e3:.2f} us, last unit end -> last exit {(exit_ - last_end) / 1e3:.2f} us")
            pairs = [b for b in blocks if b % 2 == 0 and b + 1 in blocks]
            line += (f"; blocks 2i, 2i + 1 on one TPC (smid / 2) {sum(blocks[b][0] // 2 == blocks[b + 1][0] // 2 for b in pairs)}"
                     f" of {len(pairs)}")
            print(line)
            cyc = clocks.get(launch, {})
            if cyc:
                per = []
                for i in range(most):
                    ns = [dur[b][i] for b in blocks if units[b] > i and b in cyc]
                    kc = [cyc[b][i + 1] - cyc[b][i] for b in blocks if units[b] > i and b in cyc]
                    per.append(f"{st.median(ns) / 1e3:.1f}/{st.median(kc) / 1e3:.1f}/{st.median(c / n for c, n in zip(kc, ns)):.2f}")
                print("    per unit index, medians (us / kcycles / GHz): " + " ".join(per))
                steady = [(cyc[b][i + 1] - cyc[b][i], dur[b][i]) for b in blocks if b in cyc
                          for i in range(1, units[b] - 1)]  # past the first unit (cold) and before the last
                if steady:
                    print(f"    steady units (2nd to the last but one): median {st.median(c for c, _ in steady) / 1e3:.2f} "
                          f"kcycles at {st.median(c / n for c, n in steady):.3f} GHz; busiest block "
                          f"{max(cyc[b][-1] - cyc[b][0] for b in cyc) / 1e3:.0f} kcycles")
        speeds[row].append(per_launch)
    for row, procs in speeds.items():
        within = [correlation(p[i], p[j]) for p in procs for i in range(len(p)) for j in range(i + 1, len(p))]
        across = [correlation(a, b) for i in range(len(procs)) for j in range(i + 1, len(procs))
                  for a in procs[i] for b in procs[j]]
        launches = [l for p in procs for l in p]
        if not launches:
            continue
        rel = {s: st.mean(l[s] / st.mean(l.values()) for l in launches) for s in launches[0]}
        order = sorted(rel, key=rel.get)
        print(f"== {row}: SM speed correlation within a process "
              f"{st.mean(within) if within else float('nan'):.2f}, across {st.mean(across) if across else float('nan'):.2f}; "
              f"slowest smids {', '.join(f'{s} ({rel[s]:.3f})' for s in order[-4:])}; "
              f"fastest {', '.join(f'{s} ({rel[s]:.3f})' for s in order[:4])}")


if __name__ == "__main__":
    main(sys.argv[1])
