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
start to the first row of ``SELECT 1`` received.

Results go to perf/results/<date>-<machine>-flink[-quick]/: results.json (every round),
report.md and flink.png.
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
    """Answers one line per request on the original stdout: the seconds one run of the
    named scenario took. Everything else (the JVM's output, in-process) goes to stderr."""
    t0 = time.perf_counter()
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    t_env = _table_env(mode)
    if cold:
        out.write(json.dumps({"seconds": time.perf_counter() - t0}) + "\n")
        return
    runs = _scenarios(t_env)
    out.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        name = line.strip()
        if name == "quit":
            break
        t = time.perf_counter()
        runs[name]()
        out.write(json.dumps({"seconds": time.perf_counter() - t}) + "\n")


# ---------------------------------------------------------------- coordinator side

def _spawn(python: str, mode: str, cold: bool) -> subprocess.Popen:
    args = [python, os.path.abspath(__file__), "--worker", mode] + (["--cold"] if cold else [])
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(python) + os.pathsep + env.get("PATH", "")  # workers' python
    for key in [k for k in env if k.startswith(("PY4JNI_", "PYFLINK"))]:
        env.pop(key)
    return subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)


def _answer(proc: subprocess.Popen) -> dict:
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"worker {proc.args[3]} exited (rc={proc.wait()})")
    return json.loads(line)


def cold_start(python: str, mode: str) -> float:
    """Seconds from a fresh interpreter's start to its first result."""
    t0 = time.perf_counter()
    proc = _spawn(python, mode, cold=True)
    _answer(proc)
    seconds = time.perf_counter() - t0
    proc.wait()
    return seconds


def run(python: str, rounds: int, cold_reps: int, log) -> dict:
    """Every round, every scenario, every backend; COLD-first-result first."""
    results: dict = {"rounds": {s: {b: [] for b in BACKENDS} for s in SCENARIOS},
                     "cold": {b: [] for b in BACKENDS}}
    for rep in range(cold_reps):
        for b in (BACKENDS if rep % 2 == 0 else BACKENDS[::-1]):
            results["cold"][b].append(cold_start(python, b))
            log(f"cold {b} rep {rep + 1}/{cold_reps}: {results['cold'][b][-1]:.2f} s")
    workers = {}
    for b in BACKENDS:  # one JVM starting at a time
        workers[b] = _spawn(python, b, cold=False)
        _answer(workers[b])
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
    """report.md and flink.png from results.json's content; returns the report's text."""
    rows = [("scenario", "what", "stock PyFlink", "py4jni in-process", "stock / py4jni")]
    series = {COLD: data["cold"], **data["rounds"]}
    meds = {}
    for name, per in series.items():
        what = "python start to the first row of SELECT 1 (fresh process)" if name == COLD \
            else SCENARIOS[name]
        cells = []
        for b in BACKENDS:
            xs = per[b]
            meds[(name, b)] = statistics.median(xs)
            cells.append(f"{_fmt(meds[(name, b)])} ({_fmt(min(xs))}-{_fmt(max(xs))})")
        ratio = meds[(name, "stock")] / meds[(name, "py4jni")]
        rows.append((name, what, *cells, f"{ratio:.1f}x"))
    meta = data["meta"]
    lines = [
        f"# PyFlink driver: stock vs py4jni in-process ({meta['date']})", "",
        f"Command: `{meta['command']}`; commit {meta['commit']}; machine {meta['machine']['cpu']}"
        f" ({meta['machine']['cores']} cores, {meta['machine']['ram_gib']} GiB), "
        f"{meta['machine']['java']}; Python {meta['machine']['python']}; "
        f"apache-flink {meta['pyflink']}; load average at start {meta['load_start']}, "
        f"at end {meta['load_end']}.", "",
        f"Median of {meta['rounds']} interleaved rounds (min-max in brackets), one batch "
        f"TableEnvironment (parallelism 1) per backend for the whole run; {COLD}: "
        f"{meta['cold_reps']} fresh processes per backend. Ratio > 1: py4jni faster. The "
        "machine is shared: expect noise (see the load average).", "",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows[:1]]
    lines += ["|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    lines += ["", "![medians](flink.png)", ""]
    text = "\n".join(lines)
    with open(os.path.join(out_dir, "report.md"), "w") as fh:
        fh.write(text)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        names = list(series)
        fig, ax = plt.subplots(figsize=(8, 4.5))
        width = 0.4
        for i, b in enumerate(BACKENDS):
            ax.bar([x + (i - 0.5) * width for x in range(len(names))],
                   [meds[(n, b)] for n in names], width,
                   label="stock PyFlink" if b == "stock" else "py4jni in-process")
        ax.set_yscale("log")
        ax.set_ylabel("seconds (median, log scale)")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=15, ha="right", fontsize=8)
        ax.legend()
        ax.set_title("PyFlink driver: stock vs py4jni in-process (lower is better)")
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "flink.png"), dpi=110)
        plt.close(fig)
    except ImportError:
        pass
    return text


def _load() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3])


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--python", help="PyFlink's venv interpreter (default: $P4J_PYFLINK_PYTHON)")
    p.add_argument("--quick", action="store_true", help="2 rounds, 1 cold repetition")
    p.add_argument("--rounds", type=int, help="rounds (default 7, --quick 2)")
    p.add_argument("--cold-reps", type=int, help="fresh processes per backend (default 3)")
    p.add_argument("--out", help="output directory")
    p.add_argument("--worker", choices=BACKENDS, help=argparse.SUPPRESS)
    p.add_argument("--cold", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--report", help="redraw report.md and flink.png from a results.json")
    args = p.parse_args(argv)
    if args.worker:
        worker(args.worker, args.cold)
        return 0
    if args.report:
        with open(args.report) as fh:
            print(report(json.load(fh), os.path.dirname(os.path.abspath(args.report))))
        return 0
    python = args.python or os.environ.get("P4J_PYFLINK_PYTHON")
    if not python:
        p.error("--python (PyFlink's venv interpreter) or P4J_PYFLINK_PYTHON is needed")
    import bench  # machine description and naming shared with the main suite
    rounds = args.rounds or (2 if args.quick else 7)
    cold_reps = args.cold_reps or (1 if args.quick else 3)
    info = bench.machine_info()
    today = datetime.date.today().isoformat()
    out_dir = args.out or os.path.join(
        HERE, "results", f"{today}-{bench.machine_slug(info)}-flink" + ("-quick" if args.quick else ""))
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.monotonic()

    def log(msg: str) -> None:
        print(f"flink_bench [{time.monotonic() - t0:6.0f} s] {msg}", file=sys.stderr, flush=True)

    load_start = _load()
    version = subprocess.run([python, "-c", "from importlib.metadata import version; "
                              "print(version('apache-flink'))"],
                             capture_output=True, text=True).stdout.strip()
    data = run(python, rounds, cold_reps, log)
    data["meta"] = {
        "date": today, "machine": info, "commit": bench.git_state(), "rounds": rounds,
        "cold_reps": cold_reps, "pyflink": version, "load_start": load_start,
        "load_end": _load(),
        "command": os.environ.get("P4J_PERF_LAUNCHER", "python perf/flink_bench.py")
        + " " + " ".join(argv), "wall_seconds": round(time.monotonic() - t0),
    }
    with open(os.path.join(out_dir, "results.json"), "w") as fh:
        json.dump(data, fh, indent=1)
    print(report(data, out_dir))
    log(f"report in {out_dir} ({data['meta']['wall_seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
