#!/usr/bin/env python3
"""PyFlink driver benchmark: stock PyFlink (PythonGatewayServer in a child ``java`` +
py4j sockets) against PyFlink on py4jni in-process (``py4jni.pyflink.enable()``).
``bash perf/run.sh --flink`` runs it; it is not part of the default suite.

    python perf/flink_bench.py --python PYFLINK_PYTHON [--quick] [--rounds N]
                               [--cold-reps N] [--out DIR]

PyFlink lives in a venv of its own (apache-flink pins py4j 0.10.9.7): this coordinator
runs in perf's venv, its workers with ``--python`` (PyFlink's venv, where py4jni is
importable). Each backend's driver lives in a worker process of its own (this file with
``--worker stock|py4jni``), holding one batch TableEnvironment for the whole run. Round
by round, for each scenario, each worker runs the scenario once and reports the wall
time; the report gives the median and min-max of the rounds and the stock/py4jni ratio.
COLD-first-result is measured apart: a fresh process per repetition, from interpreter
start to the first row of ``SELECT 1`` received. The worker protocol, the interleaved
rounds and the report's table and chart are perf/framework_bench.py's (shared with
perf/spark_bench.py).

Results go to perf/results/<date>-<machine>-flink[-quick]/: results.json (every round),
report.md and flink.png. Exit status 1 when a figure is missing (a scenario that raised,
a worker that crashed or timed out, a cold start that failed): report.md lists them
first.
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
SCENARIOS = {
    "F1-config-get": "1000 x t_env.get_config().get('parallelism.default', '1')",
    "F2-jvm-static": "1000 x get_gateway().jvm.java.lang.System.nanoTime()",
    "F3-udf-10k": "Table API job: 10k rows through a Python UDF, collected",
}
COLD = "COLD-first-result"


# ---------------------------------------------------------------- worker side

def _table_env(mode: str):
    if mode == "py4jni":
        import py4jni.pyflink
        py4jni.pyflink.enable()
    from pyflink.table import EnvironmentSettings, TableEnvironment
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "1")
    with t_env.execute_sql("SELECT 1").collect() as rows:
        next(rows)
    return t_env


def _scenarios(t_env):
    from pyflink.java_gateway import get_gateway
    from pyflink.table import DataTypes
    from pyflink.table.expressions import col
    from pyflink.table.udf import udf

    plus_one = udf(lambda x: x + 1, result_type=DataTypes.BIGINT())
    table = t_env.from_elements([(i,) for i in range(10000)], ["x"])

    def config_get():
        for _ in range(1000):
            t_env.get_config().get("parallelism.default", "1")

    def jvm_static():
        for _ in range(1000):
            get_gateway().jvm.java.lang.System.nanoTime()

    def udf_job():
        with table.select(plus_one(col("x"))).execute().collect() as rows:
            n = sum(1 for _ in rows)
        assert n == 10000, n

    return {"F1-config-get": config_get, "F2-jvm-static": jvm_static, "F3-udf-10k": udf_job}


def worker(mode: str, cold: bool) -> None:
    """A worker's main (perf/framework_bench.py's protocol), holding one TableEnvironment."""
    framework_bench.serve(mode, lambda: _table_env(mode), _scenarios, cold)


# ---------------------------------------------------------------- coordinator side

def _spawn(python: str, mode: str, cold: bool) -> subprocess.Popen:
    args = [python, os.path.abspath(__file__), "--worker", mode] + (["--cold"] if cold else [])
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(python) + os.pathsep + env.get("PATH", "")  # workers' python
    for key in [k for k in env if k.startswith(("PY4JNI_", "PYFLINK"))]:
        env.pop(key)
    return framework_bench.popen(args, env)


def run(python: str, rounds: int, cold_reps: int, log,
        failures: framework_bench.Failures) -> dict:
    """Every round, every scenario, every backend; COLD-first-result first. Failed
    figures go to ``failures``."""
    return framework_bench.measure(lambda b, cold: _spawn(python, b, cold), COLD, cold_reps,
                                   list(SCENARIOS), {s: rounds for s in SCENARIOS},
                                   failures, log)


def report(data: dict, out_dir: str) -> str:
    """report.md and flink.png from results.json's content; returns the report's text."""
    series = {COLD: data["cold"], **data["rounds"]}
    rows, meds = framework_bench.median_rows(
        series, lambda name: "python start to the first row of SELECT 1 (fresh process)"
        if name == COLD else SCENARIOS[name])
    meta = data["meta"]
    lines = [
        f"# PyFlink driver: stock vs py4jni in-process ({meta['date']})", "",
        f"Command: `{meta['command']}`; commit {meta['commit']}; machine {meta['machine']['cpu']}"
        f" ({meta['machine']['cores']} cores, {meta['machine']['ram_gib']} GiB), "
        f"{meta['machine']['java']}; Python {meta['machine']['python']}; "
        f"apache-flink {meta['pyflink']}; load average at start {meta['load_start']}, "
        f"at end {meta['load_end']}.", "",
        *framework_bench.failed_section(data.get("failed", []), "perf/flink_bench.py"),
        f"Median of {meta['rounds']} interleaved rounds (min-max in brackets), one batch "
        f"TableEnvironment (parallelism 1) per backend for the whole run; {COLD}: "
        f"{meta['cold_reps']} fresh processes per backend. Ratio > 1: py4jni faster. The "
        "machine is shared: expect noise (see the load average).", "",
        *framework_bench.table(("scenario", "what", "stock PyFlink", "py4jni in-process",
                                "stock / py4jni"), rows),
    ]
    return framework_bench.write_report(out_dir, lines, "PyFlink", "flink.png", list(series),
                                        meds, (8, 4.5), 15)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--python", help="PyFlink's venv interpreter (default: $P4J_PYFLINK_PYTHON)")
    p.add_argument("--quick", action="store_true", help="2 rounds, 1 cold repetition")
    p.add_argument("--rounds", type=int, help="rounds (default 7, --quick 2)")
    p.add_argument("--cold-reps", type=int, help="fresh processes per backend (default 3)")
    framework_bench.add_common_options(p, "flink.png")
    args = p.parse_args(argv)
    if framework_bench.worker_or_redraw(args, worker, report):
        return 0
    python = args.python or os.environ.get("P4J_PYFLINK_PYTHON")
    if not python:
        p.error("--python (PyFlink's venv interpreter) or P4J_PYFLINK_PYTHON is needed")
    import bench  # machine description shared with the main suite
    t0 = time.monotonic()
    rounds = args.rounds or (2 if args.quick else 7)
    cold_reps = args.cold_reps or (1 if args.quick else 3)
    info = bench.machine_info()
    out_dir = framework_bench.out_dir("flink", args.quick, args.out, info)
    log = framework_bench.logger("flink_bench")
    load_start = framework_bench.load_average()
    version = subprocess.run([python, "-c", "from importlib.metadata import version; "
                              "print(version('apache-flink'))"],
                             capture_output=True, text=True).stdout.strip()
    failures = framework_bench.Failures()
    data = run(python, rounds, cold_reps, log, failures)
    data["failed"] = failures.entries
    data["meta"] = {
        "date": datetime.date.today().isoformat(), "machine": info,
        "commit": bench.git_state(), "rounds": rounds, "cold_reps": cold_reps,
        "pyflink": version, "load_start": load_start,
        "load_end": framework_bench.load_average(),
        "command": framework_bench.command("flink_bench.py", argv),
        "wall_seconds": round(time.monotonic() - t0),
    }
    with open(os.path.join(out_dir, "results.json"), "w") as fh:
        json.dump(data, fh, indent=1)
    print(report(data, out_dir))
    log(f"report in {out_dir} ({data['meta']['wall_seconds']} s)"
        + (f"; FAILED: {len(failures.entries)} figure(s) missing, listed first in report.md"
           if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
