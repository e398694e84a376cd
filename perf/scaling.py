"""Thread scaling: throughput of 1, 2, 4, 8 Python threads calling Java at once.

Scenarios (perf/README.md's, each thread with its own objects, made on that thread, so that
nothing is shared): M1-bound (``f()``, f = System.currentTimeMillis), M2a
(``sb.append(42)``), X7-16k (``bb.array()`` of a 16 KiB ByteBuffer -> bytes), X4
(``Collections.sort`` of 100 Python Comparables; counted per sort), POW (CPU-bound Java:
``BigInteger.valueOf(3).pow(EXP).bitLength()``, ~2 ms of Java work a call here).

A worker process (``--worker BACKEND``: py4jni in-process, JPype, or py4j against its own
GatewayServer) measures every scenario and thread count on the interpreter running it;
rounds alternate the thread counts. For each cell: threads run for ``--seconds``, each
counting its operations; throughput = all threads' operations / wall time; the median
of the rounds is reported with min-max.

    python perf/scaling.py --worker py4jni --out cells.json      # one interpreter
    python perf/scaling.py --report DIR                           # report.md + chart
                                                                  # from DIR/*.json
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import statistics
import sys
import sysconfig
import threading
import time
from typing import Any, Callable

THREADS = (1, 2, 4, 8)
SCENARIOS = ("M1-bound", "M2a", "X7-16k", "X4", "POW")
POW_EXP = 20000
ORDER100 = [(k * 37) % 100 for k in range(100)]


def interpreter_name() -> str:
    """e.g. 'CPython 3.13.15t (GIL off)'."""
    ft = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    gil = getattr(sys, "_is_gil_enabled", lambda: True)()
    v = platform.python_version() + ("t" if ft else "")
    return f"CPython {v}" + (f" (GIL {'on' if gil else 'off'})" if ft else "")


# ---------------------------------------------------------------- backends


def py4jni_gateway() -> Any:
    from py4jni import JavaGateway
    return JavaGateway()


def py4j_gateway() -> Any:
    from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway
    port = launch_gateway(die_on_exit=True)
    return JavaGateway(gateway_parameters=GatewayParameters(port=port))


class JPypeJvm:
    """JPype in the shape the scenarios use: ``jvm.java.lang.X`` (starts its JVM)."""

    def __init__(self) -> None:
        import jpype
        if not jpype.isJVMStarted():
            jpype.startJVM()
        self.java = jpype.JPackage("java")
        self.jpype = jpype


def comparable_class(backend: str) -> Any:
    """A Python java.lang.Comparable for this backend (X4)."""
    if backend == "jpype":
        import jpype

        @jpype.JImplements("java.lang.Comparable")
        class JCmp:
            def __init__(self, key: int) -> None:
                self.key = key

            @jpype.JOverride
            def compareTo(self, other: Any) -> int:  # noqa: N802 - Java's name
                o = other.key if hasattr(other, "key") else int(other.hashCode())
                return (self.key > o) - (self.key < o)

            @jpype.JOverride
            def hashCode(self) -> int:  # noqa: N802
                return self.key
        return JCmp

    class Cmp:
        def __init__(self, key: int) -> None:
            self.key = key

        def compareTo(self, other: Any) -> int:  # noqa: N802 - Java's name
            o = other.key if hasattr(other, "key") else other.hashCode()
            return (self.key > o) - (self.key < o)

        def hashCode(self) -> int:  # noqa: N802
            return self.key

        class Java:
            implements = ["java.lang.Comparable"]
    return Cmp


def make_op(backend: str, jvm: Any, scenario: str) -> Callable[[], None] | None:
    """One thread's operation for `scenario` (its own objects), or None: not applicable."""
    java = jvm.java
    if scenario == "M1-bound":
        return java.lang.System.currentTimeMillis
    if scenario == "M2a":
        sb = java.lang.StringBuilder()
        if backend == "jpype":
            v = jvm.jpype.JInt(42)
            return lambda: sb.append(v) and None
        return lambda: sb.append(42) and None
    if scenario == "X7-16k":
        bb = java.nio.ByteBuffer.allocate(16384)
        if backend == "jpype":
            return lambda: bytes(bb.array()) and None
        return lambda: bb.array() and None
    if scenario == "X4":
        if backend == "py4j":
            return None  # needs py4j's callback server wired to an ephemeral port
        Cmp = comparable_class(backend)
        AL, sort = java.util.ArrayList, java.util.Collections.sort
        tmpl = AL()
        for k in ORDER100:
            tmpl.add(Cmp(k))

        def x4() -> None:
            w = AL(tmpl)
            sort(w)
        return x4
    if scenario == "POW":
        three = java.math.BigInteger.valueOf(3)
        return lambda: three.pow(POW_EXP).bitLength() and None
    raise ValueError(scenario)


def measure(backend: str, jvm: Any, scenario: str, threads: int,
            seconds: float) -> tuple[float, float] | None:
    """(operations per second, cores used: the process's CPU time / wall time) of
    `threads` threads doing `scenario` for `seconds`."""
    if make_op(backend, jvm, scenario) is None:
        return None
    # Operations between two looks at the shared stop flag: each look changes the flag's
    # reference count, which on a free-threaded build both threads write (every 8 short
    # calls, that halved a Python loop's own throughput at 2 threads here). The slow
    # scenarios look after each operation, so that no thread runs on alone for long.
    chunk = 1 if scenario in ("X4", "POW") else 256
    counts = [0] * threads
    start = threading.Barrier(threads + 1)
    stop = threading.Event()

    def run(i: int) -> None:
        # Each thread makes its own operation: on a free-threaded build an object made
        # by another thread has its reference count changed atomically, and objects
        # made one after another may share a cache line, which both threads would write.
        op, n = make_op(backend, jvm, scenario), 0
        assert op is not None
        for _ in range(3):  # warm this thread's call sites
            op()
        start.wait()
        while not stop.is_set():
            for _ in range(chunk):
                op()
            n += chunk
        counts[i] = n

    ts = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    start.wait()
    t0, c0 = time.perf_counter(), time.process_time()
    time.sleep(seconds)
    stop.set()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    return sum(counts) / wall, (time.process_time() - c0) / wall


def worker(backend: str, rounds: int, seconds: float, out: str) -> None:
    load_before = os.getloadavg()
    if backend == "py4jni":
        jvm = py4jni_gateway().jvm
    elif backend == "py4j":
        jvm = py4j_gateway().jvm
    else:
        jvm = JPypeJvm()
    cells: dict[str, dict[str, list[float]]] = {}
    cores: dict[str, dict[str, list[float]]] = {}
    for r in range(rounds):
        order = THREADS if r % 2 == 0 else tuple(reversed(THREADS))
        for scenario in SCENARIOS:
            for n in order:
                v = measure(backend, jvm, scenario, n, seconds)
                if v is not None:
                    cells.setdefault(scenario, {}).setdefault(str(n), []).append(v[0])
                    cores.setdefault(scenario, {}).setdefault(str(n), []).append(v[1])
    result = {
        "backend": backend, "interpreter": interpreter_name(),
        "gil_enabled": getattr(sys, "_is_gil_enabled", lambda: True)(),
        "seconds": seconds, "rounds": rounds, "pow_exp": POW_EXP,
        "load_before": load_before, "load_after": None, "cells": cells, "cores": cores,
    }
    result["load_after"] = os.getloadavg()
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"{backend} on {result['interpreter']}: {out}", file=sys.stderr)
    os._exit(0)  # a JVM's non-daemon threads (py4j's server) must not hold the exit


# ---------------------------------------------------------------- report


def report(folder: str) -> None:
    runs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(folder, "cells-*.json")))]
    lines = []
    for run in runs:
        label = f"{run['backend']}, {run['interpreter']}"
        for scenario in SCENARIOS:
            cells = run["cells"].get(scenario)
            if not cells:
                lines.append((label, scenario, None))
                continue
            med = {int(n): statistics.median(v) for n, v in cells.items()}
            rng = {int(n): (min(v), max(v)) for n, v in cells.items()}
            cores = {int(n): statistics.median(v)
                     for n, v in run.get("cores", {}).get(scenario, {}).items()}
            lines.append((label, scenario, (med, rng, cores)))
    with open(os.path.join(folder, "table.md"), "w") as f:
        f.write("| scenario | backend, interpreter | 1 thread: ops/s (min-max) | 2 threads "
                "| 4 threads | 8 threads |\n")
        f.write("|---|---|---|---|---|---|\n")
        for scenario in SCENARIOS:
            for label, s, cell in lines:
                if s != scenario:
                    continue
                if cell is None:
                    f.write(f"| {scenario} | {label} | n/a | | | |\n")
                    continue
                med, rng, cores = cell
                one = med[1]

                def at(n: int) -> str:
                    c = f" ({cores[n]:.2f} cores)" if n in cores else ""
                    return f"{med[n] / one:.2f}x{c}"
                f.write(f"| {scenario} | {label} | {one:,.0f} ({rng[1][0]:,.0f}-{rng[1][1]:,.0f})"
                        f"{f' ({cores[1]:.2f} cores)' if 1 in cores else ''} | "
                        + " | ".join(at(n) for n in THREADS[1:]) + " |\n")
    chart(folder, lines)


def chart(folder: str, lines: list[Any]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(SCENARIOS), figsize=(4 * len(SCENARIOS), 4), sharey=True)
    for ax, scenario in zip(axes, SCENARIOS):
        for label, s, cell in lines:
            if s != scenario or cell is None:
                continue
            med = cell[0]
            ax.plot(THREADS, [med[n] / med[1] for n in THREADS], marker="o", label=label)
        ax.axhline(2.0, color="grey", lw=0.8, ls=":")
        ax.set_title(scenario)
        ax.set_xscale("log", base=2)
        ax.set_xticks(THREADS, [str(n) for n in THREADS])
        ax.set_xlabel("Python threads")
    axes[0].set_ylabel("throughput / one thread's (2 cores: 2.0 is the ceiling)")
    axes[-1].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "scaling.png"), dpi=90)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", choices=("py4jni", "jpype", "py4j"))
    ap.add_argument("--out")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=0.4)
    ap.add_argument("--report", metavar="DIR")
    a = ap.parse_args()
    if a.worker:
        worker(a.worker, a.rounds, a.seconds, a.out)
    elif a.report:
        report(a.report)
    else:
        ap.error("--worker or --report")


if __name__ == "__main__":
    main()
