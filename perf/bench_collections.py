#!/usr/bin/env python3
"""Collections and arrays benchmark: py4jni in-process beside JPype, in one run.

    PYTHONPATH=<build>/python python perf/bench_collections.py [--rounds 21]
        [--round-time 0.1] [--scenarios X2-100k,A1M-round,...] [--out DIR]

Scenarios (shared/perf-scenarios.md, plus the primitive array round trip of issue 3):
  X2-1k/10k/100k   iterate a java.util.ArrayList of N Integers (built on the Java side)
  X3-100/1k/10k    convert a Python list of N ints to a java.util.List
                   (py4jni: ListConverter().convert; JPype: ArrayList(list))
  A1M-send         a numpy array of 1,000,000 doubles -> a new Java double[]
                   (py4jni: to_java_array; JPype: JArray(JDouble)(a))
  A1M-recv         that double[] -> numpy through the buffer protocol (np.asarray)
  A1M-round        both, one after the other

Method (as shared/perf-scenarios.md asks): this process is the coordinator and starts
no JVM; each backend runs in a worker process of its own (multiprocessing, spawn: one
JVM per process). After warm-up batches (JIT) each cell is calibrated to batches of
about --round-time seconds; then, round by round, every scenario runs one batch on
each backend, the backends' order alternating between rounds. The report gives the
median and the min-max of the round means, and the JPype / py4jni ratio of medians.
Results: perf/results/<date>-collections/results.json (every round) and report.md.
"""
from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import time

PERF_DIR = os.path.dirname(os.path.abspath(__file__))
BACKENDS = ["py4jni", "jpype"]
N_A1M = 1_000_000

# id -> (group, description, elements per operation)
SCENARIOS = {
    "X2-1k": ("X2", "iterate an ArrayList of 1,000 Integers", 1_000),
    "X2-10k": ("X2", "iterate an ArrayList of 10,000 Integers", 10_000),
    "X2-100k": ("X2", "iterate an ArrayList of 100,000 Integers", 100_000),
    "X3-100": ("X3", "Python list of 100 ints -> java.util.List", 100),
    "X3-1k": ("X3", "Python list of 1,000 ints -> java.util.List", 1_000),
    "X3-10k": ("X3", "Python list of 10,000 ints -> java.util.List", 10_000),
    "A1M-send": ("A1M", "numpy float64[1M] -> new Java double[]", N_A1M),
    "A1M-recv": ("A1M", "Java double[1M] -> numpy (buffer protocol)", N_A1M),
    "A1M-round": ("A1M", "numpy -> double[] -> numpy, 1M doubles", N_A1M),
}


# ----------------------------------------------------------------------------- workers

def _size(sid: str) -> int:
    return SCENARIOS[sid][2]


def setup_py4jni(sid: str):
    """Returns the operation for scenario `sid` (py4jni in-process)."""
    import numpy as np
    from py4jni import JavaGateway, ListConverter, to_java_array
    gw = _STATE.get("gw") or JavaGateway()
    _STATE["gw"] = gw
    jvm = gw.jvm
    n = _size(sid)
    if sid.startswith("X2"):
        boxed = jvm.java.util.stream.IntStream.range(0, n).boxed()
        lst = jvm.java.util.ArrayList(boxed.collect(jvm.java.util.stream.Collectors.toList()))
        assert lst.size() == n and sum(lst) == n * (n - 1) // 2

        def op():
            for _ in lst:
                pass
        return op
    if sid.startswith("X3"):
        data, conv, client = list(range(n)), ListConverter(), gw._gateway_client
        assert conv.convert(data, client).size() == n
        return lambda: conv.convert(data, client)
    src = np.random.default_rng(1).random(n)
    assert np.array_equal(np.asarray(to_java_array(gw, src)), src)
    if sid == "A1M-send":
        return lambda: to_java_array(gw, src)
    if sid == "A1M-recv":
        ja = to_java_array(gw, src)
        return lambda: np.asarray(ja)
    return lambda: np.asarray(to_java_array(gw, src))


def setup_jpype(sid: str):
    """Returns the operation for scenario `sid` (JPype)."""
    import jpype
    import numpy as np
    if not jpype.isJVMStarted():
        jpype.startJVM(interrupt=False)
    JClass = jpype.JClass
    n = _size(sid)
    if sid.startswith("X2"):
        boxed = JClass("java.util.stream.IntStream").range(0, n).boxed()
        lst = JClass("java.util.ArrayList")(boxed.collect(JClass("java.util.stream.Collectors").toList()))
        assert lst.size() == n

        def op():
            for _ in lst:
                pass
        return op
    if sid.startswith("X3"):
        AL, data = JClass("java.util.ArrayList"), list(range(n))
        assert AL(data).size() == n
        return lambda: AL(data)
    make = jpype.JArray(jpype.JDouble)
    src = np.random.default_rng(1).random(n)
    assert np.array_equal(np.asarray(make(src)), src)
    if sid == "A1M-send":
        return lambda: make(src)
    if sid == "A1M-recv":
        ja = make(src)
        return lambda: np.asarray(ja)
    return lambda: np.asarray(make(src))


_STATE: dict = {}


def worker(backend: str, conn) -> None:
    """One backend in its own process: answers ("run", sid, units) with elapsed ns."""
    setup = setup_py4jni if backend == "py4jni" else setup_jpype
    ops = {}
    try:
        info = {"backend": backend}
        if backend == "py4jni":
            import py4jni
            info["version"] = py4jni.__version__
        else:
            import jpype
            info["version"] = jpype.__version__
        conn.send({"ok": True, "info": info})
        while True:
            msg = conn.recv()
            if msg[0] == "quit":
                return
            _, sid, units = msg
            try:
                if sid not in ops:
                    ops[sid] = setup(sid)
                op = ops[sid]
                t0 = time.perf_counter_ns()
                for _ in range(units):
                    op()
                conn.send({"ok": True, "ns": time.perf_counter_ns() - t0})
            except Exception as exc:  # reported, the run goes on
                conn.send({"ok": False, "reason": f"{type(exc).__name__}: {exc}"})
    finally:
        conn.close()


# ----------------------------------------------------------------------------- coordinator

class Cell:
    """One (scenario, backend): its calibrated batch size and per-round means."""

    def __init__(self, sid: str, backend: str) -> None:
        self.sid, self.backend = sid, backend
        self.units = 1
        self.means: list[float] = []  # seconds per operation, one per round
        self.error: str | None = None


def run_batch(conns, cell: Cell, units: int) -> float | None:
    conn = conns[cell.backend]
    conn.send(("run", cell.sid, units))
    ans = conn.recv()
    if not ans["ok"]:
        cell.error = ans["reason"]
        return None
    return ans["ns"] / 1e9


def calibrate(conns, cell: Cell, round_time: float, warmup: int) -> None:
    units = 1
    for _ in range(warmup + 8):
        took = run_batch(conns, cell, units)
        if took is None:
            return
        if took >= round_time / 4 or units >= 1 << 20:
            break
        units *= 4 if took < round_time / 40 else 2
    for _ in range(warmup):
        took = run_batch(conns, cell, units)
        if took is None:
            return
    per_op = took / units
    cell.units = max(1, int(round_time / per_op))


def java_version() -> str:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
        return out.stderr.strip().splitlines()[0]
    except Exception as exc:  # pragma: no cover - informational only
        return f"unknown ({exc})"


def fmt_time(s: float) -> str:
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.1f} us"
    return f"{s * 1e9:.0f} ns"


def summarize(cells: dict) -> dict:
    out: dict = {}
    for (sid, backend), cell in cells.items():
        entry = {"units_per_round": cell.units, "round_means_s": cell.means}
        if cell.error:
            entry["error"] = cell.error
        if cell.means:
            med = statistics.median(cell.means)
            entry.update(median_s=med, min_s=min(cell.means), max_s=max(cell.means),
                         elements_per_s=_size(sid) / med)
        out.setdefault(sid, {})[backend] = entry
    return out


def report_md(summary: dict, meta: dict) -> str:
    lines = [
        "# Collections and arrays: py4jni in-process beside JPype",
        "",
        f"Run {meta['started']} on {meta['machine']} ({meta['cpus']} CPUs, shared), "
        f"Python {meta['python']}, {meta['java']}; py4jni {meta['versions'].get('py4jni')}, "
        f"JPype {meta['versions'].get('jpype')}. {meta['rounds']} rounds of about "
        f"{meta['round_time']} s per cell, backends interleaved; each figure is the median of "
        "the round means, with their min-max. Ratio = JPype / py4jni (above 1: py4jni faster).",
        "",
        "| scenario | work | py4jni | JPype | ratio | py4jni rate | JPype rate |",
        "|---|---|---|---|---|---|---|",
    ]
    for sid, (group, desc, n) in SCENARIOS.items():
        if sid not in summary:
            continue
        row = summary[sid]
        cols = []
        for b in BACKENDS:
            e = row.get(b, {})
            if "median_s" in e:
                cols.append(f"{fmt_time(e['median_s'])} ({fmt_time(e['min_s'])} - "
                            f"{fmt_time(e['max_s'])})")
            else:
                cols.append(f"error: {e.get('error', 'not run')}")
        p, j = row.get("py4jni", {}), row.get("jpype", {})
        ratio = (f"{j['median_s'] / p['median_s']:.1f}x"
                 if "median_s" in p and "median_s" in j else "-")
        rates = []
        for e in (p, j):
            if "median_s" not in e:
                rates.append("-")
            elif group == "A1M":
                rates.append(f"{8 * n / e['median_s'] / 1e9:.2f} GB/s")
            else:
                rates.append(f"{n / e['median_s'] / 1e6:.1f} M elem/s")
        lines.append(f"| {sid} | {desc} | {cols[0]} | {cols[1]} | {ratio} | {rates[0]} | {rates[1]} |")
    x2 = summary.get("X2-100k", {}).get("py4jni", {})
    if "median_s" in x2:
        rate = x2["elements_per_s"] / 1e6
        lines += ["", f"Target X2-100k >= 5 M elements/s: {rate:.1f} M elements/s -> "
                      f"{'met' if rate >= 5 else 'NOT met'}."]
    lines += [
        "",
        "Notes:",
        "- X2: `for x in lst: pass`. py4jni converts each element to a Python int (chunks of "
        "up to 4096 elements per Java call); JPype yields its java.lang.Integer proxies.",
        "- X3: py4jni builds the ArrayList of Integers in one Java call; JPype's ArrayList(list) "
        "boxes the ints as java.lang.Long.",
        "- A1M-recv: py4jni's export is one copy of the array (a read-only snapshot); "
        "JPype's is also a copy (read-only). A1M-send allocates a new double[] each time, so "
        "Java allocation (G1, humongous arrays) is part of the figure.",
        "- The machine is shared with other work: min-max spreads are wide; compare "
        "backends within this run only.",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--round-time", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    sids = [s for s in args.scenarios.split(",") if s]
    for s in sids:
        if s not in SCENARIOS:
            ap.error(f"unknown scenario {s}")
    started = datetime.datetime.now()
    out_dir = args.out or os.path.join(PERF_DIR, "results", f"{started:%Y-%m-%d}-collections")
    os.makedirs(out_dir, exist_ok=True)

    ctx = multiprocessing.get_context("spawn")
    conns, procs, versions = {}, {}, {}
    for b in BACKENDS:
        parent, child = ctx.Pipe()
        p = ctx.Process(target=worker, args=(b, child), daemon=True)
        p.start()
        hello = parent.recv()
        versions[b] = hello["info"].get("version")
        conns[b], procs[b] = parent, p

    cells = {(s, b): Cell(s, b) for s in sids for b in BACKENDS}
    print(f"calibrating {len(cells)} cells ...", flush=True)
    for cell in cells.values():
        calibrate(conns, cell, args.round_time, args.warmup)
    for r in range(args.rounds):
        order = BACKENDS if r % 2 == 0 else BACKENDS[::-1]
        for s in sids:
            for b in order:
                cell = cells[(s, b)]
                if cell.error:
                    continue
                took = run_batch(conns, cell, cell.units)
                if took is not None:
                    cell.means.append(took / cell.units)
        print(f"round {r + 1}/{args.rounds} done", flush=True)
    for b in BACKENDS:
        conns[b].send(("quit",))
        procs[b].join(30)

    summary = summarize(cells)
    meta = dict(started=started.isoformat(timespec="seconds"), machine=platform.node(),
                cpus=os.cpu_count(), python=platform.python_version(), java=java_version(),
                versions=versions, rounds=args.rounds, round_time=args.round_time,
                platform=platform.platform())
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"meta": meta, "scenarios": summary}, f, indent=1)
    text = report_md(summary, meta)
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(text)
    print(text)
    print(f"written to {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
