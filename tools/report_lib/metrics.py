"""Grouping of configurations by benchmark and parameters, and the ratios the report shows.

Every ratio is None when a configuration it needs is missing or did not verify, so the
renderers print a dash instead of a number derived from a failed run.
"""

import statistics
from dataclasses import dataclass, field

from .load import params_key

_IMPL_ORDER = {"serial": 0, "locus": 1, "tbb": 2, "omp": 3, "taskq": 4, "tao": 5}
# Implementations that run on a locus runtime (taskq: the locus::taskq API on it; tao: task
# assemblies on it).
LOCUS_RUNTIME_IMPLS = ("locus", "taskq", "tao")
COMPONENTS = ("busy_s", "idle_s", "overhead_s")


def impl_rank(impl):
    """Peers in a fixed order (serial, locus, tbb, omp, taskq), anything else after them by
    name."""
    return (_IMPL_ORDER.get(impl, len(_IMPL_ORDER)), impl)


def sched_rank(sched):
    """ws, the baseline scheduler, first; the others by name."""
    return (sched != "ws", sched or "")


def row_order(r):
    return (impl_rank(r.impl), sched_rank(r.sched), r.workers)


def label(r):
    """Short name of a configuration's series: impl, or impl/sched for locus."""
    return f"{r.impl}/{r.sched}" if r.sched else r.impl


@dataclass
class Group:
    """The configurations of one benchmark with one set of parameters: ratios compare only
    within a group, since the harness interleaves repetitions only there."""

    bench: str
    params: dict
    contend: str = "none"  # the load of every row (locus-bench --contend)
    rows: list = field(default_factory=list)

    @property
    def title(self):
        shown = ", ".join(f"{k}={v}" for k, v in self.params.items())
        title = f"{self.bench} ({shown})" if shown else self.bench
        return title if self.contend == "none" else f"{title} [contend {self.contend}]"

    def serial(self):
        """The usable serial-elision configuration (the TS reference), or None."""
        return next((r for r in self.rows if r.impl == "serial" and r.usable), None)

    def one_worker(self, impl, sched):
        """The usable 1-worker configuration of impl/sched (the T1 reference), or None."""
        return next((r for r in self.rows
                     if r.impl == impl and r.sched == sched and r.workers == 1 and r.usable), None)

    def locus_rows(self):
        return [r for r in self.rows if r.impl == "locus" and r.total]

    def scheds(self):
        return sorted({r.sched for r in self.locus_rows()}, key=sched_rank)


def group(results):
    """Groups in order of first appearance, rows sorted by impl, sched, workers. A load makes its
    own group: its ratios compare configurations that ran under the same load."""
    groups = {}
    for r in results:
        key = (r.bench, params_key(r.params), r.contend)
        groups.setdefault(key, Group(r.bench, r.params, r.contend)).rows.append(r)
    for g in groups.values():
        g.rows.sort(key=row_order)
    return list(groups.values())


def _ratio(num, den):
    return None if num is None or den is None or den <= 0 else num / den


def _median(r):
    return r.median_s if r is not None and r.usable else None


def t_over_ts(g, r):
    """T/TS: this configuration's median over the serial median (below 1 is faster)."""
    serial = g.serial()
    return _ratio(_median(r), _median(serial))


def speedup_vs_serial(g, r):
    """TS/T: what the speed-up plot shows."""
    serial = g.serial()
    return _ratio(_median(serial), _median(r))


def self_speedup(g, r):
    """T1/TP: speed-up over the same impl and scheduler on 1 worker."""
    return _ratio(_median(g.one_worker(r.impl, r.sched)), _median(r))


PEERS = ("tbb", "omp")


def peer_comparisons(g):
    """(locus-runtime row, {peer impl: row}) for every configuration on a locus runtime that
    has a usable oneTBB or OpenMP configuration with the same worker count in its group."""
    out = []
    for r in g.rows:
        if r.impl not in LOCUS_RUNTIME_IMPLS or not r.usable:
            continue
        peers = {x.impl: x for x in g.rows
                 if x.impl in PEERS and x.workers == r.workers and x.usable}
        if peers:
            out.append((r, peers))
    return out


def over_peer(r, peer):
    """r's median over the peer's."""
    return _ratio(_median(r), _median(peer))


def _paired(r, peer):
    """The two configurations' repetitions as pairs from the same rounds, or None when they
    did not run in the same rounds (no batch, another batch, or not as many repetitions)."""
    if (r.batch is None or r.batch != peer.batch or r.reps != peer.reps or r.reps == 0
            or min(peer.times_s) <= 0):
        return None
    return list(zip(r.times_s, peer.times_s))


def paired_over_peer(r, peer):
    """The median over rounds of r's time over the peer's in the same round: a host that
    changes speed between rounds moves both sides of a pair, where it can move one median and
    not the other."""
    pairs = _paired(r, peer)
    return None if pairs is None else statistics.median(a / b for a, b in pairs)


def rounds_ahead(r, peer):
    """(rounds in which r was faster than the peer, rounds), or None as _paired."""
    pairs = _paired(r, peer)
    return None if pairs is None else (sum(a < b for a, b in pairs), len(pairs))


def contention_pairs(groups):
    """(quiet group, [loaded groups]) for every benchmark and parameters run both ways."""
    quiet = {}
    loaded = {}
    for g in groups:
        key = (g.bench, params_key(g.params))
        if g.contend == "none":
            quiet[key] = g
        else:
            loaded.setdefault(key, []).append(g)
    return [(quiet[k], loaded[k]) for k in quiet if k in loaded]


def loaded_over_quiet(quiet, r):
    """A loaded configuration's median over the same configuration's quiet median."""
    twin = next((q for q in quiet.rows if m_key(q) == m_key(r)), None)
    return _ratio(_median(r), _median(twin))


def m_key(r):
    """A configuration apart from its load."""
    return (r.impl, r.sched, r.workers)


def sweeps(groups):
    """{(bench, contend): [groups]} for every benchmark run at two or more sizes it describes
    (work units and working set), the groups in order of working set."""
    by = {}
    for g in groups:
        if any(r.work_units and r.working_set_bytes for r in g.rows):
            by.setdefault((g.bench, g.contend), []).append(g)
    return {k: sorted(v, key=lambda g: _working_set(g)) for k, v in by.items() if len(v) >= 2}


def _working_set(g):
    return next(r.working_set_bytes for r in g.rows if r.working_set_bytes)


def sweep_series(sizes):
    """{label at the most workers: [(working set bytes, L2 bytes or None, ns per unit)]} over
    the groups of one sweep; the serial elision as its own series."""
    series = {}
    for g in sizes:
        p = max(r.workers for r in g.rows)
        for r in g.rows:
            if not r.usable or not r.work_units or (r.impl != "serial" and r.workers != p):
                continue
            name = f"{label(r)}/{r.workers}" if r.impl != "serial" else "serial"
            series.setdefault(name, []).append(
                (r.working_set_bytes, r.l2_bytes, 1e9 * r.median_s / r.work_units))
    return series


def work_efficiency(g, r):
    """T1/TS for verified locus (and taskq) rows: the cost of the runtime on 1 worker relative to
    serial elision (the same for every worker count; shown per row for reading across)."""
    if r.impl not in LOCUS_RUNTIME_IMPLS or not r.usable:
        return None
    return _ratio(_median(g.one_worker(r.impl, r.sched)), _median(g.serial()))


def busy_per_rep(r):
    """W_P: busy time of all workers for one repetition (stats are summed over the reps)."""
    if not r.usable or not r.total:
        return None
    return r.total["busy_s"] / r.reps


def work_inflation(g, r):
    """W_P/T1 for locus (and taskq) rows: how much more busy time P workers spend than 1 worker's
    run."""
    if r.impl not in LOCUS_RUNTIME_IMPLS:
        return None
    return _ratio(busy_per_rep(r), _median(g.one_worker(r.impl, r.sched)))


def per_worker_rep(r):
    """busy/idle/overhead seconds per worker per repetition, or None without stats. Only for
    verified configurations: stats cover every timed rep, times_s only the verified ones."""
    if not r.usable or not r.total:
        return None
    return {c: r.total[c] / (r.workers * r.reps) for c in COMPONENTS}


def accounted_over_median(r):
    """(busy + idle + overhead) per worker-rep over the median: about 1 when the statistics
    cover exactly the timed region, so a value far from 1 flags stats to distrust."""
    parts = per_worker_rep(r)
    return None if parts is None else sum(parts.values()) / r.median_s


def per_rep(r, value):
    """A stats count (or list of counts per level) divided by the number of repetitions."""
    if isinstance(value, list):
        return [v / r.reps for v in value]
    return value / r.reps


def breakdown_reference(g, r):
    """The configuration a time-breakdown bar is normalised to: ws with the same worker count,
    else the first scheduler present with that count (stated in the plot)."""
    same_p = [o for o in g.locus_rows() if o.workers == r.workers and per_worker_rep(o)]
    same_p.sort(key=lambda o: sched_rank(o.sched))
    return same_p[0] if same_p else None


# Parameters that size a leaf task (cutoff, rcutoff, grain, pgrain, leaf): where one is above 0,
# leaves run serial code the elision may run differently, and T1 - TS is not spawns x a spawn's
# cost.
_GRANULARITY = ("cutoff", "grain", "leaf")


def spawn_cost_defined(g):
    """Whether (T1 - TS) / spawns measures the cost of a spawn: only where every call is a task,
    which the parameters say by a `cutoff` of 0 (fib and nqueens by default) with no other
    granularity parameter above 0. A benchmark without a `cutoff` parameter may still size its
    leaves under another name (cilksort's quick, sparselu's bs), so it does not qualify."""
    p = g.params
    return p.get("cutoff") == 0 and all(
        v == 0 for k, v in p.items() if any(word in k for word in _GRANULARITY))


def locus_t1_over_ts(g, sched):
    """T1/TS of locus with sched: its 1-worker median over the serial median."""
    return _ratio(_median(g.one_worker("locus", sched)), _median(g.serial()))


def spawn_overhead_ns(g, sched):
    """(T1 - TS) / spawns per rep, in ns: the cost of one spawn when it does no parallel work.
    None unless spawn_cost_defined(g), serial and a usable 1-worker locus configuration with
    spawns exist, and T1 > TS: a spawn cannot cost less than nothing, so T1 <= TS is noise
    (shown as T1/TS)."""
    one = g.one_worker("locus", sched)
    serial = g.serial()
    if (not spawn_cost_defined(g) or one is None or serial is None or not one.total
            or one.total["spawns"] <= 0 or one.median_s <= serial.median_s):
        return None
    spawns = one.total["spawns"] / one.reps
    return (one.median_s - serial.median_s) / spawns * 1e9


def spawn_groups(groups):
    """The groups whose per-spawn cost is defined and that have a T1/TS for some scheduler."""
    return [g for g in groups if spawn_cost_defined(g)
            and any(locus_t1_over_ts(g, s) is not None for s in g.scheds())]


def one_worker_ratios(groups):
    """[(group, {configuration label: T1/TS})] over every 1-worker configuration of the groups
    without a defined per-spawn cost, where a serial reference exists."""
    found = []
    for g in groups:
        if spawn_cost_defined(g):
            continue
        ratios = {label(r): t_over_ts(g, r) for r in g.rows
                  if r.impl != "serial" and r.workers == 1}
        ratios = {k: v for k, v in ratios.items() if v is not None}
        if ratios:
            found.append((g, ratios))
    return found


def short_titles(groups):
    """A title per group naming only the parameters that tell it from the other groups of the
    same benchmark among these: a row label where every parameter would not fit."""
    titles = []
    for g in groups:
        same = [o for o in groups if o.bench == g.bench]
        shown = ", ".join(f"{k}={v}" for k, v in g.params.items()
                          if any(o.params.get(k) != v for o in same))
        title = f"{g.bench} ({shown})" if shown else g.bench
        titles.append(title if g.contend == "none" else f"{title} [contend {g.contend}]")
    return titles


def config_label(r):
    """impl/sched/P for locus, impl/P for peers, "serial": one bar of the locality plot."""
    if r.impl == "serial":
        return "serial"
    return f"{label(r)}/{r.workers}"


def locality_rows(g):
    """The group's verified configurations that carry a locality model, in row order."""
    return [r for r in g.rows if r.locality and r.verified and r.reps > 0]


def locality_levels(groups):
    """Every cache level any configuration modeled, innermost first."""
    return sorted({lv["level"] for g in groups for r in locality_rows(g)
                   for lv in r.locality["levels"]})


def modeled_misses_per_rep(r, level):
    """Modeled misses of one cache level per repetition (the model's counts are summed over
    the timed reps), or None when the level was not modeled for r."""
    for lv in r.locality["levels"]:
        if lv["level"] == level:
            return lv["misses"] / r.reps
    return None


def modeled_from_peers_per_rep(r, level):
    """Modeled misses of one level per repetition whose line another cache of the level held
    (lines from other cores' caches), or None when the level was not modeled for r or the
    result predates the count."""
    for lv in r.locality["levels"]:
        if lv["level"] == level and "from_peers" in lv:
            return lv["from_peers"] / r.reps
    return None


def modeled_miss_ratio(r, level):
    for lv in r.locality["levels"]:
        if lv["level"] == level:
            return _ratio(lv["misses"], lv["accesses"])
    return None


def mapping_stability(r):
    """Share of leaves on the same worker as in the previous iteration, or None."""
    mapping = r.locality.get("mapping") or {}
    return _ratio(mapping.get("leaves_same"), mapping.get("leaves_compared"))


def numa_remote_share(r):
    numa = r.locality.get("numa") or {}
    return _ratio(numa.get("remote_line_accesses"), numa.get("line_accesses"))


def worker_counts(groups):
    """All worker counts of parallel configurations, ascending (the summary's columns)."""
    return sorted({r.workers for g in groups for r in g.rows if r.impl != "serial"} | {1})
