#!/usr/bin/env python3
"""Tests that tools/report's plots fit a screen for a whole suite, and where per-spawn cost shows.

    python3 tests/report/test_report_plots.py [PATH/TO/tools/report]

Writes a synthetic main-job result: the 26 benchmarks of the suite with their medium parameters
(and uts's second tree), serial, locus under eight schedulers, tbb and omp on 1 and 2 workers,
quiet and under two --contend loads, a heat2d size sweep and matmul with the locality model.
Checks that every PNG is at most 2400 pixels on its long side and linked from report.md, and
that per-spawn cost is shown for fib and nqueens (cutoff 0) alone, nqueens/adws, whose T1 is
below TS, as within noise. Without matplotlib only the Markdown is checked (and the exit status
that names the missing package). Prints one line per test and 'N passed, M failed'.
"""

import json
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.abspath(sys.argv[1] if len(sys.argv) > 1
                       else os.path.join(HERE, "..", "..", "tools", "report"))
MAX_SIDE_PX = 2400
SCRATCH = tempfile.mkdtemp(prefix="report-plots-test-")  # removed when the run ends

# Medium parameters as `locus-bench info` lists them; fib and nqueens spawn at every call.
SUITE = [
    ("fib", {"n": 30, "cutoff": 0}),
    ("nqueens", {"n": 12, "cutoff": 0}),
    ("uts", {"tree": "T1", "type": "geo", "b0": 4, "d": 6, "shape": "linear", "q": 0.234375,
             "m": 4, "r": 0, "f": 0.5}),
    ("uts", {"tree": "T3", "type": "bin", "b0": 2000, "d": 6, "shape": "linear", "q": 0.124875,
             "m": 8, "r": 42, "f": 0.5}),
    ("rrm", {"n": 33554432, "alpha": 1, "repeats": 3, "cutoff": 32768, "grain": 65536,
             "hints": 1}),
    ("quicksort", {"n": 8388608, "cutoff": 8192, "pgrain": 8192}),
    ("kdtree", {"n": 8388608, "leaf": 170, "rcutoff": 2730, "pgrain": 2730}),
    ("dtree", {"rows": 200000, "test": 50000, "max_depth": 17, "min_leaf": 20, "bins": 64,
               "grain": 1129, "rcutoff": 282}),
    ("matmul", {"n": 2048, "leaf": 64, "pad": 32}),
    ("matmul-z", {"n": 2048, "leaf": 64}),
    ("strassen", {"n": 2048, "cutoff": 64, "leaf": 64, "pad": 32}),
    ("strassen-z", {"n": 2048, "cutoff": 64, "leaf": 64}),
    ("heat2d", {"n": 2048, "iters": 20, "leaf": 64, "pad": 256, "seed": 1}),
    ("heat", {"rows": 1024, "cols": 512, "iters": 500, "cutoff": 8}),
    ("heat-ub", {"rows": 1024, "cols": 512, "iters": 500, "cutoff": 8}),
    ("sor", {"rows": 1024, "cols": 512, "iters": 300, "omega": 1.5, "cutoff": 8, "seed": 1}),
    ("sor-ub", {"rows": 1024, "cols": 512, "iters": 300, "omega": 1.5, "cutoff": 8, "seed": 1}),
    ("ge", {"n": 1536, "cutoff": 8, "seed": 1}),
    ("ge-ub", {"n": 1536, "cutoff": 8, "seed": 1}),
    ("sph", {"side": 32, "steps": 5, "leaf": 32, "seed": 1}),
    ("cg", {"class": "W", "grain": 256}),
    ("cilksort", {"n": 5000000, "quick": 2048, "merge": 2048, "insertion": 20, "seed": 1}),
    ("hull", {"n": 10000000, "dist": "disk", "cutoff": 10000, "seed": 1}),
    ("mandelbrot", {"width": 1024, "height": 1024, "max_iter": 500, "leaf": 32}),
    ("knapsack", {"n": 54, "spread": 20, "cutoff": 12, "first": "skip", "seed": 1}),
    ("fft", {"log2n": 23, "cutoff": 4096}),
    ("sparselu", {"nb": 50, "bs": 64}),
]
NO_CUTOFF = ["fib", "nqueens"]
SCHEDS = ["ws", "adws", "ml-adws", "ml-ws", "numa-ws", "hws", "cats", "tao"]
LOADS = ["none", "1", "1:1000/1000"]
LEVELS = [{"level": lv, "accesses": 4e6, "misses": 4e6 / (2 * lv)} for lv in (1, 2, 3)]


def line(bench, params, impl, sched, workers, median, load, spawns=0, **extra):
    """One locus-bench --json line; locus lines carry stats summed over 3 reps."""
    obj = {"bench": bench, "impl": impl, "sched": sched, "workers": workers, "params": params,
           "times_s": [median * 0.98, median, median * 1.03], "median_s": median,
           "min_s": median * 0.98, "verified": True, "result": "ok", "stats": {}}
    if load != "none":
        obj["contend"] = load
    if impl == "locus":
        busy = 3 * median * workers * 0.9
        total = {"worker": -1, "busy_s": busy, "idle_s": busy / 15, "overhead_s": busy / 30,
                 "spawns": 3 * spawns, "suspensions": 4 * workers, "local_resumes": 0,
                 "sleeps": 0, "mailbox_pushes": 0, "steals_by_level": [0, workers - 1, 0],
                 "failed_steals_by_level": [0, 3 * workers, 0]}
        obj["stats"] = {"scheduler": sched, "suppressed_exceptions": 0, "total": total,
                        "workers": [dict(total, worker=w) for w in range(workers)]}
    obj.update(extra)
    return obj


def configurations(bench, params, ts, load, **extra):
    """serial, locus under every scheduler and the peers on 1 and 2 workers."""
    slow = 1.0 if load == "none" else 1.6
    out = [line(bench, params, "serial", None, 1, ts * slow, load, **extra)]
    t1_over_ts = 4.0 if bench in NO_CUTOFF else 1.05
    for k, sched in enumerate(SCHEDS):
        t1 = ts * slow * (t1_over_ts + 0.02 * k)
        if bench == "nqueens" and sched == "adws":
            t1 = ts * slow * 0.97  # noise beat the serial elision
        spawns = 2e6 if bench in NO_CUTOFF else 5000
        out.append(line(bench, params, "locus", sched, 1, t1, load, spawns, **extra))
        out.append(line(bench, params, "locus", sched, 2, t1 * slow / 1.8, load, spawns, **extra))
    for impl in ("tbb", "omp"):
        out += [line(bench, params, impl, None, p, ts * slow * 1.1 / (0.9 * p), load, **extra)
                for p in (1, 2)]
    return out


def suite_fixture(path):
    """Writes the whole fixture to path as JSON lines."""
    lines = []
    for i, (bench, params) in enumerate(SUITE):
        for load in LOADS:
            lines += configurations(bench, params, 0.05 + 0.01 * i, load)
    for n in (512, 1024, 4096):
        cells = n * n * 20
        lines += configurations("heat2d", {"n": n, "iters": 20, "leaf": 64, "pad": 256, "seed": 1},
                                2e-9 * cells * (1 + n / 4096), "none", work_units=cells,
                                unit="cell update", working_set_bytes=16 * n * n,
                                l2_bytes=2 ** 21)
    for obj in configurations("matmul", {"n": 1024, "leaf": 64, "pad": 32}, 0.2, "none"):
        obj["locality"] = {"levels": LEVELS, "mapping": {}}
        lines.append(obj)
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(obj) + "\n" for obj in lines)


def png_size(path):
    """(width, height) from the IHDR chunk, which a PNG must start with."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path}: not a PNG"
    return struct.unpack(">II", head[16:24])


def report(plots):
    """tools/report over the suite fixture: (out dir, exit status, stdout, stderr, report.md)."""
    out = tempfile.mkdtemp(dir=SCRATCH)
    results = os.path.join(out, "results.jsonl")
    suite_fixture(results)
    proc = subprocess.run([TOOL, results, "--out", out] + ([] if plots else ["--no-plots"]),
                          capture_output=True, text=True, timeout=300)
    md = os.path.join(out, "report.md")
    text = open(md, encoding="utf-8").read() if os.path.exists(md) else ""
    return out, proc.returncode, proc.stdout, proc.stderr, text


def spawn_rows(text):
    """(benchmark, sched, ns per spawn) of the per-spawn table."""
    section = text.split("## Per-spawn overhead", 1)[1].split("\n## ", 1)[0]
    rows = []
    for row in section.splitlines():
        if row.startswith("| ") and not row.startswith("| benchmark"):
            cells = [c.strip() for c in row.strip().strip("|").split("|")]
            rows.append((cells[0], cells[1], cells[-1]))
    return rows


def test_spawn_cost_only_without_cutoff():
    """The per-spawn table names fib and nqueens alone, never a negative cost."""
    _, rc, _, err, text = report(plots=False)
    assert rc == 0, f"exit {rc}: {err}"
    rows = spawn_rows(text)
    benches = {b.split(" ")[0] for b, _, _ in rows}
    assert benches == set(NO_CUTOFF), f"per-spawn cost of {sorted(benches)}"
    assert len(rows) == len(NO_CUTOFF) * len(LOADS) * len(SCHEDS), len(rows)
    for bench, sched, cost in rows:
        if bench.startswith("nqueens") and sched == "adws":
            assert cost == "within noise", (bench, sched, cost)
        else:
            assert float(cost) > 0, (bench, sched, cost)


def test_every_png_fits_a_screen():
    """Every PNG at most 2400 px on its long side, printed, and linked from report.md;
    spawn_overhead shows only the benchmarks without a cutoff, T1/TS plots the others."""
    out, rc, stdout, err, text = report(plots=True)
    if not harness.matplotlib_importable():
        assert rc == 1 and "python3-matplotlib" in err, err
        print("  (matplotlib not importable: checked the error message instead of the PNGs)")
        return
    assert rc == 0, f"exit {rc}: {err}"
    pngs = sorted(n for n in os.listdir(out) if n.endswith(".png"))
    assert sorted(os.path.basename(p) for p in stdout.split() if p.endswith(".png")) == pngs
    for stem in ("speedup", "breakdown", "spawn_overhead", "work_efficiency", "modeled_misses",
                 "size_sweep"):
        assert any(re.fullmatch(stem + r"(-\d+)?\.png", n) for n in pngs), f"no {stem} in {pngs}"
    too_big = {n: png_size(os.path.join(out, n)) for n in pngs
               if max(png_size(os.path.join(out, n))) > MAX_SIDE_PX}
    assert not too_big, f"PNGs over {MAX_SIDE_PX} px: {too_big}"
    for name in pngs:
        assert f"]({name})" in text, f"report.md does not link {name}"
    captions = dict(re.findall(r"^\*\*(.+?)\*\*: (.*)$", text, re.M))
    assert captions["locus per-spawn cost (no cutoff)"] == ", ".join(NO_CUTOFF), captions
    rest = {b for k, v in captions.items() if k.startswith("T1/TS") for b in v.split(", ")}
    assert rest == {b for b, _ in SUITE} - set(NO_CUTOFF), rest


TESTS = [test_spawn_cost_only_without_cutoff, test_every_png_fits_a_screen]


def main():
    return harness.run_tests(TESTS, SCRATCH)


if __name__ == "__main__":
    sys.exit(main())
