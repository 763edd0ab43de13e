#!/usr/bin/env python3
"""Tests of tools/report against hand-written locus-bench output with known numbers.

    python3 tests/report/test_report.py [PATH/TO/tools/report]

The fixture (results_a.jsonl, results_b.jsonl) is chosen so every derived number is exact:
fib n=20 (no cutoff) has TS = 11 ms, locus/ws T1 = 12 ms with 10000 spawns per rep (100 ns per
spawn) and T2 = 8 ms with 13 ms of busy time per rep (W_2/T1 = 1.083); nqueens has a failed
2-worker configuration and a cutoff (so no per-spawn cost); uts has no serial configuration and
an adws run without a 1-worker partner.
Prints one line per test and 'N passed, M failed'; exits 1 when any failed.
"""

import functools
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.abspath(sys.argv[1] if len(sys.argv) > 1
                       else os.path.join(HERE, "..", "..", "tools", "report"))
FIXTURES = [os.path.join(HERE, "results_a.jsonl"), os.path.join(HERE, "results_b.jsonl")]
# locus-bench --locality output: serial and locus/ws/16 with three modeled levels summed over 3
# reps (misses 3000/2400/1200 and 3000/2700/900; locus's from other caches 300/600/150, serial's
# from before the count), tbb with "locality": null.
LOCALITY = os.path.join(HERE, "results_locality.jsonl")
# locus-bench --contend none,1 (and one locus run under 1:1000/1000): fib n=20 serial 10 ms quiet,
# 11 ms loaded; locus/ws/2 6 ms and 22 ms; tbb/2 5 ms and 8.8 ms.
CONTEND = os.path.join(HERE, "results_contend.jsonl")
# locus-bench --sweep n=100,200 of heat2d: 1e5 and 4e5 cell updates, working sets of 0.5 and 2 L2s;
# serial 0.2 and 0.8 ms (2.00 ns per update both), locus/ws/2 0.15 and 0.4 ms (1.50, 1.00).
SWEEP = os.path.join(HERE, "results_sweep.jsonl")
# locus-bench output with batches: heat2d n=100 in rounds b1, locus/ws/2 10, 20, 12 ms and
# locus/adws/2 8, 16, 11 against tbb/2 11, 18, 10 and omp/2 9, 21, 13, and under load 1 ws 30,
# 20, 25 against tbb 20, 20, 20; sor n=64 with locus (b2) and tbb (b3) from different rounds and
# no omp, locus/ws/1 without a 1-worker peer.
PEERS = os.path.join(HERE, "results_peers.jsonl")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SCRATCH = tempfile.mkdtemp(prefix="report-test-")  # removed when the run ends

sys.path.insert(0, os.path.dirname(TOOL))
from report_lib import markdown  # noqa: E402


def scratch_dir():
    return tempfile.mkdtemp(dir=SCRATCH)


def run_tool(args, env=None, command=None):
    """Runs tools/report (as an executable, so its shebang and fallback are what is tested)."""
    return subprocess.run((command or [TOOL]) + args, capture_output=True, text=True, env=env,
                          timeout=300)


@functools.lru_cache(maxsize=None)
def markdown_only():
    """One --no-plots run over both fixtures, shared by the tests that read report.md."""
    out = scratch_dir()
    proc = run_tool(FIXTURES + ["--out", out, "--no-plots", "--title", "Fixture report"])
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
        return out, proc, f.read()


def report_of(fixture, plots=False):
    """tools/report over one fixture into a fresh directory: (out, proc, report.md's text)."""
    out = scratch_dir()
    proc = run_tool([fixture, "--out", out] + ([] if plots else ["--no-plots"]))
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
        return out, proc, f.read()


def assert_lines(text, lines):
    present = set(text.splitlines())
    for line in lines:
        assert line in present, f"report.md lacks the line\n  {line}"


def test_benchmark_tables():
    """T/TS, T1/TP, T1/TS and W_P/T1 per configuration, and dashes where a reference is missing."""
    _, _, text = markdown_only()
    assert text.startswith("# Fixture report\n")
    assert_lines(text, [
        "### fib (n=20, cutoff=0)",
        "| serial | — | 1 | 11.0 ms | 10.0 ms | 3 | yes | 1.00 | 1.00 | — | — |",
        "| locus | ws | 1 | 12.0 ms | 11.8 ms | 3 | yes | 1.09 | 1.00 | 1.091 | 0.958 |",
        "| locus | ws | 2 | 8.00 ms | 7.50 ms | 3 | yes | 0.73 | 1.50 | 1.091 | 1.083 |",
        "| tbb | — | 2 | 6.90 ms | 6.80 ms | 3 | yes | 0.63 | 1.67 | — | — |",
        "| omp | — | 1 | 13.0 ms | 12.8 ms | 3 | yes | 1.18 | 1.00 | — | — |",
        "### uts (tree=S1)",
        "| locus | ws | 2 | 30.0 ms | 29.0 ms | 2 | yes | — | 1.67 | — | 1.100 |",
        "| locus | adws | 2 | 27.0 ms | 26.0 ms | 2 | yes | — | — | — | — |",
    ])


def test_unverified_listed_first():
    """A failed configuration is named before any number, and is in no ratio."""
    _, _, text = markdown_only()
    failed = text.find("## ⚠ Unverified configurations")
    assert 0 <= failed < text.find("## Summary"), "unverified section missing or not first"
    assert_lines(text, [
        "**1 configuration(s) FAILED verification.** They are listed in the tables below but "
        "left out of every ratio.",
        "| nqueens (n=8, cutoff=3) | locus/ws | 2 | `" + FIXTURES[0]
        + ":10` | verification failed: got 91, expected 92 |",
        "| locus | ws | 2 | — | — | 0 | **NO** | — | — | — | — |",
    ])


def test_summary_table():
    """Medians side by side per worker count, with T1/TS and T1/T2."""
    _, _, text = markdown_only()
    assert_lines(text, [
        "| benchmark | configuration | T (1 worker) | T (2 workers) | T1/TS | T1/T2 |",
        "| fib (n=20, cutoff=0) | locus/ws | 12.0 ms | 8.00 ms | 1.09 | 1.50 |",
        "| fib (n=20, cutoff=0) | omp | 13.0 ms | — | 1.18 | — |",
        "| nqueens (n=8, cutoff=3) | locus/ws | 2.50 ms | — | 1.25 | — |",
        "| uts (tree=S1) | locus/ws | 50.0 ms | 30.0 ms | — | 1.67 |",
    ])


def test_breakdown_and_spawn_overhead():
    """Per worker-rep times, per-rep counts by steal level, and (T1 - TS) / spawns in ns for fib
    alone: nqueens has a cutoff."""
    _, _, text = markdown_only()
    assert_lines(text, [
        "| fib (n=20, cutoff=0) | ws | 2 | 6.50 ms | 800 µs | 200 µs | 86.7% | 0.94 | 10000 "
        "| L0 0, L1 2, L2 1 | L0 0, L1 10, L2 0 | 40 |",
        "| uts (tree=S1) | ws | 2 | 27.5 ms | 2.00 ms | 500 µs | 91.7% | 1.00 | 1000 "
        "| L0 0, L1 5, L2 0 | L0 0, L1 12.5, L2 0 | 7 |",
        "| fib (n=20, cutoff=0) | ws | 12.0 ms | 11.0 ms | 1.09 | 10000 | 100.0 |",
    ])
    assert "| uts (tree=S1) | ws | 50.0 ms" not in text, "per-spawn row without a serial run"
    assert "| nqueens (n=8, cutoff=3) | ws | 2.50 ms" not in text, "per-spawn row with a cutoff"


def test_printed_paths():
    """stdout lists exactly the files written."""
    out, proc, _ = markdown_only()
    printed = proc.stdout.split()
    assert printed == [os.path.join(out, "report.md")], printed
    assert sorted(os.listdir(out)) == ["report.md"]


def test_plots():
    """With matplotlib: four valid PNGs, linked from report.md. Without: exit 1 naming the
    package."""
    out = scratch_dir()
    proc = run_tool(FIXTURES + ["--out", out])
    if not harness.matplotlib_importable():
        assert proc.returncode == 1 and "python3-matplotlib" in proc.stderr, proc.stderr
        print("  (matplotlib not importable: checked the error message instead of the PNGs)")
        return
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    names = ["speedup.png", "breakdown.png", "spawn_overhead.png", "work_efficiency.png"]
    assert proc.stdout.split() == [os.path.join(out, n) for n in ["report.md"] + names]
    for name in names:
        with open(os.path.join(out, name), "rb") as f:
            assert f.read(8) == PNG_MAGIC, f"{name} is not a PNG"
    with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
        text = f.read()
    assert "![Speed-up over serial elision](speedup.png)" in text


def test_missing_matplotlib_names_package():
    """A matplotlib that cannot be imported gives exit 1 and names the Debian package."""
    hide = scratch_dir()
    with open(os.path.join(hide, "matplotlib.py"), "w") as f:
        f.write("raise ImportError('hidden by test_report.py')\n")
    env = dict(os.environ, PYTHONPATH=hide, LOCUS_REPORT_REEXEC="1")
    proc = run_tool(FIXTURES + ["--out", os.path.join(hide, "out")], env=env,
                    command=[sys.executable, TOOL])
    assert proc.returncode == 1, f"exit {proc.returncode}"
    assert "python3-matplotlib" in proc.stderr and "--no-plots" in proc.stderr, proc.stderr
    assert not os.path.exists(os.path.join(hide, "out", "report.md"))


def test_malformed_lines_exit_2():
    """Bad JSON and a missing field are rejected with exit 2, naming file and line."""
    work = scratch_dir()
    with open(FIXTURES[1], encoding="utf-8") as f:
        good = f.readline()
    cases = {
        "not-json.jsonl": (good + "\n{\"bench\": \n", ":3: not valid JSON"),
        "no-workers.jsonl": (good.replace('"workers":1,', ""), ":1: missing field 'workers'"),
        "bad-stats.jsonl": (good.replace('"busy_s":0.098,', "", 1), ":1: stats.total has no"),
    }
    for name, (content, expected) in cases.items():
        path = os.path.join(work, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)
        proc = run_tool([FIXTURES[0], path, "--out", os.path.join(work, "out"), "--no-plots"])
        assert proc.returncode == 2, f"{name}: exit {proc.returncode}"
        assert path + expected in proc.stderr, f"{name}: {proc.stderr}"


def test_repeated_configuration_keeps_later():
    """The same configuration in two files: the later line is used, with a warning."""
    work = scratch_dir()
    rerun = os.path.join(work, "rerun.jsonl")
    with open(FIXTURES[1], encoding="utf-8") as f:
        line = f.readline().replace('"median_s":0.050', '"median_s":0.040')
    with open(rerun, "w", encoding="utf-8") as f:
        f.write(line)
    proc = run_tool(FIXTURES + [rerun, "--out", work, "--no-plots"])
    assert proc.returncode == 0, proc.stderr
    assert f"{rerun}:1 repeats the configuration of {FIXTURES[1]}:1" in proc.stderr
    with open(os.path.join(work, "report.md"), encoding="utf-8") as f:
        assert "| uts (tree=S1) | locus/ws | 40.0 ms | 30.0 ms | — | 1.33 |" in f.read()


def test_locality_model():
    """Modeled misses per rep and level, lines from other caches of the level (a dash for results
    from before that count), miss ratios, NUMA remote share and mapping stability;
    the peer without a model is left out; the miss bars are drawn when matplotlib is there."""
    plots = harness.matplotlib_importable()
    out, proc, text = report_of(LOCALITY, plots)
    assert_lines(text, [
        "## Locality model",
        "| benchmark | configuration | L1 misses/rep | L2 misses/rep | L3 misses/rep "
        "| L1 from other L1s/rep | L2 from other L2s/rep | L3 from other L3s/rep "
        "| L1 miss ratio | L2 miss ratio | L3 miss ratio | NUMA remote | mapping stability |",
        "| heat2d (n=480) | serial | 1000 | 800 | 400 | — | — | — | 100.0% | 80.0% | 50.0% | 0.0% "
        "| 100.0% |",
        "| heat2d (n=480) | locus/ws/16 | 1000 | 900 | 300 | 100 | 200 | 50 | 100.0% | 90.0% "
        "| 33.3% | 25.0% | 75.0% |",
    ])
    assert "| heat2d (n=480) | tbb/16 |" not in text, "a configuration without a model"
    if plots:
        path = os.path.join(out, "modeled_misses.png")
        assert path in proc.stdout.split(), proc.stdout
        with open(path, "rb") as f:
            assert f.read(8) == PNG_MAGIC
        assert "![Modeled misses per cache level](modeled_misses.png)" in text
    # Without locality data there is no such section.
    _, _, plain = markdown_only()
    assert "## Locality model" not in plain


def test_malformed_locality_exit_2():
    """A "locality" value without levels is rejected, naming file and line."""
    work = scratch_dir()
    with open(LOCALITY, encoding="utf-8") as f:
        first = f.readline()
    path = os.path.join(work, "bad-locality.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        f.write(first.replace('"levels":', '"levelz":'))
    proc = run_tool([path, "--out", os.path.join(work, "out"), "--no-plots"])
    assert proc.returncode == 2, f"exit {proc.returncode}"
    assert path + ":1: locality has no 'levels' array" in proc.stderr, proc.stderr


def test_contention():
    """Each configuration quiet and under each load side by side; ratios within one load."""
    _, _, text = report_of(CONTEND)
    assert "## Quiet and contended" in text
    assert_lines(text, [
        "### fib (n=20)",
        "| configuration | workers | quiet | T/TS | contend 1 | × quiet | T/TS "
        "| contend 1:1000/1000 | × quiet | T/TS |",
        "| serial | 1 | 10.0 ms | 1.00 | 11.0 ms | 1.10 | 1.00 | — | — | — |",
        "| locus/ws | 2 | 6.00 ms | 0.60 | 22.0 ms | 3.67 | 2.00 | 12.0 ms | 2.00 | — |",
        "| tbb | 2 | 5.00 ms | 0.50 | 8.80 ms | 1.76 | 0.80 | — | — | — |",
        # The per-benchmark tables keep each load apart.
        "### fib (n=20) [contend 1]",
        "| locus | ws | 2 | 22.0 ms | 21.0 ms | 3 | yes | 2.00 | — | — | — |",
    ])
    # No load: no section.
    _, _, plain = markdown_only()
    assert "## Quiet and contended" not in plain


def test_size_sweep():
    """ns per elementary update at each working set, in L2s; a size_sweep plot with matplotlib."""
    plots = harness.matplotlib_importable()
    out, _, text = report_of(SWEEP, plots)
    assert_lines(text, [
        "## Size sweep",
        "### heat2d: ns per cell update",
        "| working set | serial | locus/ws/2 |",
        "| 0.50 MiB (0.50 L2) | 2.00 | 1.50 |",
        "| 2.00 MiB (2.00 L2) | 2.00 | 1.00 |",
    ])
    if plots:
        with open(os.path.join(out, "size_sweep.png"), "rb") as f:
            assert f.read(8) == PNG_MAGIC
    _, _, plain = markdown_only()
    assert "## Size sweep" not in plain


def test_against_peers():
    """Medians and round-by-round ratios against each peer at the same worker count and load;
    pairs only from the same rounds."""
    _, _, text = report_of(PEERS)
    summary, peers = text.find("## Summary"), text.find("## locus against oneTBB and OpenMP")
    assert 0 <= summary < peers < text.find("## Results per benchmark"), "section misplaced"
    assert_lines(text, [
        "| benchmark | configuration | workers | ÷ tbb | paired | rounds faster | ÷ omp | paired "
        "| rounds faster |",
        # 12/11; pairs 10/11, 20/18, 12/10; 12/13; pairs 10/9, 20/21, 12/13.
        "| heat2d (n=100) | locus/ws | 2 | 1.091 | 1.111 | 1/3 | 0.923 | 0.952 | 2/3 |",
        "| heat2d (n=100) | locus/adws | 2 | 1.000 | 0.889 | 2/3 | 0.846 | 0.846 | 3/3 |",
        # A load compares within itself; a tie is not a round faster.
        "| heat2d (n=100) [contend 1] | locus/ws | 2 | 1.250 | 1.250 | 0/3 | — | — | — |",
        # Different rounds: medians only.
        "| sor (n=64) | locus/ws | 2 | 1.250 | — | — | — | — | — |",
    ])
    assert "| sor (n=64) | locus/ws | 1 |" not in text, "a configuration without a peer"
    # Output without batches (before they existed): medians, no pairs; and a lone peer's columns.
    _, _, plain = markdown_only()
    assert_lines(plain, [
        "| benchmark | configuration | workers | ÷ tbb | paired | rounds faster | ÷ omp | paired "
        "| rounds faster |",
        "| fib (n=20, cutoff=0) | locus/ws | 1 | 1.043 | — | — | 0.923 | — | — |",
        "| fib (n=20, cutoff=0) | locus/ws | 2 | 1.159 | — | — | — | — | — |",
    ])
    _, _, contend = report_of(CONTEND)
    assert_lines(contend, ["## locus against oneTBB",
                           "| benchmark | configuration | workers | ÷ tbb | paired | rounds faster |"])


def test_bad_batch_exit_2():
    work = scratch_dir()
    with open(PEERS, encoding="utf-8") as f:
        good = f.readline()
    for bad in ('"batch":5,', '"batch":"",'):
        path = os.path.join(work, "bad-batch.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.write(good.replace('"batch":"b1",', bad))
        proc = run_tool([path, "--out", os.path.join(work, "out"), "--no-plots"])
        assert proc.returncode == 2, f"{bad}: exit {proc.returncode}"
        assert path + ":1: field 'batch' must be a non-empty string" in proc.stderr, proc.stderr


def test_time_units():
    """Three significant digits in the unit that keeps the value at least 1."""
    cases = {12.3456: "12.3 s", 1.0: "1.00 s", 0.25: "250 ms", 3.4e-5: "34.0 µs",
             7.5e-8: "75.0 ns", 0: "0", None: "—"}
    for seconds, text in cases.items():
        assert markdown.fmt_time(seconds) == text, f"{seconds}: {markdown.fmt_time(seconds)}"


TESTS = [test_benchmark_tables, test_unverified_listed_first, test_summary_table,
         test_breakdown_and_spawn_overhead, test_printed_paths, test_plots,
         test_missing_matplotlib_names_package, test_malformed_lines_exit_2,
         test_repeated_configuration_keeps_later, test_locality_model,
         test_malformed_locality_exit_2, test_contention, test_size_sweep,
         test_against_peers, test_bad_batch_exit_2, test_time_units]


def main():
    return harness.run_tests(TESTS, SCRATCH)


if __name__ == "__main__":
    sys.exit(main())
