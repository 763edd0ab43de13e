"""PNG plots next to report.md, each as pages of panels that fit a screen (layout). Importing this
module needs matplotlib."""

import matplotlib.colors as mcolors
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from . import layout as L
from . import metrics as m

_COLORS = {"busy_s": "#4c72b0", "idle_s": "#dd8452", "overhead_s": "#c44e52"}
_NAMES = {"busy_s": "busy", "idle_s": "idle", "overhead_s": "overhead"}
# Rows of the T1/TS heat map on one page: 0.32 inches each keeps a page under L.MAX_INCHES.
_HEATMAP_ROWS = 40


def _label_order(name):
    """Series names (impl or impl/sched) in the tables' order: impl, then ws first."""
    impl, _, sched = name.partition("/")
    return (m.impl_rank(impl), m.sched_rank(sched))


def _line_legend(sheet, colors, extra=()):
    handles = [Line2D([], [], color=c, marker="o") for c in colors.values()] + [h for h, _ in extra]
    sheet.legend(handles, list(colors) + [n for _, n in extra])


def _config_ticks(ax, names):
    """Bar names under the bars, turned upright when there are too many to fit side by side."""
    many = len(names) > 6
    ax.set_xticks(range(len(names)), [n.replace("\n", " ") if many else n for n in names],
                  rotation=90 if many else 0)


def speedup(groups, out_dir):
    """TS/TP against workers, one panel per benchmark, one line per impl/sched; benchmarks
    without a serial configuration cannot be shown."""
    shown = [g for g in groups if g.serial() is not None]
    names = sorted({m.label(r) for g in shown for r in g.rows if r.impl != "serial"},
                   key=_label_order)
    colors = L.series_colors(names)
    ideal = Line2D([], [], linestyle="--", color="grey", linewidth=1)

    def draw(page):
        sheet = L.sheet("Speed-up over the serial elision (TS/TP)", len(page), len(names) + 1)
        for g, ax in zip(page, sheet.axes):
            ps = sorted({r.workers for r in g.rows})
            for name in names:
                points = [(r.workers, m.speedup_vs_serial(g, r)) for r in g.rows
                          if m.label(r) == name and m.speedup_vs_serial(g, r) is not None]
                if points:
                    ax.plot(*zip(*points), marker="o", color=colors[name])
            ax.plot(ps, ps, linestyle="--", color="grey", linewidth=1)
            ax.set_xticks(ps)
            ax.set_title(L.wrap(g.title))
            ax.set_xlabel("workers")
            ax.set_ylabel("TS/TP")
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
        _line_legend(sheet, colors, [(ideal, "ideal")])
        return sheet

    return L.write_pages(out_dir, "speedup", "Speed-up over serial elision", shown, draw)


def breakdown(groups, out_dir):
    """Stacked busy/idle/overhead per worker-rep for each locus configuration, normalised to
    ws with the same worker count (as ADWS Fig. 17), so schedulers compare at a glance."""
    shown = [g for g in groups if any(m.per_worker_rep(r) for r in g.locus_rows())]

    def draw(page):
        sheet = L.sheet("locus time breakdown per worker-rep, normalised to ws at the same P",
                        len(page), len(m.COMPONENTS))
        for g, ax in zip(page, sheet.axes):
            rows = sorted((r for r in g.locus_rows() if m.per_worker_rep(r)),
                          key=lambda r: (r.workers, m.sched_rank(r.sched)))
            bottoms = [0.0] * len(rows)
            for component in m.COMPONENTS:
                heights = []
                for r in rows:
                    scale = sum(m.per_worker_rep(m.breakdown_reference(g, r)).values())
                    heights.append(m.per_worker_rep(r)[component] / scale if scale > 0 else 0)
                ax.bar(range(len(rows)), heights, bottom=bottoms, color=_COLORS[component])
                bottoms = [b + h for b, h in zip(bottoms, heights)]
            _config_ticks(ax, [f"{r.sched}\nP={r.workers}" for r in rows])
            ax.set_title(L.wrap(g.title))
            ax.set_ylabel("ws at same P = 1")
            ax.set_ylim(0, max(1.0, max(bottoms)) * 1.05)
        sheet.legend([Patch(color=_COLORS[c]) for c in m.COMPONENTS],
                     [_NAMES[c] for c in m.COMPONENTS])
        return sheet

    return L.write_pages(out_dir, "breakdown", "locus time breakdown (busy / idle / overhead)",
                         shown, draw)


def spawn_overhead(groups, out_dir):
    """(T1 - TS) per spawn in ns, one panel per benchmark where that is the cost of a spawn (no
    cutoff), one bar per scheduler; T1 <= TS is written as the ratio, within noise."""
    shown = m.spawn_groups(groups)

    def draw(page):
        sheet = L.sheet("locus per-spawn cost on 1 worker, (T1 − TS) / spawns: benchmarks "
                        "without a cutoff", len(page))
        for g, ax in zip(page, sheet.axes):
            scheds = [s for s in g.scheds() if m.locus_t1_over_ts(g, s) is not None]
            costs = [m.spawn_overhead_ns(g, s) for s in scheds]
            bars = ax.bar(range(len(scheds)), [ns or 0 for ns in costs], color="#4c72b0")
            ax.bar_label(bars, [f"{ns:.1f}" if ns is not None else "" for ns in costs],
                         fontsize=8)
            top = max([ns for ns in costs if ns is not None], default=1.0)
            for x, (s, ns) in enumerate(zip(scheds, costs)):
                ratio = m.locus_t1_over_ts(g, s)
                if ns is None:
                    ax.text(x, 0.02 * top, ("within noise\n" if ratio <= 1 else "")
                            + f"T1/TS {ratio:.2f}", ha="center", va="bottom", rotation=90,
                            fontsize=8)
            _config_ticks(ax, scheds)
            ax.set_ylim(0, top * 1.2)
            ax.set_title(L.wrap(g.title))
            ax.set_ylabel("ns per spawn")
        return sheet

    return L.write_pages(out_dir, "spawn_overhead", "locus per-spawn cost (no cutoff)", shown,
                         draw)


def work_efficiency(groups, out_dir):
    """T1/TS of every 1-worker configuration, a heat map with the value in each cell, for the
    benchmarks whose per-spawn cost is not defined (they have a cutoff)."""
    found = m.one_worker_ratios(groups)
    names = sorted({n for _, ratios in found for n in ratios}, key=_label_order)
    labels = m.short_titles([g for g, _ in found])
    items = [(g, ratios, title) for (g, ratios), title in zip(found, labels)]
    values = [v for _, ratios in found for v in ratios.values()]
    # White at 1.00 (free), red where locus costs more than serial, blue below 1 (noise); capped
    # at 3 so that one outlier does not wash out the rest (the cells carry the numbers).
    norm = mcolors.TwoSlopeNorm(vcenter=1.0, vmin=min(0.9, min(values, default=1)),
                                vmax=min(3.0, max(1.5, max(values, default=1))))

    def draw(page):
        # Room for the row labels, a cell per configuration and the colour bar.
        width = max(6.0, 0.065 * max(len(t) for _, _, t in page) + 0.95 * len(names) + 1.8)
        sheet = L.sheet("T1/TS: 1-worker time over the serial elision (1.00 = free), "
                        "benchmarks with a cutoff", 1,
                        panel=(width, max(2.5, 0.32 * len(page) + 1.4)))
        ax = sheet.axes[0]
        grid = [[ratios.get(n, float("nan")) for n in names] for _, ratios, _ in page]
        image = ax.imshow(grid, cmap="coolwarm", norm=norm, aspect="auto")
        for y, row in enumerate(grid):
            for x, v in enumerate(row):
                if v == v:  # not NaN: a configuration that ran
                    ax.text(x, y, f"{v:.2f}", ha="center", va="center", fontsize=8)
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
        ax.set_yticks(range(len(page)), [t for _, _, t in page])
        sheet.fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
        return sheet

    made = L.write_pages(out_dir, "work_efficiency", "T1/TS of the benchmarks with a cutoff",
                         items, draw, per_page=_HEATMAP_ROWS)
    return [(caption, path, [g for g, _, _ in page]) for caption, path, page in made]


def modeled_misses(groups, out_dir):
    """Modeled misses per repetition, one panel per benchmark, bars grouped by cache level, one
    bar per configuration (as ADWS Fig. 18)."""
    shown = [g for g in groups if m.locality_rows(g)]
    levels = m.locality_levels(shown)
    names = list(dict.fromkeys(m.config_label(r) for g in shown for r in m.locality_rows(g)))
    colors = L.series_colors(names)

    def draw(page):
        sheet = L.sheet("locality model: misses per cache level", len(page), len(names), cols=2,
                        panel=(6.5, 3.6))
        for g, ax in zip(page, sheet.axes):
            rows = m.locality_rows(g)
            width = 0.8 / len(rows)
            for i, r in enumerate(rows):
                xs = [k + (i - (len(rows) - 1) / 2) * width for k in range(len(levels))]
                ys = [m.modeled_misses_per_rep(r, lv) or 0 for lv in levels]
                ax.bar(xs, ys, width=width, color=colors[m.config_label(r)])
            ax.set_xticks(range(len(levels)), [f"L{lv}" for lv in levels])
            ax.set_title(L.wrap(g.title, 80))
            ax.set_ylabel("modeled misses per repetition")
            ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 3))
        sheet.legend([Patch(color=c) for c in colors.values()], names)
        return sheet

    return L.write_pages(out_dir, "modeled_misses", "Modeled misses per cache level", shown,
                         draw, per_page=2 * L.ROWS)


def size_sweep(groups, out_dir):
    """ns per elementary update against the working set (in L2s when known), log-log, one panel
    per swept benchmark and load, one line per configuration."""
    found = list(m.sweeps(groups).items())
    names = sorted({n for _, sizes in found for n in m.sweep_series(sizes)}, key=_label_order)
    colors = L.series_colors(names)

    def draw(page):
        sheet = L.sheet("Time per elementary update against the working set", len(page),
                        len(names))
        for ((bench, contend), sizes), ax in zip(page, sheet.axes):
            series = m.sweep_series(sizes)
            in_l2 = all(l2 for points in series.values() for _, l2, _ in points)
            for name, points in series.items():
                xs = [ws / l2 if in_l2 else ws / 2**20 for ws, l2, _ in points]
                ax.plot(xs, [ns for _, _, ns in points], marker="o", color=colors[name])
            if in_l2:
                ax.axvline(1, color="grey", linestyle="--", linewidth=1)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("working set (L2s of one core)" if in_l2 else "working set (MiB)")
            unit = next(r.unit for g in sizes for r in g.rows if r.unit)
            ax.set_ylabel(f"ns per {unit}")
            ax.set_title(bench if contend == "none" else f"{bench} [contend {contend}]")
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
        _line_legend(sheet, colors)
        return sheet

    made = L.write_pages(out_dir, "size_sweep", "Time per update against the working set",
                         found, draw)
    return [(caption, path, [sizes[0] for _, sizes in page]) for caption, path, page in made]


def write_all(groups, out_dir):
    """Every plot the data allows, as (caption, path, groups shown) in report order, a plot of
    several pages once per page."""
    return (speedup(groups, out_dir) + breakdown(groups, out_dir)
            + spawn_overhead(groups, out_dir) + work_efficiency(groups, out_dir)
            + modeled_misses(groups, out_dir) + size_sweep(groups, out_dir))
