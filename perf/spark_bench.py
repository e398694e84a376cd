#!/usr/bin/env python3
"""PySpark driver benchmark: stock PySpark (spark-submit + py4j sockets) against PySpark
on py4jni in-process (``py4jni.pyspark.enable()``). ``bash perf/run.sh --spark`` runs it;
it is not part of the default suite.

    python perf/spark_bench.py [--quick] [--rounds N] [--cold-reps N] [--out DIR]

py4jni's workers keep their class-data-sharing archives in a temporary cache directory:
its first session (recording the classes it loads, then the background dump of the
class-path archive) is timed apart, before COLD-session, whose py4jni runs use that
archive. ``--quick`` leaves out the 10M-row scenarios, runs the 1M-row ones once (without
a warm-up run) and the phases of stock and py4jni once per JDK: a few minutes.

Each backend's driver lives in a worker process of its own (this file with
``--worker stock|py4jni``), holding one local[2] session for the whole run
(perf/framework_bench.py: the worker protocol and interleaved rounds, shared with
perf/flink_bench.py). Round by round, for each scenario, each worker runs the scenario
once (a loop scenario runs its 1000 calls) and reports the wall time; the report gives
the median and min-max of the rounds and the stock/py4jni ratio. The scenarios of
FEW_ROUNDS, which take seconds a run, have fewer rounds, so that a full run fits in 30
minutes on this project's 2-core VM. COLD-session is measured apart: a fresh process
per repetition, from the spawn of its interpreter to the first ``range(1).count()``
answered.

Results go to perf/results/<date>-<machine>-spark[-quick]/: results.json (every round),
report.md and spark.png; then perf/spark_phases.py runs on JDK 17 and Temurin 25 (those
installed) into the same directory: phases-<jdk>.json, phases.md, phases.png
(``--no-phases`` leaves it out). Exit status 1 when a figure is missing: a scenario
that raised, a worker that crashed or timed out (it is started again for the rest of
the run), a cold start or the phases' run that failed, a first use that made no
class-path archive; report.md lists them first, in a "Failed" table.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time

import framework_bench

HERE = os.path.dirname(os.path.abspath(__file__))
BACKENDS = framework_bench.BACKENDS
# name -> (what it does, how many driver calls one run makes; None: one operation)
SCENARIOS = {
    "S1-getConf": ("1000 x spark.sparkContext.getConf().get(...)", 1000),
    "S2-jvm-static": ("1000 x sc._jvm.java.lang.System.nanoTime()", 1000),
    "S3-schema-200": ("createDataFrame of one row with a 200-field schema", None),
    "S4-range-count": ("spark.range(10).count()", None),
    "S5-collect-100k": ("spark.range(100000).collect()", None),
    "S6-toPandas-100k": ("toPandas() of 100k rows x 2 columns (no Arrow)", None),
    "S7-toPandas-100k-arrow": ("toPandas() of 100k rows x 2 columns (Arrow)", None),
    "S8-collect-1M": ("collect() of 1M rows x 2 longs", None),
    "S9-toPandas-1M": ("toPandas() of 1M rows x 2 (no Arrow)", None),
    "S10-toPandas-1M-arrow": ("toPandas() of 1M rows x 2 (Arrow)", None),
    "S11-createDataFrame-1M-arrow": ("createDataFrame(pandas 1M x 2, Arrow).count()", None),
    "S12-parallelize-1M": ("sc.parallelize(list of 1M ints, 2).count()", None),
    "S13-broadcast-1M": ("sc.broadcast(list of 1M ints) read by 2 tasks", None),
    "S14-toPandas-10M-arrow": ("toPandas() of 10M rows x 2 (Arrow)", None),
    "S15-createDataFrame-10M-arrow": ("createDataFrame(pandas 10M x 2, Arrow).count()", None),
}
# The data paths at 10M rows and toArrow() (the Arrow collect py4jni hands over in memory
# in-process): rows of _dataplane_scenarios.
DATAPLANE_SCENARIOS = {
    "S16-toArrow-1M": ("toArrow() of 1M rows x 2", None),
    "S17-toArrow-10M": ("toArrow() of 10M rows x 2", None),
    "S18-parallelize-10M": ("sc.parallelize(list of 10M ints, 2).count()", None),
    "S19-broadcast-10M": ("sc.broadcast(list of 10M ints) read by 2 tasks", None),
}
SCENARIOS.update(DATAPLANE_SCENARIOS)
# Left out of --quick runs (each takes seconds).
SLOW = ("S14-toPandas-10M-arrow", "S15-createDataFrame-10M-arrow", "S17-toArrow-10M",
        "S18-parallelize-10M", "S19-broadcast-10M")
COLD = "COLD-session"
# Rounds of a full run; the scenarios named here, which take seconds a run, have at most
# their count (1 in --quick), so that a full run stays under 30 minutes on this project's
# 2-core VM (the sum, from a run's per-round figures, is in perf/README.md).
ROUNDS = 11
FEW_ROUNDS = {"S8-collect-1M": 5, "S9-toPandas-1M": 5, "S11-createDataFrame-1M-arrow": 5,
              "S14-toPandas-10M-arrow": 7, "S15-createDataFrame-10M-arrow": 5,
              "S17-toArrow-10M": 7, "S18-parallelize-10M": 5, "S19-broadcast-10M": 5}
# perf/spark_phases.py's repetitions per backend in a full run
PHASES_REPS = "3"


# ---------------------------------------------------------------- worker side

def _session(mode: str):
    if mode == "py4jni":
        import py4jni.pyspark
        py4jni.pyspark.enable()
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.range(1).count()
    return spark


def _scenarios(spark):
    from pyspark.sql.types import LongType, StructField, StructType
    sc = spark.sparkContext
    schema = StructType([StructField(f"c{i}", LongType()) for i in range(200)])
    row = [tuple(range(200))]
    df100k = spark.range(100000).selectExpr("id", "id * 2 AS x")

    def getconf():
        for _ in range(1000):
            sc.getConf().get("spark.master")

    def jvm_static():
        system = sc._jvm.java.lang.System
        for _ in range(1000):
            system.nanoTime()

    def to_pandas(arrow):
        def run():
            spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", str(arrow).lower())
            df100k.toPandas()
        return run

    import pandas as pd
    frames = {n: spark.range(n).selectExpr("id", "id * 2 AS x") for n in (10**6, 10**7)}
    pandas = {n: pd.DataFrame({"id": range(n), "x": range(0, 2 * n, 2)}) for n in (10**6,)}
    values = list(range(10**6))

    def arrow(on):
        spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true" if on else "false")

    def to_pandas_n(n, on):
        def run():
            arrow(on)
            assert len(frames[n].toPandas()) == n
        return run

    def create_df(n):
        def run():
            arrow(True)
            pdf = pandas.get(n)
            if pdf is None:
                pdf = pandas[n] = pd.DataFrame({"id": range(n), "x": range(0, 2 * n, 2)})
            assert spark.createDataFrame(pdf).count() == n
        return run

    def broadcast():
        b = sc.broadcast(values)
        assert sc.parallelize([0, 1], 2).map(lambda i: len(b.value)).collect() == [10**6] * 2
        b.unpersist()

    return {
        "S8-collect-1M": lambda: frames[10**6].collect(),
        "S9-toPandas-1M": to_pandas_n(10**6, False),
        "S10-toPandas-1M-arrow": to_pandas_n(10**6, True),
        "S11-createDataFrame-1M-arrow": create_df(10**6),
        "S12-parallelize-1M": lambda: sc.parallelize(values, 2).count(),
        "S13-broadcast-1M": broadcast,
        "S14-toPandas-10M-arrow": to_pandas_n(10**7, True),
        "S15-createDataFrame-10M-arrow": create_df(10**7),
        "S1-getConf": getconf,
        "S2-jvm-static": jvm_static,
        "S3-schema-200": lambda: spark.createDataFrame(row, schema),
        "S4-range-count": lambda: spark.range(10).count(),
        "S5-collect-100k": lambda: spark.range(100000).collect(),
        "S6-toPandas-100k": to_pandas(False),
        "S7-toPandas-100k-arrow": to_pandas(True),
    }


def _dataplane_scenarios(spark):
    """The rows of DATAPLANE_SCENARIOS (data built once, outside the timed runs)."""
    sc = spark.sparkContext
    frames = {n: spark.range(n).selectExpr("id", "id * 2 AS x") for n in (10**6, 10**7)}
    values = list(range(10**7))

    def to_arrow(n):
        def run():
            assert frames[n].toArrow().num_rows == n
        return run

    def broadcast():
        b = sc.broadcast(values)
        assert sc.parallelize([0, 1], 2).map(lambda i: len(b.value)).collect() == [10**7] * 2
        b.unpersist()

    def parallelize():
        assert sc.parallelize(values, 2).count() == 10**7

    return {"S16-toArrow-1M": to_arrow(10**6), "S17-toArrow-10M": to_arrow(10**7),
            "S18-parallelize-10M": parallelize, "S19-broadcast-10M": broadcast}


def worker(mode: str, cold: bool) -> None:
    """A worker's main (perf/framework_bench.py's protocol), holding one local[2] session."""
    framework_bench.serve(mode, lambda: _session(mode),
                          lambda s: {**_scenarios(s), **_dataplane_scenarios(s)}, cold,
                          stop=lambda s: s.stop())


# ---------------------------------------------------------------- coordinator side

def _spawn(mode: str, cold: bool, cache: str) -> subprocess.Popen:
    args = [sys.executable, os.path.abspath(__file__), "--worker", mode] + (["--cold"] if cold else [])
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, XDG_CACHE_HOME=cache)
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # benchmarks use loopback only
    return framework_bench.popen(args, env)


def first_use(cache: str, log, failures: framework_bench.Failures) -> dict:
    """py4jni's first session in an empty cache (it records the classes it loads) and
    the wait, after it exits, for the class-path archive the background dump makes.
    No session, a dump that failed or took over 15 minutes, or no class-path archive
    made: a failure (the COLD-session rows would not measure what they say)."""
    t = time.perf_counter()
    what = f"{COLD} first use"
    try:
        session = framework_bench.cold_start(lambda: _spawn("py4jni", True, cache))
    except framework_bench.CellFailed as exc:
        failures.add(what, "py4jni", exc.status, exc.reason, log)
        return {}
    t_exit = time.perf_counter()
    directory = os.path.join(cache, "py4jni")
    deadline = t_exit + 900
    while os.path.isdir(directory) and any(n.endswith(".lock") for n in os.listdir(directory)):
        if time.perf_counter() > deadline:
            failures.add(what, "py4jni", "timed out", "the class-path archive's background "
                         "dump was not done 900 s after the session exited", log)
            break
        time.sleep(1)
    names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
    done = {"session_s": session, "archive_ready_after_exit_s": time.perf_counter() - t_exit,
            "archives": [n for n in names if n.endswith(".jsa")]}
    if not any(n.startswith("py4jni-cp-") for n in done["archives"]):
        why = ""
        for n in names:
            if n.endswith(".failed"):
                with open(os.path.join(directory, n), errors="replace") as fh:
                    why = f" ({n}: {fh.read()[:300].strip()})"
        failures.add(what, "py4jni", "failed", f"no class-path archive was made{why}", log)
    log(f"first use: session {session:.2f} s, archive ready "
        f"{done['archive_ready_after_exit_s']:.0f} s after ({time.perf_counter() - t:.0f} s)")
    return done


def run(rounds: dict[str, int], cold_reps: int, log, scenarios: list[str], cache: str,
        failures: framework_bench.Failures, quick: bool = False) -> dict:
    """Every round, every scenario (``rounds[name]`` rounds each), every backend;
    COLD-session first (py4jni's first use, which makes its class-path archive, before
    it). ``quick``: FEW_ROUNDS' scenarios without a warm-up run. Failed figures go to
    ``failures``."""
    fu = first_use(cache, log, failures)
    return {"first_use": fu, **framework_bench.measure(
        lambda b, cold: _spawn(b, cold, cache), COLD, cold_reps, scenarios, rounds,
        failures, log, frozenset(FEW_ROUNDS) if quick else frozenset())}


def report(data: dict, out_dir: str) -> str:
    """report.md and spark.png from results.json's content; returns the report's text."""
    series = {COLD: data["cold"], **data["rounds"]}

    def what(name: str) -> str:
        return ("python start to first job answered (fresh process, class-path archive made "
                "beforehand)" if name == COLD else SCENARIOS[name][0])
    rows, meds = framework_bench.median_rows(series, what)
    meta = data["meta"]
    per = meta.get("rounds_per_scenario") or {}
    fewer = {n: k for n, k in per.items() if k != meta["rounds"]}
    lines = [
        f"# PySpark driver: stock vs py4jni in-process ({meta['date']})", "",
        f"Command: `{meta['command']}`; commit {meta['commit']}; machine {meta['machine']['cpu']}"
        f" ({meta['machine']['cores']} cores, {meta['machine']['ram_gib']} GiB), "
        f"{meta['machine']['java']}; Python {meta['machine']['python']}; "
        f"pyspark {meta['pyspark']}"
        + (f"; load average at start {meta['load_start']}, at end {meta['load_end']}"
           if "load_start" in meta else "")
        + (f"; {meta['wall_seconds'] / 60:.0f} minutes" if "wall_seconds" in meta else "")
        + ".", "",
        *framework_bench.failed_section(data.get("failed", []), "perf/spark_bench.py"),
        f"Median of {meta['rounds']} interleaved rounds (min-max in brackets)"
        + (" (" + ", ".join(f"{n}: {k}" for n, k in fewer.items()) + " rounds: they take "
           "seconds a run" + ("; no warm-up run before them" if meta.get("no_warm_up")
                              else "") + ")" if fewer else "")
        + f", one local[2] session per backend for the whole run; {COLD}: "
        f"{meta['cold_reps']} fresh processes per backend. Ratio > 1: py4jni faster. The "
        "machine is shared: expect noise.", "",
        *framework_bench.table(("scenario", "what", "stock PySpark", "py4jni in-process",
                                "stock / py4jni"), rows),
    ]
    fu = data.get("first_use")
    if fu:
        lines += ["", f"py4jni's first use (before the {COLD} rows, in an empty cache): the "
                  f"session that records the classes it loads took "
                  f"{framework_bench.fmt(fu['session_s'])}; the class-path archive made in the "
                  f"background after it exited was ready "
                  f"{framework_bench.fmt(fu['archive_ready_after_exit_s'])} later "
                  f"({', '.join(fu['archives'])}). The {COLD} rows use it."]
    if data.get("phases"):
        lines += ["", "Session start and data paths in phases: [phases.md](phases.md)."]
    return framework_bench.write_report(out_dir, lines, "PySpark", "spark.png", list(series),
                                        meds, (10, 4.5), 25)


def rounds_per_scenario(scenarios: list[str], rounds: int | None, quick: bool) -> dict[str, int]:
    """Rounds of each scenario: ``rounds`` (default ROUNDS, --quick 3), at most
    FEW_ROUNDS' count (--quick: 1) for the scenarios listed there."""
    n = rounds or (3 if quick else ROUNDS)
    return {s: min(n, 1 if quick else FEW_ROUNDS[s]) if s in FEW_ROUNDS else n
            for s in scenarios}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="3 rounds (1 of the 1M-row "
                   "scenarios), 1 cold repetition, no 10M-row scenarios, phases of stock and "
                   "py4jni once")
    p.add_argument("--rounds", type=int, help=f"rounds (default {ROUNDS}, --quick 3; "
                   "scenarios of FEW_ROUNDS at most their count)")
    p.add_argument("--cold-reps", type=int, help="fresh processes per backend (default 5)")
    p.add_argument("--no-phases", action="store_true",
                   help="leave out perf/spark_phases.py's breakdown (phases.md)")
    framework_bench.add_common_options(p, "spark.png")
    args = p.parse_args(argv)
    if framework_bench.worker_or_redraw(args, worker, report):
        return 0
    import bench  # machine description shared with the main suite
    t0 = time.monotonic()
    cold_reps = args.cold_reps or (1 if args.quick else 5)
    info = bench.machine_info()
    out_dir = framework_bench.out_dir("spark", args.quick, args.out, info)
    log = framework_bench.logger("spark_bench")
    from importlib.metadata import version
    scenarios = [n for n in SCENARIOS if not (args.quick and n in SLOW)]
    rounds = rounds_per_scenario(scenarios, args.rounds, args.quick)
    failures = framework_bench.Failures()
    load_start = framework_bench.load_average()
    import tempfile
    cache_dir = tempfile.TemporaryDirectory(prefix="spark-bench-cache-")
    cache = cache_dir.name
    data = run(rounds, cold_reps, log, scenarios, cache, failures, args.quick)
    data["meta"] = {
        "date": datetime.date.today().isoformat(), "machine": info,
        "commit": bench.git_state(), "rounds": max(rounds.values(), default=0),
        "rounds_per_scenario": rounds, "cold_reps": cold_reps, "pyspark": version("pyspark"),
        "no_warm_up": sorted(FEW_ROUNDS) if args.quick else [],
        "command": framework_bench.command("spark_bench.py", argv), "load_start": load_start,
    }

    def save() -> None:
        data["failed"] = failures.entries
        data["meta"].update(load_end=framework_bench.load_average(),
                            wall_seconds=round(time.monotonic() - t0))
        with open(os.path.join(out_dir, "results.json"), "w") as fh:
            json.dump(data, fh, indent=1)
    save()
    if not args.no_phases:  # --quick: the archive made above serves the same JDK's phases
        phases(out_dir, args.quick, log, failures, cache if args.quick else None)
        data["phases"] = True
        save()
    cache_dir.cleanup()
    text = report(data, out_dir)
    print(text)
    log(f"report in {out_dir} ({round(time.monotonic() - t0)} s)"
        + (f"; FAILED: {len(failures.entries)} figure(s) missing, listed first in report.md"
           if failures else ""))
    return 1 if failures else 0


JDKS = ("/usr/lib/jvm/java-17-openjdk-amd64", "/usr/lib/jvm/temurin-25-jdk-amd64")


def phases(out_dir: str, quick: bool, log, failures: framework_bench.Failures,
           cache: str | None = None) -> None:
    """perf/spark_phases.py on each JDK of JDKS that is installed (else JAVA_HOME's):
    the session start and data paths in phases, stock against in-process before and
    after the class-path archive; phases.md and phases.png beside the report. The
    archives are made afresh for each JDK (their first use is reported), in ``cache``
    when given (archives already there are used). A JDK's run that fails, or whose
    first use made no class-path archive, is in ``failures``."""
    import tempfile

    import spark_phases
    homes = [h for h in JDKS if os.path.isdir(h)] or [os.environ.get("JAVA_HOME", "")]
    files = []
    for home in homes:
        jdk = os.path.basename(home.rstrip("/"))
        log(f"phases on {home}")
        with tempfile.TemporaryDirectory(prefix="spark-phases-cache-") as own:
            try:
                spark_phases.main(["--java-home", home, "--reps", "1" if quick else PHASES_REPS,
                                   "--rows", "100000" if quick else "1000000",
                                   "--backends", "stock,py4jni" if quick
                                   else "stock,py4jni-before,py4jni",
                                   "--out", out_dir, "--cache", cache or own])
            except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
                failures.add(f"phases ({jdk})", "-", "crashed" if isinstance(
                    exc, RuntimeError) else "error", str(exc).strip().splitlines()[-1][:300]
                    if str(exc).strip() else type(exc).__name__, log)
                continue
        path = os.path.join(out_dir, f"phases-{jdk}.json")
        files.append(path)
        with open(path) as fh:
            prepared = json.load(fh).get("prepare", {})
        for b, prep in prepared.items():
            if prep.get("failed"):
                failures.add(f"phases ({jdk}) first use", b, "failed",
                             "archive creation failed: " + ", ".join(prep["failed"]), log)
        if "py4jni" in prepared and not any(
                n.startswith("py4jni-cp-") for n in prepared["py4jni"].get("archives", [])):
            failures.add(f"phases ({jdk}) first use", "py4jni", "failed",
                         "no class-path archive was made", log)
    for leftover in os.listdir(out_dir):  # the class-load logs: large, made again each run
        if leftover.startswith("classes-") and leftover.endswith(".log"):
            os.unlink(os.path.join(out_dir, leftover))
    if files:
        spark_phases.report(files, out_dir, f"{datetime.date.today().isoformat()}, "
                            "perf/run.sh --spark")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
