#!/usr/bin/env python3
"""Callbacks benchmark (issue 4): Java calling Python, py4jni in-process beside JPype.

    PYTHONPATH=<build>/python P4J_FIXTURES_JAR=<build>/tests/py4jni-test-fixtures.jar \\
        python perf/bench_callbacks.py [--rounds 21] [--round-time 0.1] [--scenarios X4,F100k]

Scenarios (Java fixtures: tests/java/org/py4jni/fixtures/CallbackFixtures, NativeCodec):
  X4      Collections.sort of 100 Python objects implementing java.lang.Comparable
          (shared/perf-scenarios.md: the list is copied on the Java side, then sorted; every
          compareTo is a callback). Per-callback time = sort time / compareTo calls.
  F100k   a Java loop calling a Python java.util.function.Function 100,000 times
          (Object in, Object out: boxing both ways).
  I100k   the same loop through java.util.function.IntUnaryOperator (int in, int out):
          the closest JPype gets to a primitive callback.
  N100k   the same loop calling a `native int twice(int)` implemented in Python with
          gateway.register_natives (py4jni only: JPype has no such thing; its column shows
          JPype's best proxy, I100k, for comparison).

Targets (issue 4): <= 1 us per proxy callback (X4, F100k), <= 0.5 us per native callback.

Method (shared/perf-scenarios.md): this process is the coordinator and starts no JVM;
each backend runs in a worker process of its own (multiprocessing, spawn). After
warm-up (JIT), each cell is calibrated to batches of about --round-time seconds; then,
round by round, every scenario runs one batch on each backend, the order of backends
alternating between rounds. The report gives the median and min-max of the round means
per callback and the JPype / py4jni ratio of medians (above 1: py4jni faster).
Results: perf/results/<date>-callbacks/results.json (every round) and report.md.
"""
from __future__ import annotations

import argparse
import datetime
import glob
import json
import multiprocessing
import os
import platform
import random
import statistics
import subprocess
import sys
import time

PERF_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(PERF_DIR)
BACKENDS = ["py4jni", "jpype"]
N_LOOP = 100_000
# The order X4 sorts (the seed perf/helpers.py uses, so both suites sort the same list).
ORDER100 = random.Random(557).sample(range(100), 100)

# id -> (description, callbacks per operation: None = counted at set-up)
SCENARIOS = {
    "X4": ("Collections.sort of 100 Python Comparables (copy + sort)", None),
    "F100k": ("Java loop: Function.apply(Integer) -> Python, 100k calls", N_LOOP),
    "I100k": ("Java loop: IntUnaryOperator.applyAsInt(int) -> Python, 100k calls", N_LOOP),
    "N100k": ("Java loop: native int twice(int) implemented in Python, 100k calls", N_LOOP),
}
FIXTURES = "org.py4jni.fixtures"


def fixtures_jar() -> str:
    jar = os.environ.get("P4J_FIXTURES_JAR")
    if not jar:
        found = glob.glob(os.path.join(ROOT, "build*", "**", "py4jni-test-fixtures.jar"),
                          recursive=True)
        jar = found[0] if found else ""
    if not jar or not os.path.exists(jar):
        sys.exit("fixtures jar not found: set P4J_FIXTURES_JAR (built with the tests)")
    return jar


# ----------------------------------------------------------------------------- workers

_STATE: dict = {}


def setup_py4jni(sid: str):
    """Returns (operation, callbacks per operation) for scenario `sid`, py4jni in-process."""
    from py4jni import JavaGateway
    gw = _STATE.get("gw") or JavaGateway(classpath=fixtures_jar())
    _STATE["gw"] = gw
    fx = getattr(gw.jvm.org.py4jni.fixtures, "CallbackFixtures")
    if sid == "X4":
        class Cmp:
            def __init__(self, key):
                self.key = key

            def compareTo(self, other):
                k, o = self.key, other.key  # Java hands `other` back as the Python object
                return -1 if k < o else (1 if k > o else 0)

            class Java:
                implements = ["java.lang.Comparable"]

        class CountingCmp:
            calls = 0

            def __init__(self, key):
                self.key = key

            def compareTo(self, other):
                CountingCmp.calls += 1
                k, o = self.key, other.key
                return -1 if k < o else (1 if k > o else 0)

            class Java:
                implements = ["java.lang.Comparable"]

        return _x4(gw.jvm.java.util.ArrayList, fx, Cmp, CountingCmp)
    if sid == "F100k":
        class Identity:
            def apply(self, x):
                return x

            class Java:
                implements = ["java.util.function.Function"]

        f = Identity()
        assert fx.applyFunction(f, 1000) == sum(range(1000))
        return (lambda: fx.applyFunction(f, N_LOOP)), N_LOOP
    if sid == "I100k":
        class Twice:
            def applyAsInt(self, x):
                return x + x

            class Java:
                implements = ["java.util.function.IntUnaryOperator"]

        op = Twice()
        assert fx.applyIntOp(op, 1000) == 2 * sum(range(1000))
        return (lambda: fx.applyIntOp(op, N_LOOP)), N_LOOP
    nc = gw.jvm.org.py4jni.fixtures.NativeCodec
    gw.register_natives(f"{FIXTURES}.NativeCodec", {"twice": lambda x: x + x})
    assert nc.loop(1000) == 2 * sum(range(1000))
    return (lambda: nc.loop(N_LOOP)), N_LOOP


def setup_jpype(sid: str):
    """Returns (operation, callbacks per operation) for scenario `sid`, JPype."""
    import jpype
    if not jpype.isJVMStarted():
        helper = os.path.join(os.path.dirname(fixtures_jar()), "..", "python", "py4jni",
                              "py4jni-helper.jar")
        jpype.startJVM(classpath=[fixtures_jar(), os.path.normpath(helper)], interrupt=False)
    from jpype import JClass, JImplements, JOverride
    fx = JClass(f"{FIXTURES}.CallbackFixtures")
    if sid == "X4":
        @JImplements("java.lang.Comparable")
        class Cmp:
            def __init__(self, key):
                self.key = key

            @JOverride
            def compareTo(self, other):
                k, o = self.key, other.key  # JPype also hands back the Python object
                return -1 if k < o else (1 if k > o else 0)

        @JImplements("java.lang.Comparable")
        class CountingCmp:
            calls = 0

            def __init__(self, key):
                self.key = key

            @JOverride
            def compareTo(self, other):
                CountingCmp.calls += 1
                k, o = self.key, other.key
                return -1 if k < o else (1 if k > o else 0)

        return _x4(JClass("java.util.ArrayList"), fx, Cmp, CountingCmp)
    if sid == "F100k":
        @JImplements("java.util.function.Function")
        class Identity:
            @JOverride
            def apply(self, x):
                return x

        f = Identity()
        assert fx.applyFunction(f, 1000) == sum(range(1000))
        return (lambda: fx.applyFunction(f, N_LOOP)), N_LOOP
    if sid == "I100k":
        @JImplements("java.util.function.IntUnaryOperator")
        class Twice:
            @JOverride
            def applyAsInt(self, x):
                return x + x

        op = Twice()
        assert fx.applyIntOp(op, 1000) == 2 * sum(range(1000))
        return (lambda: fx.applyIntOp(op, N_LOOP)), N_LOOP
    raise NotImplementedError("JPype has no Python-implemented native methods")


def _x4(ArrayList, fx, Cmp, CountingCmp):
    """X4: (operation, compareTo calls per sort), counted once with CountingCmp."""
    probe = ArrayList()
    for k in ORDER100:
        probe.add(CountingCmp(k))
    fx.sort(probe)
    per_sort = CountingCmp.calls
    tmpl = ArrayList()
    for k in ORDER100:
        tmpl.add(Cmp(k))
    w = fx.copy(tmpl)
    fx.sort(w)
    assert [w.get(i).key for i in (0, 50, 99)] == [0, 50, 99]

    def op():
        w = fx.copy(tmpl)
        fx.sort(w)
    return op, per_sort


def worker(backend: str, conn) -> None:
    """One backend in its own process: answers ("run", sid, units) with elapsed ns."""
    setup = setup_py4jni if backend == "py4jni" else setup_jpype
    ops: dict = {}
    try:
        if backend == "py4jni":
            import py4jni
            version = py4jni.__version__
        else:
            import jpype
            version = jpype.__version__
        conn.send({"ok": True, "version": version})
        while True:
            msg = conn.recv()
            if msg[0] == "quit":
                return
            _, sid, units = msg
            try:
                if sid not in ops:
                    ops[sid] = setup(sid)
                op, per_op = ops[sid]
                t0 = time.perf_counter_ns()
                for _ in range(units):
                    op()
                conn.send({"ok": True, "ns": time.perf_counter_ns() - t0, "callbacks": per_op})
            except Exception as exc:  # reported, the run goes on
                conn.send({"ok": False, "reason": f"{type(exc).__name__}: {exc}"})
    finally:
        conn.close()


# ----------------------------------------------------------------------------- coordinator

class Cell:
    """One (scenario, backend): batch size, callbacks per operation, per-round means."""

    def __init__(self, sid: str, backend: str) -> None:
        self.sid, self.backend = sid, backend
        self.units = 1
        self.callbacks = SCENARIOS[sid][1]
        self.means: list[float] = []  # seconds per callback, one per round
        self.error: str | None = None


def run_batch(conns, cell: Cell, units: int) -> float | None:
    """Runs `units` operations; returns seconds per operation (None on error)."""
    conn = conns[cell.backend]
    conn.send(("run", cell.sid, units))
    ans = conn.recv()
    if not ans["ok"]:
        cell.error = ans["reason"]
        return None
    cell.callbacks = ans["callbacks"]
    return ans["ns"] / 1e9 / units


def calibrate(conns, cell: Cell, round_time: float, warmup: int) -> None:
    units = 1
    for _ in range(warmup + 8):
        per_op = run_batch(conns, cell, units)
        if per_op is None:
            return
        if per_op * units >= round_time / 4 or units >= 1 << 16:
            break
        units *= 4 if per_op * units < round_time / 40 else 2
    for _ in range(warmup):
        per_op = run_batch(conns, cell, units)
        if per_op is None:
            return
    cell.units = max(1, int(round_time / per_op))


def java_version() -> str:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
        return out.stderr.strip().splitlines()[0]
    except Exception as exc:  # pragma: no cover - informational only
        return f"unknown ({exc})"


def fmt_us(s: float) -> str:
    return f"{s * 1e6:.3f} us" if s < 1e-5 else f"{s * 1e6:.1f} us"


def summarize(cells: dict) -> dict:
    out: dict = {}
    for (sid, backend), cell in cells.items():
        entry = {"units_per_round": cell.units, "callbacks_per_op": cell.callbacks,
                 "round_means_per_callback_s": cell.means}
        if cell.error:
            entry["error"] = cell.error
        if cell.means:
            entry.update(median_s=statistics.median(cell.means), min_s=min(cell.means),
                         max_s=max(cell.means))
        out.setdefault(sid, {})[backend] = entry
    return out


def report_md(summary: dict, meta: dict) -> str:
    lines = [
        "# Callbacks: Java calling Python, py4jni in-process beside JPype",
        "",
        f"Run {meta['started']} on {meta['machine']} ({meta['cpus']} CPUs, shared; load "
        f"average at start {meta['loadavg']}), Python {meta['python']}, {meta['java']}; "
        f"py4jni {meta['versions'].get('py4jni')}, JPype {meta['versions'].get('jpype')}. "
        f"{meta['rounds']} rounds of about {meta['round_time']} s per cell, backends "
        "interleaved. Figures are per callback: the median of the round means, with their "
        "min-max. Ratio = JPype / py4jni (above 1: py4jni faster).",
        "",
        "| scenario | work | callbacks/op | py4jni | JPype | ratio | target | met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    targets = {"X4": 1e-6, "F100k": 1e-6, "I100k": 1e-6, "N100k": 0.5e-6}
    for sid, (desc, _) in SCENARIOS.items():
        if sid not in summary:
            continue
        row = summary[sid]
        p, j = row.get("py4jni", {}), dict(row.get("jpype", {}))
        jlabel = ""
        if sid == "N100k" and "median_s" in summary.get("I100k", {}).get("jpype", {}):
            j, jlabel = summary["I100k"]["jpype"], " (its I100k proxy)"
        cols = []
        for e, label in ((p, ""), (j, jlabel)):
            if "median_s" in e:
                cols.append(f"{fmt_us(e['median_s'])} ({fmt_us(e['min_s'])} - "
                            f"{fmt_us(e['max_s'])}){label}")
            else:
                cols.append(f"n/a: {e.get('error', 'not run')}")
        ratio = (f"{j['median_s'] / p['median_s']:.1f}x"
                 if "median_s" in p and "median_s" in j else "-")
        t = targets[sid]
        met = ("yes" if p.get("median_s", 1) <= t else "no") if "median_s" in p else "-"
        lines.append(f"| {sid} | {desc} | {p.get('callbacks_per_op', '-')} | {cols[0]} | "
                     f"{cols[1]} | {ratio} | <= {t * 1e6:g} us | {met} |")
    x4 = summary.get("X4", {})
    if all("median_s" in x4.get(b, {}) for b in BACKENDS):
        per_sort = {b: x4[b]["median_s"] * x4[b]["callbacks_per_op"] for b in BACKENDS}
        lines += ["", f"X4 per sort: py4jni {per_sort['py4jni'] * 1e6:.0f} us, JPype "
                      f"{per_sort['jpype'] * 1e6:.0f} us."]
    lines += [
        "",
        "Notes:",
        "- A proxy callback: Java calls the proxy; its InvocationHandler enters C through one "
        "registered native method, which converts the arguments (boxes read in place, a "
        "Python proxy handed back as its Python object), takes the GIL (PyGILState), calls "
        "the Python method and converts the result to the Java return type.",
        "- A native callback (N100k): Java calls a `native` method bound with "
        "RegisterNatives to a libffi closure built for its exact JNI signature; no boxing, "
        "no reflection, no Proxy.",
        "- X4: `other` reaches compareTo as the Python object on both backends.",
        "- The machine is shared with other work: min-max spreads are wide; compare backends "
        "within this run only.",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--round-time", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    sids = [s for s in args.scenarios.split(",") if s]
    for s in sids:
        if s not in SCENARIOS:
            ap.error(f"unknown scenario {s} (known: {', '.join(SCENARIOS)})")
    fixtures_jar()  # fail early
    started = datetime.datetime.now()
    out_dir = args.out or os.path.join(PERF_DIR, "results", f"{started:%Y-%m-%d}-callbacks")
    os.makedirs(out_dir, exist_ok=True)

    ctx = multiprocessing.get_context("spawn")
    conns, procs, versions = {}, {}, {}
    for b in BACKENDS:
        parent, child = ctx.Pipe()
        p = ctx.Process(target=worker, args=(b, child), daemon=True)
        p.start()
        versions[b] = parent.recv().get("version")
        conns[b], procs[b] = parent, p

    cells = {(s, b): Cell(s, b) for s in sids for b in BACKENDS
             if not (s == "N100k" and b == "jpype")}
    print(f"calibrating {len(cells)} cells ...", flush=True)
    for cell in cells.values():
        calibrate(conns, cell, args.round_time, args.warmup)
    for r in range(args.rounds):
        order = BACKENDS if r % 2 == 0 else BACKENDS[::-1]
        for s in sids:
            for b in order:
                cell = cells.get((s, b))
                if cell is None or cell.error:
                    continue
                per_op = run_batch(conns, cell, cell.units)
                if per_op is not None:
                    cell.means.append(per_op / cell.callbacks)
        print(f"round {r + 1}/{args.rounds} done", flush=True)
    for b in BACKENDS:
        conns[b].send(("quit",))
        procs[b].join(30)

    summary = summarize(cells)
    meta = dict(started=started.isoformat(timespec="seconds"), machine=platform.node(),
                cpus=os.cpu_count(), loadavg=" ".join(f"{x:.2f}" for x in os.getloadavg()),
                python=platform.python_version(), java=java_version(), versions=versions,
                rounds=args.rounds, round_time=args.round_time, platform=platform.platform())
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
