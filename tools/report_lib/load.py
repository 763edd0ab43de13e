"""Reading `locus-bench run --json` output (one JSON object per configuration per line)."""

import json
import sys
from dataclasses import dataclass


class InputError(Exception):
    """A file that cannot be read or a malformed line; the message names file and line."""


@dataclass
class Result:
    """One configuration (impl, sched, workers) of one benchmark with its parameters."""

    bench: str
    params: dict
    impl: str
    sched: str | None
    workers: int
    times_s: list
    median_s: float | None
    min_s: float | None
    verified: bool
    error: str | None
    stats: dict
    where: str  # "FILE:LINE", for messages
    # locus-bench --locality: locality_report::to_json() summed over the timed reps, or None
    # (no --locality, or an implementation the model does not cover).
    locality: dict | None = None
    # locus-bench --contend: the load the configuration ran under ("1", "1:1000/1000"), or
    # "none" (the line has no "contend").
    contend: str = "none"
    # The interleaved rounds the configuration ran in (locus-bench's "batch"): configurations with
    # the same batch ran repetition i in the same round; None in output that predates it.
    batch: str | None = None
    # Benchmarks that describe their size (locus-bench --sweep): elementary updates per run and
    # their name, bytes one pass touches, and this machine's L2 per core; None when absent.
    work_units: float | None = None
    unit: str | None = None
    working_set_bytes: float | None = None
    l2_bytes: float | None = None

    @property
    def reps(self):
        return len(self.times_s)

    @property
    def usable(self):
        """Only verified configurations with timed reps and a positive median serve in ratios."""
        return self.verified and self.reps > 0 and self.median_s is not None and self.median_s > 0

    @property
    def total(self):
        """stats.total (summed over workers and timed reps), or None (non-locus, or no reps)."""
        return self.stats.get("total")

    def key(self):
        """Identity of a configuration: two lines with the same key describe the same thing."""
        return (self.bench, params_key(self.params), self.impl, self.sched, self.workers,
                self.contend)


def params_key(params):
    """Canonical text of a params object, so {"a":1,"b":2} and {"b":2,"a":1} group together."""
    return json.dumps(params, sort_keys=True)


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_count_list(v):
    return isinstance(v, list) and all(_is_number(x) for x in v)


# Field -> (check, what it must be). A failed configuration still has all of these; its medians
# are null when no repetition verified.
_FIELDS = {
    "bench": (lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "impl": (lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "sched": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "workers": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
                "a positive integer"),
    "params": (lambda v: isinstance(v, dict), "an object"),
    "times_s": (_is_count_list, "an array of numbers"),
    "median_s": (lambda v: v is None or _is_number(v), "a number or null"),
    "min_s": (lambda v: v is None or _is_number(v), "a number or null"),
    "verified": (lambda v: isinstance(v, bool), "true or false"),
    "stats": (lambda v: isinstance(v, dict), "an object"),
}

# What every worker record in locus stats (total and per worker) must carry for the report.
_WORKER_FIELDS = {
    "busy_s": _is_number,
    "idle_s": _is_number,
    "overhead_s": _is_number,
    "spawns": _is_number,
    "suspensions": _is_number,
    "steals_by_level": _is_count_list,
    "failed_steals_by_level": _is_count_list,
}


def _check_worker_record(record, name):
    """Returns a problem with one stats worker record (total or per worker), or None."""
    if not isinstance(record, dict):
        return f"{name} is not an object"
    for field, ok in _WORKER_FIELDS.items():
        if field not in record:
            return f"{name} has no '{field}'"
        if not ok(record[field]):
            return f"{name}.{field} has the wrong type"
    return None


def _check_stats(stats):
    """Returns a problem with a stats object, or None; {} (non-locus impls) is fine."""
    if "total" not in stats:
        return None
    problem = _check_worker_record(stats["total"], "stats.total")
    if problem:
        return problem
    workers = stats.get("workers", [])
    if not isinstance(workers, list):
        return "stats.workers is not an array"
    for i, w in enumerate(workers):
        problem = _check_worker_record(w, f"stats.workers[{i}]")
        if problem:
            return problem
    return None


def _check_locality(loc):
    """Returns a problem with a "locality" value, or None; null is fine."""
    if loc is None:
        return None
    if not isinstance(loc, dict):
        return "locality is neither an object nor null"
    levels = loc.get("levels")
    if not isinstance(levels, list):
        return "locality has no 'levels' array"
    for i, lv in enumerate(levels):
        if not isinstance(lv, dict):
            return f"locality.levels[{i}] is not an object"
        for field in ("level", "accesses", "misses"):
            if not _is_number(lv.get(field)):
                return f"locality.levels[{i}] has no number '{field}'"
    mapping = loc.get("mapping", {})
    if not isinstance(mapping, dict):
        return "locality.mapping is not an object"
    return None


def parse_line(text, where):
    """Parses one non-blank line into a Result; raises InputError naming `where` otherwise."""
    try:
        obj = json.loads(text)
    except ValueError as e:
        raise InputError(f"{where}: not valid JSON ({e})") from None
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    for field, (ok, what) in _FIELDS.items():
        if field not in obj:
            raise InputError(f"{where}: missing field '{field}'")
        if not ok(obj[field]):
            raise InputError(f"{where}: field '{field}' must be {what}, got {obj[field]!r}")
    problem = _check_stats(obj["stats"])
    if problem:
        raise InputError(f"{where}: {problem}")
    problem = _check_locality(obj.get("locality"))
    if problem:
        raise InputError(f"{where}: {problem}")
    for field in ("work_units", "working_set_bytes", "l2_bytes"):
        if field in obj and not (_is_number(obj[field]) and obj[field] > 0):
            raise InputError(f"{where}: field '{field}' must be a positive number, got "
                             f"{obj[field]!r}")
    contend = obj.get("contend", "none")
    if not isinstance(contend, str) or contend == "":
        raise InputError(f"{where}: field 'contend' must be a non-empty string, got {contend!r}")
    batch = obj.get("batch")
    if batch is not None and not (isinstance(batch, str) and batch != ""):
        raise InputError(f"{where}: field 'batch' must be a non-empty string, got {batch!r}")
    error = obj.get("error")
    return Result(bench=obj["bench"], params=obj["params"], impl=obj["impl"], sched=obj["sched"],
                  workers=obj["workers"], times_s=obj["times_s"], median_s=obj["median_s"],
                  min_s=obj["min_s"], verified=obj["verified"],
                  error=error if isinstance(error, str) else None, stats=obj["stats"],
                  where=where, locality=obj.get("locality"), contend=contend, batch=batch,
                  work_units=obj.get("work_units"), unit=obj.get("unit"),
                  working_set_bytes=obj.get("working_set_bytes"), l2_bytes=obj.get("l2_bytes"))


def read_file(path):
    """All results in one file, skipping blank lines."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text ({e.reason})") from None
    return [parse_line(text, f"{path}:{n}")
            for n, text in enumerate(lines, start=1) if text.strip()]


def read_all(paths, warn=sys.stderr):
    """The concatenation of all files; a configuration seen twice keeps its later line (with a
    warning), since ratios need one median per configuration."""
    by_key = {}
    for path in paths:
        for r in read_file(path):
            earlier = by_key.pop(r.key(), None)
            if earlier is not None:
                print(f"tools/report: warning: {r.where} repeats the configuration of "
                      f"{earlier.where}; using {r.where}", file=warn)
            by_key[r.key()] = r
    return list(by_key.values())
