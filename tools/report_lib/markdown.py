"""report.md: failures first, then the summary, locus against its peers, per-benchmark tables,
locus breakdowns, plots."""

import os

from . import metrics as m

DASH = "—"


def fmt_time(seconds):
    """Seconds in the largest unit (s, ms, µs, ns) that keeps the value at least 1, with three
    significant digits, so columns of very different magnitudes stay readable."""
    if seconds is None:
        return DASH
    if seconds == 0:
        return "0"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(seconds) >= scale:
            return _three_digits(seconds / scale) + " " + unit
    return _three_digits(seconds * 1e9) + " ns"


def _three_digits(v):
    digits = 2 if abs(v) < 10 else 1 if abs(v) < 100 else 0
    return f"{v:.{digits}f}"


def fmt_ratio(x, digits=2):
    return DASH if x is None else f"{x:.{digits}f}"


def fmt_count(x):
    """Counts per repetition: whole numbers as such, fractions (averages) with one decimal."""
    return f"{x:.0f}" if x == int(x) or abs(x) >= 100 else f"{x:.1f}"


def table(header, rows, text_columns=1):
    """A Markdown table; the first text_columns left-aligned (names), the rest right-aligned
    (numbers). A '|' inside a cell (say, in an error message) is escaped."""
    align = [":--"] * text_columns + ["--:"] * (len(header) - text_columns)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _inputs(paths, results, groups):
    names = ", ".join(f"`{p}`" for p in paths)
    return (f"Inputs: {names}: {len(results)} configurations of {len(groups)} "
            f"benchmark/parameter sets.")


def failures_section(groups):
    """Failed configurations, at the top so that nobody reads numbers past them."""
    failed = [(g, r) for g in groups for r in g.rows if not r.verified]
    if not failed:
        total = sum(len(g.rows) for g in groups)
        return f"All {total} configurations verified."
    rows = [(g.title, m.label(r), r.workers, f"`{r.where}`", r.error or DASH) for g, r in failed]
    return "\n\n".join([
        "## ⚠ Unverified configurations",
        f"**{len(failed)} configuration(s) FAILED verification.** They are listed in the tables "
        f"below but left out of every ratio.",
        table(["benchmark", "configuration", "workers", "line", "error"], rows, 5)])


def summary_section(groups):
    """Medians per benchmark and configuration side by side, with the two headline ratios."""
    counts = m.worker_counts(groups)
    p = counts[-1]
    scaling = [f"T1/T{p}"] if p > 1 else []  # no speed-up column when all ran on 1 worker
    header = (["benchmark", "configuration"] + [f"T ({n} worker{'s' * (n > 1)})" for n in counts]
              + ["T1/TS"] + scaling)
    rows = []
    for g in groups:
        for name in _series(g):
            by_p = {r.workers: r for r in g.rows if m.label(r) == name}
            times = [fmt_time(by_p[n].median_s if n in by_p and by_p[n].usable else None)
                     for n in counts]
            t1_ts = m.t_over_ts(g, by_p[1]) if 1 in by_p else None
            row = [g.title, name] + times + [fmt_ratio(t1_ts)]
            if scaling:
                row.append(fmt_ratio(m.self_speedup(g, by_p[p]) if p in by_p else None))
            rows.append(row)
    legend = ("Median times. T1/TS: 1-worker median over the serial median (the cost of "
              "parallelisation on one core; 1.00 is free).")
    if scaling:
        legend += f" T1/T{p}: speed-up from 1 to {p} workers of the same configuration."
    legend += f" {DASH}: the configuration needed is missing or failed."
    return "\n\n".join(["## Summary", legend, table(header, rows, 2)])


_PEER_NAMES = {"tbb": "oneTBB", "omp": "OpenMP"}


def peers_section(groups):
    """Every configuration on a locus runtime against oneTBB and OpenMP at its worker count, by
    medians and round by round."""
    comparisons = [(g, r, peers) for g in groups for r, peers in m.peer_comparisons(g)]
    if not comparisons:
        return ""
    shown = [p for p in m.PEERS if any(p in peers for _, _, peers in comparisons)]
    header = ["benchmark", "configuration", "workers"]
    for p in shown:
        header += [f"÷ {p}", "paired", "rounds faster"]
    rows = []
    for g, r, peers in comparisons:
        row = [g.title, m.label(r), r.workers]
        for p in shown:
            peer = peers.get(p)
            ahead = m.rounds_ahead(r, peer) if peer else None
            row += [fmt_ratio(m.over_peer(r, peer) if peer else None, 3),
                    fmt_ratio(m.paired_over_peer(r, peer) if peer else None, 3),
                    DASH if ahead is None else f"{ahead[0]}/{ahead[1]}"]
        rows.append(row)
    names = " and ".join(f"{_PEER_NAMES[p]} ({p})" for p in shown)
    legend = (f"Each configuration on a locus runtime against {names} with as many workers, "
              "same benchmark, parameters and load; below 1.00 locus is faster. ÷: its median "
              "over the peer's. paired: the median over rounds of its time over the peer's in "
              "the same round (the harness interleaves the configurations round by round, so a "
              "host that changes speed between rounds moves both sides of a pair, where it can "
              "move one median and not the other). rounds faster: the rounds in which it beat "
              f"the peer. {DASH}: no such peer, or (paired) the two did not run in the same "
              "rounds.")
    return "\n\n".join([f"## locus against {' and '.join(_PEER_NAMES[p] for p in shown)}",
                         legend, table(header, rows, 2)])


def _series(g):
    """The distinct impl/sched names of a group in row order."""
    return list(dict.fromkeys(m.label(r) for r in g.rows))


def benchmark_section(g):
    rows = []
    for r in g.rows:
        rows.append([
            r.impl, r.sched or DASH, r.workers,
            fmt_time(r.median_s), fmt_time(r.min_s), r.reps,
            "yes" if r.verified else "**NO**",
            fmt_ratio(m.t_over_ts(g, r)), fmt_ratio(m.self_speedup(g, r)),
            fmt_ratio(m.work_efficiency(g, r), 3), fmt_ratio(m.work_inflation(g, r), 3)])
    header = ["impl", "sched", "workers", "median", "min", "reps", "verified", "T/TS", "T1/TP",
              "T1/TS", "W_P/T1"]
    return f"### {g.title}\n\n" + table(header, rows, 2)


def benchmarks_section(groups):
    legend = (
        "T/TS: median over the serial median. T1/TP: the same impl and scheduler's 1-worker "
        "median over this median (speed-up). For locus: T1/TS, work efficiency (1-worker locus "
        "median over the serial median); W_P/T1, work inflation (busy time of all workers per "
        "repetition over the 1-worker median).")
    return "\n\n".join(["## Results per benchmark", legend]
                       + [benchmark_section(g) for g in groups])


def _levels(counts):
    return ", ".join(f"L{i} {fmt_count(c)}" for i, c in enumerate(counts)) or DASH


def breakdown_section(groups):
    """Where locus workers spent their time, and how work moved between them."""
    rows = []
    for g in groups:
        for r in g.locus_rows():
            parts = m.per_worker_rep(r)
            if parts is None:
                continue
            t = r.total
            accounted = sum(parts.values())
            busy_share = parts["busy_s"] / accounted if accounted > 0 else None
            rows.append([
                g.title, r.sched, r.workers,
                fmt_time(parts["busy_s"]), fmt_time(parts["idle_s"]),
                fmt_time(parts["overhead_s"]),
                DASH if busy_share is None else f"{100 * busy_share:.1f}%",
                fmt_ratio(m.accounted_over_median(r)),
                fmt_count(m.per_rep(r, t["spawns"])),
                _levels(m.per_rep(r, t["steals_by_level"])),
                _levels(m.per_rep(r, t["failed_steals_by_level"])),
                fmt_count(m.per_rep(r, t["suspensions"]))])
    if not rows:
        return "## locus time breakdown\n\nNo verified locus configuration with statistics."
    header = ["benchmark", "sched", "workers", "busy", "idle", "overhead", "busy share",
              "sum/median", "spawns/rep", "steals/rep by level", "failed steals/rep by level",
              "suspensions/rep"]
    return "\n\n".join([
        "## locus time breakdown",
        "busy, idle and overhead: seconds per worker per repetition; sum/median: their sum over "
        "the median time, about 1.00 when the statistics cover just the timed region. Counts: "
        "per repetition, all workers together; steal levels are topology distances between "
        "thief and victim (L0 = same core).",
        table(header, rows, 2)])


def spawn_section(groups):
    """Cost of a spawn on one worker, where nothing is stolen: (T1 - TS) / spawns per rep, for the
    benchmarks where every call is a task (m.spawn_cost_defined)."""
    rows = []
    for g in m.spawn_groups(groups):
        serial = g.serial()
        for sched in g.scheds():
            one = g.one_worker("locus", sched)
            ratio = m.locus_t1_over_ts(g, sched)
            if ratio is None:
                continue
            ns = m.spawn_overhead_ns(g, sched)
            cost = f"{ns:.1f}" if ns is not None else "within noise" if ratio <= 1 else DASH
            rows.append([g.title, sched, fmt_time(one.median_s), fmt_time(serial.median_s),
                         fmt_ratio(ratio), fmt_count(m.per_rep(one, one.total["spawns"])), cost])
    rule = ("Only for benchmarks run without a cutoff (parameter `cutoff` = 0 and no other "
            "`*cutoff*`, `*grain*` or `*leaf*` parameter above 0), where every call is a task. "
            "Elsewhere leaves run serial code of their own and T1 − TS is not spawns times the "
            "cost of one: T1/TS (the tables above, the T1/TS plot) says what one worker costs.")
    if not rows:
        return "\n\n".join(["## Per-spawn overhead", rule + " No such benchmark here."])
    return "\n\n".join([
        "## Per-spawn overhead",
        "(T1 − TS) / spawns per repetition, T1 the 1-worker locus median. " + rule + " Where T1 "
        "≤ TS a spawn would cost less than nothing: that is noise, shown by T1/TS alone.",
        table(["benchmark", "sched", "T1", "TS", "T1/TS", "spawns/rep", "ns per spawn"], rows, 2)])


def locality_section(groups):
    """The locality model's output (locus-bench --locality): modeled misses per cache level per
    repetition, miss ratios, NUMA remote share and mapping stability, per configuration."""
    levels = m.locality_levels(groups)
    rows = []
    for g in groups:
        for r in m.locality_rows(g):
            misses = [m.modeled_misses_per_rep(r, lv) for lv in levels]
            peers = [m.modeled_from_peers_per_rep(r, lv) for lv in levels]
            ratios = [m.modeled_miss_ratio(r, lv) for lv in levels]
            stability = m.mapping_stability(r)
            remote = m.numa_remote_share(r)
            rows.append([g.title, m.config_label(r)]
                        + [DASH if x is None else fmt_count(x) for x in misses]
                        + [DASH if x is None else fmt_count(x) for x in peers]
                        + [DASH if x is None else f"{100 * x:.1f}%" for x in ratios]
                        + [DASH if remote is None else f"{100 * remote:.1f}%",
                           DASH if stability is None else f"{100 * stability:.1f}%"])
    if not rows:
        return ""
    header = (["benchmark", "configuration"] + [f"L{lv} misses/rep" for lv in levels]
              + [f"L{lv} from other L{lv}s/rep" for lv in levels]
              + [f"L{lv} miss ratio" for lv in levels] + ["NUMA remote", "mapping stability"])
    return "\n\n".join([
        "## Locality model",
        "Modeled by replaying the declared footprints through one fully associative LRU per "
        "cache of the topology (`locus-bench --locality`), writes invalidating the other caches' "
        "copies. Misses per repetition; from other caches: the misses whose line another cache "
        "of the level held (what moving work between cores costs); miss ratio: "
        "misses over the accesses that reached the level; NUMA remote: share of line accesses "
        "to pages first touched from another NUMA node; mapping stability: share of leaves on "
        f"the same worker as in the previous iteration. {DASH}: not modeled or no iterations.",
        table(header, rows, 2)])


def contention_section(groups):
    """Every configuration quiet and under each load (locus-bench --contend), side by side."""
    pairs = m.contention_pairs(groups)
    if not pairs:
        return ""
    parts = ["## Quiet and contended",
             "Medians of the same configurations in one invocation, quiet and under each "
             "--contend load (N processes pinned to the last N CPUs, always busy or BUSY/IDLE "
             "microseconds in bursts). × quiet: the loaded median over the quiet one; "
             "T/TS: over the serial median under the same load."]
    for quiet, loaded in pairs:
        header = ["configuration", "workers", "quiet", "T/TS"]
        for g in loaded:
            header += [f"contend {g.contend}", "× quiet", "T/TS"]
        rows = []
        for r in quiet.rows:
            row = [m.label(r), r.workers, fmt_time(_usable_median(r)),
                   fmt_ratio(m.t_over_ts(quiet, r))]
            for g in loaded:
                twin = next((x for x in g.rows if m.m_key(x) == m.m_key(r)), None)
                row += [fmt_time(_usable_median(twin)),
                        fmt_ratio(m.loaded_over_quiet(quiet, twin) if twin else None),
                        fmt_ratio(m.t_over_ts(g, twin) if twin else None)]
            rows.append(row)
        parts.append(f"### {quiet.title}\n\n" + table(header, rows, 1))
    return "\n\n".join(parts)


def sweep_section(groups):
    """Time per elementary update against the working set, per benchmark run at several sizes."""
    found = m.sweeps(groups)
    if not found:
        return ""
    parts = ["## Size sweep",
             "Median time per elementary update (ns) at each working set (the bytes one pass "
             "touches; in brackets, in units of this machine's L2 per core), serial and every "
             "configuration at its largest worker count."]
    for (bench, contend), sizes in found.items():
        series = m.sweep_series(sizes)
        sets = sorted({ws for points in series.values() for ws, _, _ in points})
        l2 = next((l2 for points in series.values() for _, l2, _ in points if l2), None)
        unit = next(r.unit for g in sizes for r in g.rows if r.unit)
        header = ["working set"] + list(series)
        rows = []
        for ws in sets:
            shown = f"{ws / 2**20:.2f} MiB" + (f" ({ws / l2:.2f} L2)" if l2 else "")
            row = [shown]
            for points in series.values():
                ns = next((v for w, _, v in points if w == ws), None)
                row.append(DASH if ns is None else f"{ns:.2f}")
            rows.append(row)
        title = bench if contend == "none" else f"{bench} [contend {contend}]"
        parts.append(f"### {title}: ns per {unit}\n\n" + table(header, rows, 1))
    return "\n\n".join(parts)


def _usable_median(r):
    return r.median_s if r is not None and r.usable else None


def plots_section(plot_files):
    """Each image under a line naming the benchmarks it shows: a plot of many benchmarks comes
    as several pages."""
    if not plot_files:
        return ""
    parts = ["## Plots"]
    for caption, path, shown in plot_files:
        benches = ", ".join(dict.fromkeys(g.bench for g in shown))
        parts.append(f"**{caption}**: {benches}\n\n![{caption}]({os.path.basename(path)})")
    return "\n\n".join(parts)


def render(title, paths, results, groups, plot_files):
    """The whole report; plot_files is a list of (caption, path, groups shown) for the images
    beside it."""
    sections = [f"# {title}", _inputs(paths, results, groups), failures_section(groups),
                summary_section(groups), peers_section(groups), contention_section(groups),
                sweep_section(groups),
                benchmarks_section(groups),
                breakdown_section(groups),
                spawn_section(groups), locality_section(groups), plots_section(plot_files)]
    return "\n\n".join(s for s in sections if s) + "\n"
