"""PNG plots next to report.md. Importing this module needs matplotlib (Agg: no display)."""

import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from . import metrics as m  # noqa: E402

_COLORS = {"busy_s": "#4c72b0", "idle_s": "#dd8452", "overhead_s": "#c44e52"}
_NAMES = {"busy_s": "busy", "idle_s": "idle", "overhead_s": "overhead"}


def _grid(n, width=4.8, height=3.6):
    """A figure with n panels, at most three a row; the unused panels are hidden."""
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def _save(fig, out_dir, name):
    path = os.path.join(out_dir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def speedup(groups, out_dir):
    """TS/TP against workers, one panel per benchmark, one line per impl/sched; benchmarks
    without a serial configuration cannot be shown."""
    shown = [g for g in groups if g.serial() is not None]
    if not shown:
        return None
    fig, axes = _grid(len(shown))
    for g, ax in zip(shown, axes):
        ps = sorted({r.workers for r in g.rows})
        for name in dict.fromkeys(m.label(r) for r in g.rows if r.impl != "serial"):
            points = [(r.workers, m.speedup_vs_serial(g, r)) for r in g.rows
                      if m.label(r) == name and m.speedup_vs_serial(g, r) is not None]
            if points:
                ax.plot(*zip(*points), marker="o", label=name)
        ax.plot(ps, ps, linestyle="--", color="grey", linewidth=1, label="ideal")
        ax.set_xticks(ps)
        ax.set_title(g.title, fontsize=10)
        ax.set_xlabel("workers")
        ax.set_ylabel("speed-up over serial (TS/TP)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return _save(fig, out_dir, "speedup.png")


def breakdown(groups, out_dir):
    """Stacked busy/idle/overhead per worker-rep for each locus configuration, normalised to
    ws with the same worker count (as ADWS Fig. 17), so schedulers compare at a glance."""
    shown = [g for g in groups if any(m.per_worker_rep(r) for r in g.locus_rows())]
    if not shown:
        return None
    fig, axes = _grid(len(shown))
    for g, ax in zip(shown, axes):
        rows = sorted((r for r in g.locus_rows() if m.per_worker_rep(r)),
                      key=lambda r: (r.workers, m.sched_rank(r.sched)))
        bottoms = [0.0] * len(rows)
        for component in m.COMPONENTS:
            heights = []
            for r in rows:
                ref = m.breakdown_reference(g, r)
                scale = sum(m.per_worker_rep(ref).values())
                heights.append(m.per_worker_rep(r)[component] / scale if scale > 0 else 0)
            ax.bar(range(len(rows)), heights, bottom=bottoms, color=_COLORS[component],
                   label=_NAMES[component])
            bottoms = [b + h for b, h in zip(bottoms, heights)]
        ax.set_xticks(range(len(rows)), [f"{r.sched}\nP={r.workers}" for r in rows])
        ax.set_title(g.title, fontsize=10)
        ax.set_ylabel("per worker-rep, ws at same P = 1")
        ax.set_ylim(0, max(1.0, max(bottoms)) * 1.05)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="upper right", ncol=3, fontsize=8)
    fig.suptitle("locus time breakdown per worker-rep, normalised to ws at the same P",
                 fontsize=11)
    return _save(fig, out_dir, "breakdown.png")


def spawn_overhead(groups, out_dir):
    """(T1 - TS) per spawn in ns, one bar per benchmark and scheduler."""
    bars = [(g.title, sched, m.spawn_overhead_ns(g, sched))
            for g in groups for sched in g.scheds()]
    bars = [b for b in bars if b[2] is not None]
    if not bars:
        return None
    fig, ax = plt.subplots(figsize=(max(5.0, 1.4 * len(bars) + 2), 3.8))
    scheds = list(dict.fromkeys(s for _, s, _ in bars))
    titles = list(dict.fromkeys(t for t, _, _ in bars))
    width = 0.8 / len(scheds)
    for i, sched in enumerate(scheds):
        xs = [titles.index(t) + (i - (len(scheds) - 1) / 2) * width for t, s, _ in bars
              if s == sched]
        ys = [ns for _, s, ns in bars if s == sched]
        drawn = ax.bar(xs, ys, width=width, label=sched)
        ax.bar_label(drawn, fmt="%.1f", fontsize=8)
    ax.set_xticks(range(len(titles)), titles, fontsize=8)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel("ns per spawn ((T1 - TS) / spawns)")
    ax.set_title("locus per-spawn overhead on 1 worker", fontsize=10)
    ax.legend(fontsize=8)
    return _save(fig, out_dir, "spawn_overhead.png")


def modeled_misses(groups, out_dir):
    """Modeled misses per repetition, one panel per benchmark, bars grouped by cache level, one
    bar per configuration (as ADWS Fig. 18)."""
    shown = [g for g in groups if m.locality_rows(g)]
    if not shown:
        return None
    levels = m.locality_levels(shown)
    fig, axes = _grid(len(shown))
    for g, ax in zip(shown, axes):
        rows = m.locality_rows(g)
        width = 0.8 / len(rows)
        for i, r in enumerate(rows):
            xs = [k + (i - (len(rows) - 1) / 2) * width for k in range(len(levels))]
            ys = [m.modeled_misses_per_rep(r, lv) or 0 for lv in levels]
            ax.bar(xs, ys, width=width, label=m.config_label(r))
        ax.set_xticks(range(len(levels)), [f"L{lv}" for lv in levels])
        ax.set_title(g.title, fontsize=10)
        ax.set_ylabel("modeled misses per repetition")
        ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 3))
        ax.legend(fontsize=8)
    fig.suptitle("locality model: misses per cache level", fontsize=11)
    return _save(fig, out_dir, "modeled_misses.png")


def size_sweep(groups, out_dir):
    """ns per elementary update against the working set (in L2s when known), log-log, one panel
    per swept benchmark and load, one line per configuration."""
    found = m.sweeps(groups)
    if not found:
        return None
    fig, axes = _grid(len(found))
    for ((bench, contend), sizes), ax in zip(found.items(), axes):
        series = m.sweep_series(sizes)
        in_l2 = all(l2 for points in series.values() for _, l2, _ in points)
        for name, points in series.items():
            xs = [ws / l2 if in_l2 else ws / 2**20 for ws, l2, _ in points]
            ax.plot(xs, [ns for _, _, ns in points], marker="o", label=name)
        if in_l2:
            ax.axvline(1, color="grey", linestyle="--", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("working set (L2s of one core)" if in_l2 else "working set (MiB)")
        unit = next(r.unit for g in sizes for r in g.rows if r.unit)
        ax.set_ylabel(f"ns per {unit}")
        ax.set_title(bench if contend == "none" else f"{bench} [contend {contend}]", fontsize=10)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return _save(fig, out_dir, "size_sweep.png")


def write_all(groups, out_dir):
    """Every plot the data allows, as (caption, path) pairs in report order."""
    made = [("Speed-up over serial elision", speedup(groups, out_dir)),
            ("locus time breakdown (busy / idle / overhead)", breakdown(groups, out_dir)),
            ("locus per-spawn overhead", spawn_overhead(groups, out_dir)),
            ("Modeled misses per cache level", modeled_misses(groups, out_dir)),
            ("Time per update against the working set", size_sweep(groups, out_dir))]
    return [(caption, path) for caption, path in made if path is not None]
