#!/usr/bin/env python3
"""PySpark driver benchmark: stock PySpark (spark-submit + py4j sockets) against PySpark
on py4jni in-process (``py4jni.pyspark.enable()``). ``bash perf/run.sh --spark`` runs it;
it is not part of the default suite.

    python perf/spark_bench.py [--quick] [--rounds N] [--cold-reps N] [--out DIR]

Each backend's driver lives in a worker process of its own (this file with
``--worker stock|py4jni``), holding one local[2] session for the whole run. Round by
round, for each scenario, each worker runs the scenario once (a loop scenario runs its
1000 calls) and reports the wall time; the report gives the median and min-max of the
rounds and the stock/py4jni ratio. COLD-session is measured apart: a fresh process per
repetition, from interpreter start to the first ``range(1).count()`` answered.

Results go to perf/results/<date>-<machine>-spark[-quick]/: results.json (every round),
report.md and spark.png.
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
}
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

    return {
        "S1-getConf": getconf,
        "S2-jvm-static": jvm_static,
        "S3-schema-200": lambda: spark.createDataFrame(row, schema),
        "S4-range-count": lambda: spark.range(10).count(),
        "S5-collect-100k": lambda: spark.range(100000).collect(),
        "S6-toPandas-100k": to_pandas(False),
        "S7-toPandas-100k-arrow": to_pandas(True),
    }


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
    runs = _scenarios(spark)
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

def _spawn(mode: str, cold: bool) -> subprocess.Popen:
    args = [sys.executable, os.path.abspath(__file__), "--worker", mode] + (["--cold"] if cold else [])
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
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


def run(rounds: int, cold_reps: int, log) -> dict:
    """Every round, every scenario, every backend; COLD-session first."""
    results: dict = {"rounds": {s: {b: [] for b in BACKENDS} for s in SCENARIOS}, "cold": {}}
    results["cold"] = {b: [] for b in BACKENDS}
    for rep in range(cold_reps):
        for b in (BACKENDS if rep % 2 == 0 else BACKENDS[::-1]):
            results["cold"][b].append(cold_start(b))
            log(f"cold {b} rep {rep + 1}/{cold_reps}: {results['cold'][b][-1]:.2f} s")
    workers = {b: _spawn(b, cold=False) for b in BACKENDS}
    for b, p in workers.items():
        _answer(p)
        log(f"worker {b} ready")
    for name in SCENARIOS:  # warm-up: one unmeasured run each
        for b, p in workers.items():
            p.stdin.write(name + "\n")
            p.stdin.flush()
            _answer(p)
    for r in range(rounds):
        for name in SCENARIOS:
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
        what = "python start to first job answered (fresh process)" if name == COLD \
            else SCENARIOS[name][0]
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
    data = run(rounds, cold_reps, log)
    data["meta"] = {
        "date": today, "machine": info, "commit": bench.git_state(), "rounds": rounds,
        "cold_reps": cold_reps, "pyspark": version("pyspark"),
        "command": os.environ.get("P4J_PERF_LAUNCHER", "python perf/spark_bench.py")
        + " " + " ".join(argv), "wall_seconds": round(time.monotonic() - t0),
    }
    with open(os.path.join(out_dir, "results.json"), "w") as fh:
        json.dump(data, fh, indent=1)
    print(report(data, out_dir))
    log(f"report in {out_dir} ({data['meta']['wall_seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
