#!/usr/bin/env python3
"""PySpark driver benchmark: stock PySpark (spark-submit + py4j sockets) against PySpark
on py4jni in-process (``py4jni.pyspark.enable()``). ``bash perf/run.sh --spark`` runs it;
it is not part of the default suite.

    python perf/spark_bench.py [--quick] [--rounds N] [--cold-reps N] [--out DIR]

py4jni's workers keep their class-data-sharing archives in a temporary cache directory:
its first session (recording the classes it loads, then the background dump of the
class-path archive) is timed apart, before COLD-session, whose py4jni runs use that
archive. ``--quick`` leaves out the 10M-row scenarios.

Each backend's driver lives in a worker process of its own (this file with
``--worker stock|py4jni``), holding one local[2] session for the whole run. Round by
round, for each scenario, each worker runs the scenario once (a loop scenario runs its
1000 calls) and reports the wall time; the report gives the median and min-max of the
rounds and the stock/py4jni ratio. COLD-session is measured apart: a fresh process per
repetition, from interpreter start to the first ``range(1).count()`` answered.

Results go to perf/results/<date>-<machine>-spark[-quick]/: results.json (every round),
report.md and spark.png; then perf/spark_phases.py runs on JDK 17 and Temurin 25 (those
installed) into the same directory: phases-<jdk>.json, phases.md, phases.png
(``--no-phases`` leaves it out).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BACKENDS = ("stock", "py4jni")
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
    """Answers one line per request on the original stdout: the seconds one run of the
    named scenario took. Everything else (the JVM's output, in-process) goes to stderr."""
    t0 = time.perf_counter()
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    spark = _session(mode)
    if cold:
        out.write(json.dumps({"seconds": time.perf_counter() - t0}) + "\n")
        return
    runs = {**_scenarios(spark), **_dataplane_scenarios(spark)}
    out.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        name = line.strip()
        if name == "quit":
            break
        t = time.perf_counter()
        runs[name]()
        out.write(json.dumps({"seconds": time.perf_counter() - t}) + "\n")
    spark.stop()


# ---------------------------------------------------------------- coordinator side

_CACHE: dict = {"dir": None}  # XDG_CACHE_HOME of the py4jni workers (their CDS archives)


def _spawn(mode: str, cold: bool) -> subprocess.Popen:
    args = [sys.executable, os.path.abspath(__file__), "--worker", mode] + (["--cold"] if cold else [])
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    if _CACHE["dir"]:
        env["XDG_CACHE_HOME"] = _CACHE["dir"]
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # benchmarks use loopback only
    return subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)


def _answer(proc: subprocess.Popen) -> dict:
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"worker {proc.args[3]} exited (rc={proc.wait()})")
    return json.loads(line)


def cold_start(mode: str) -> float:
    """Seconds from a fresh interpreter's start to its first job's answer."""
    t0 = time.perf_counter()
    proc = _spawn(mode, cold=True)
    _answer(proc)
    proc.wait()
    return time.perf_counter() - t0


def first_use(cache: str, log) -> dict:
    """py4jni's first session in an empty cache (it records the classes it loads) and
    the wait, after it exits, for the class-path archive the background dump makes."""
    t = time.perf_counter()
    session = cold_start("py4jni")
    t_exit = time.perf_counter()
    directory = os.path.join(cache, "py4jni")
    while os.path.isdir(directory) and any(n.endswith(".lock") for n in os.listdir(directory)):
        time.sleep(1)
    done = {"session_s": session, "archive_ready_after_exit_s": time.perf_counter() - t_exit,
            "archives": sorted(n for n in os.listdir(directory) if n.endswith(".jsa"))
            if os.path.isdir(directory) else []}
    log(f"first use: session {session:.2f} s, archive ready "
        f"{done['archive_ready_after_exit_s']:.0f} s after ({time.perf_counter() - t:.0f} s)")
    return done


def run(rounds: int, cold_reps: int, log, scenarios: list[str], cache: str) -> dict:
    """Every round, every scenario, every backend; COLD-session first (py4jni's first
    use, which makes its class-path archive, before it)."""
    results: dict = {"rounds": {s: {b: [] for b in BACKENDS} for s in scenarios}, "cold": {}}
    _CACHE["dir"] = cache
    results["first_use"] = first_use(cache, log)
    results["cold"] = {b: [] for b in BACKENDS}
    for rep in range(cold_reps):
        for b in (BACKENDS if rep % 2 == 0 else BACKENDS[::-1]):
            results["cold"][b].append(cold_start(b))
            log(f"cold {b} rep {rep + 1}/{cold_reps}: {results['cold'][b][-1]:.2f} s")
    workers = {b: _spawn(b, cold=False) for b in BACKENDS}
    for b, p in workers.items():
        _answer(p)
        log(f"worker {b} ready")
    for name in scenarios:  # warm-up: one unmeasured run each
        for b, p in workers.items():
            p.stdin.write(name + "\n")
            p.stdin.flush()
            _answer(p)
    for r in range(rounds):
        for name in scenarios:
            order = BACKENDS if (r + len(name)) % 2 == 0 else BACKENDS[::-1]
            for b in order:
                p = workers[b]
                p.stdin.write(name + "\n")
                p.stdin.flush()
                results["rounds"][name][b].append(_answer(p)["seconds"])
        log(f"round {r + 1}/{rounds} done")
    for p in workers.values():
        p.stdin.write("quit\n")
        p.stdin.flush()
        p.wait(timeout=120)
    return results


def _fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} us"


def report(data: dict, out_dir: str) -> str:
    """report.md and spark.png from results.json's content; returns the report's text."""
    rows = [("scenario", "what", "stock PySpark", "py4jni in-process", "stock / py4jni")]
    series = {COLD: data["cold"], **data["rounds"]}
    meds = {}
    for name, per in series.items():
        what = "python start to first job answered (fresh process, class-path archive made "\
            "beforehand)" if name == COLD else SCENARIOS[name][0]
        cells = []
        for b in BACKENDS:
            xs = per[b]
            meds[(name, b)] = statistics.median(xs)
            cells.append(f"{_fmt(meds[(name, b)])} ({_fmt(min(xs))}-{_fmt(max(xs))})")
        ratio = meds[(name, "stock")] / meds[(name, "py4jni")]
        rows.append((name, what, *cells, f"{ratio:.1f}x"))
    meta = data["meta"]
    lines = [
        f"# PySpark driver: stock vs py4jni in-process ({meta['date']})", "",
        f"Command: `{meta['command']}`; commit {meta['commit']}; machine {meta['machine']['cpu']}"
        f" ({meta['machine']['cores']} cores, {meta['machine']['ram_gib']} GiB), "
        f"{meta['machine']['java']}; Python {meta['machine']['python']}; "
        f"pyspark {meta['pyspark']}.", "",
        f"Median of {meta['rounds']} interleaved rounds (min-max in brackets), one local[2] "
        f"session per backend for the whole run; {COLD}: {meta['cold_reps']} fresh "
        "processes per backend. Ratio > 1: py4jni faster. The machine is shared: expect "
        "noise.", "",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows[:1]]
    lines += ["|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    fu = data.get("first_use")
    if fu:
        lines += ["", f"py4jni's first use (before the {COLD} rows, in an empty cache): the "
                  f"session that records the classes it loads took {_fmt(fu['session_s'])}; "
                  f"the class-path archive made in the background after it exited was ready "
                  f"{_fmt(fu['archive_ready_after_exit_s'])} later ({', '.join(fu['archives'])}). "
                  f"The {COLD} rows use it."]
    lines += ["", "![medians](spark.png)", ""]
    text = "\n".join(lines)
    with open(os.path.join(out_dir, "report.md"), "w") as fh:
        fh.write(text)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        names = list(series)
        fig, ax = plt.subplots(figsize=(10, 4.5))
        width = 0.4
        for i, b in enumerate(BACKENDS):
            ax.bar([x + (i - 0.5) * width for x in range(len(names))],
                   [meds[(n, b)] for n in names], width,
                   label="stock PySpark" if b == "stock" else "py4jni in-process")
        ax.set_yscale("log")
        ax.set_ylabel("seconds (median, log scale)")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=25, ha="right", fontsize=8)
        ax.legend()
        ax.set_title("PySpark driver: stock vs py4jni in-process (lower is better)")
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "spark.png"), dpi=110)
        plt.close(fig)
    except ImportError:
        pass
    return text


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="3 rounds, 1 cold repetition")
    p.add_argument("--rounds", type=int, help="rounds (default 11, --quick 3)")
    p.add_argument("--cold-reps", type=int, help="fresh processes per backend (default 5)")
    p.add_argument("--out", help="output directory")
    p.add_argument("--no-phases", action="store_true",
                   help="leave out perf/spark_phases.py's breakdown (phases.md)")
    p.add_argument("--worker", choices=BACKENDS, help=argparse.SUPPRESS)
    p.add_argument("--cold", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--report", help="redraw report.md and spark.png from a results.json")
    args = p.parse_args(argv)
    if args.worker:
        worker(args.worker, args.cold)
        return 0
    if args.report:
        with open(args.report) as fh:
            print(report(json.load(fh), os.path.dirname(os.path.abspath(args.report))))
        return 0
    import bench  # machine description and naming shared with the main suite
    rounds = args.rounds or (3 if args.quick else 11)
    cold_reps = args.cold_reps or (1 if args.quick else 5)
    info = bench.machine_info()
    today = datetime.date.today().isoformat()
    out_dir = args.out or os.path.join(
        HERE, "results", f"{today}-{bench.machine_slug(info)}-spark" + ("-quick" if args.quick else ""))
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.monotonic()

    def log(msg: str) -> None:
        print(f"spark_bench [{time.monotonic() - t0:6.0f} s] {msg}", file=sys.stderr, flush=True)

    from importlib.metadata import version
    scenarios = [n for n in SCENARIOS if not (args.quick and n in SLOW)]
    import tempfile
    with tempfile.TemporaryDirectory(prefix="spark-bench-cache-") as cache:
        data = run(rounds, cold_reps, log, scenarios, cache)  # py4jni's archives, made anew
    data["meta"] = {
        "date": today, "machine": info, "commit": bench.git_state(), "rounds": rounds,
        "cold_reps": cold_reps, "pyspark": version("pyspark"),
        "command": os.environ.get("P4J_PERF_LAUNCHER", "python perf/spark_bench.py")
        + " " + " ".join(argv), "wall_seconds": round(time.monotonic() - t0),
    }
    with open(os.path.join(out_dir, "results.json"), "w") as fh:
        json.dump(data, fh, indent=1)
    text = report(data, out_dir)
    if not args.no_phases:
        text = phases(out_dir, args.quick, log, text)
    print(text)
    log(f"report in {out_dir} ({round(time.monotonic() - t0)} s)")
    return 0


JDKS = ("/usr/lib/jvm/java-17-openjdk-amd64", "/usr/lib/jvm/temurin-25-jdk-amd64")


def phases(out_dir: str, quick: bool, log, text: str) -> str:
    """perf/spark_phases.py on each JDK of JDKS that is installed (else JAVA_HOME's):
    the session start and data paths in phases, stock against in-process before and
    after the class-path archive; phases.md and phases.png beside the report, which
    gets a link to them."""
    import tempfile

    import spark_phases
    homes = [h for h in JDKS if os.path.isdir(h)] or [os.environ.get("JAVA_HOME", "")]
    files = []
    for home in homes:
        log(f"phases on {home}")
        with tempfile.TemporaryDirectory(prefix="spark-phases-cache-") as cache:
            spark_phases.main(["--java-home", home, "--reps", "1" if quick else "3",
                               "--rows", "100000" if quick else "1000000",
                               "--backends", "stock,py4jni-before,py4jni",
                               "--out", out_dir, "--cache", cache])
        files.append(os.path.join(out_dir, f"phases-{os.path.basename(home.rstrip('/'))}.json"))
    for leftover in os.listdir(out_dir):  # the class-load logs: large, made again each run
        if leftover.startswith("classes-") and leftover.endswith(".log"):
            os.unlink(os.path.join(out_dir, leftover))
    spark_phases.report(files, out_dir, f"{datetime.date.today().isoformat()}, "
                        "perf/run.sh --spark")
    text += "\nSession start and data paths in phases: [phases.md](phases.md).\n"
    with open(os.path.join(out_dir, "report.md"), "w") as fh:
        fh.write(text)
    return text


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
