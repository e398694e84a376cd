"""Instructions per call of py4jni's calls under callgrind (load-independent).

    python perf/callgrind_calls.py [--pythonpath DIR] [--n 2000] [--scenarios M1,M2a]
                                   [--socket] [--breakdown 12] [--json FILE]

Runs one Python process under ``valgrind --tool=callgrind`` (Debian package
``valgrind``). A scenario is any timed row of perf/scenarios.py (its py4j-API code, the
same that perf/bench.py times), or one of the extras below. Each is set up, warmed up
(4 segments' worth of units), then runs three segments of about n operations;
``os.getppid()`` before and after each segment is the dump marker
(``--dump-before=getppid``), so a segment's dump holds exactly its units of work (and the
scenario's untimed ``between`` code runs outside it). The main thread's instruction count
of a segment divided by its operations (calls; X4: callbacks) is one figure; the lowest
of the three is printed, with all three.

What keeps the counts the same run to run: the JVM runs with ``-Xbatch`` (compilation
waits for the compiler, so the code reaches the same tiers at the same call in every run)
and without C2's implicit null checks (a trap in compiled code is not delivered under
valgrind); the compiler and GC threads are counted apart (``--separate-threads``), and
only the main thread's count is used; ``PYTHONHASHSEED=0`` fixes str hashes, so dict
probes take the same path; valgrind presents a fixed CPU model to the program (its
CPUID), so glibc and HotSpot pick the same code on any x86-64 host with AVX2.

The counts include the Python loop, the binding, JNI and the Java code of the call, so
compare builds with each other (``--pythonpath`` of each build's ``build/python``), not
with the C floor. ``--breakdown K`` adds where the instructions of each scenario go: by
object (Python, py4jni's extension, libjvm, code the JIT made, libc) and its K costliest
functions (exclusive), from the lowest segment. With ``--socket`` the calls go to a py4j
GatewayServer (py4j's own, started outside valgrind with the venv's py4j
``launch_gateway``) through py4jni's socket mode: the counts are the client's (the main
thread's) instructions per call; callback scenarios (X4) do not apply there.

Extras (not in perf/scenarios.py): X5-10 (10 x ``ArrayList.get(-1)`` caught, per
exception), X7-obj-1k (a 1 KiB ``byte[]`` received from a method declared to return
Object: ``AtomicReference.get()``), CB-bytes-1k (Java calls a Python proxy with a 1 KiB
``byte[]`` argument and gets it back: the fixtures' ``CallbackFixtures.reverse``), CS (a caller-sensitive call, ``Field.getInt(None)``), size
(``ArrayList.size()``, a plain call to set CS beside) and pad (one turn of an empty
Python loop, per turn: perf/instruction_gate.py's unit for an injected slowdown and a
measure of the interpreter itself).

``--sim`` adds valgrind's cache and branch simulation (``--cache-sim=yes
--branch-sim=yes``, the caches of the host's CPUID) and prints per call the simulated
L1 instruction-cache misses and mispredicted branches (conditional + indirect), with
the floor's beside them under ``--floor``: what an instruction count leaves out when a
row's time ratio exceeds its instruction ratio; with ``--breakdown`` also the misses by
object (whose code missed: the interpreter's, the JVM's or py4jni's). It runs ~2x slower.
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from typing import Any

PERF = os.path.dirname(os.path.abspath(__file__))
EXTRAS = ["X5-10", "X7-obj-1k", "CB-bytes-1k", "CS", "size", "pad"]
DEFAULT = ["M1", "M1-bound", "M2a", "M2b", "M4", "X4", "X5-10", "X7-16k", "X8-16k", "CS",
           "size"]
# The JVM options that make compilation deterministic (see the module docstring).
JVM_OPTIONS = ["-Xbatch", "-XX:+UnlockDiagnosticVMOptions", "-XX:-ImplicitNullChecks"]


def _extras(g: Any, names: dict[str, Any]) -> dict[str, Any]:
    """(run, between, ops) of the extra scenarios, for gateway g."""
    jvm = g.jvm
    lst = jvm.java.util.ArrayList()
    size = lst.size
    get_int = jvm.java.lang.Class.forName("java.lang.Integer").getField("MAX_VALUE").getInt
    error = names["api"].Py4JJavaError
    holder = jvm.java.util.concurrent.atomic.AtomicReference()
    holder.set(bytes(1024))  # a byte[] held as an Object
    held = holder.get

    def x5(k: int) -> None:
        for _ in range(k):
            for _ in range(10):
                try:
                    lst.get(-1)
                except error:
                    pass

    def obj_bytes(k: int) -> None:
        for _ in range(k):
            held()

    class Echo:
        """The fixtures' CallbackFixtures.AllTypes, its reverse(byte[]) only."""

        def reverse(self, b: bytes) -> bytes:
            return b

        class Java:
            implements = ["org.py4jni.fixtures.CallbackFixtures$AllTypes"]

    echo, data, reverse = Echo(), bytes(1024), []

    def cb_bytes(k: int) -> None:
        if not reverse:  # resolved on first use (warm-up): the fixtures jar is needed
            reverse.append(jvm.org.py4jni.fixtures.CallbackFixtures.reverse)
        f = reverse[0]
        for _ in range(k):
            f(echo, data)

    def cs(k: int) -> None:
        for _ in range(k):
            get_int(None)

    def plain(k: int) -> None:
        for _ in range(k):
            size()

    def pad(k: int) -> None:
        for _ in range(k):
            pass

    def nothing() -> None:
        pass

    return {"X5-10": (x5, nothing, 10), "X7-obj-1k": (obj_bytes, nothing, 1),
            "CB-bytes-1k": (cb_bytes, nothing, 1),
            "CS": (cs, nothing, 1), "size": (plain, nothing, 1), "pad": (pad, nothing, 1)}


def _prepare(name: str, names: dict[str, Any], extras: dict[str, Any]) -> tuple[Any, Any, int]:
    """(run(units), between(), operations per unit) of scenario `name`."""
    if name in extras:
        return extras[name]
    import scenarios
    sc = scenarios.BY_ID[name]
    expr = sc.expr("py4j")
    if expr.na:
        raise scenarios.NotApplicable(expr.na)
    ns = dict(names)
    ns.update(sc.params)
    exec(compile(scenarios.source(sc, "py4j"), f"<scenario {name}>", "exec"), ns)
    run, between, _stats, _teardown, ops = ns["_prepare"]()
    return run, between, int(ops)


def child(n: int, names_wanted: list[str], port: int, pads: dict[str, list[float]],
          plan: str, fixtures: str | None) -> None:
    """The measured process: sets up each scenario and runs its segments between dump
    markers; writes the plan (which dump holds which segment) to `plan`. `pads` maps a
    scenario to [instructions per operation to add, instructions per pad turn]."""
    sys.path.insert(0, PERF)
    import backends
    import helpers
    import scenarios
    api = backends.load_py4j_api("py4jni")
    kw: dict[str, Any] = {"classpath": fixtures} if fixtures else {}
    if port:
        g = api.JavaGateway(gateway_parameters=api.GatewayParameters(port=port))
    else:
        g = api.JavaGateway(jvm_options=JVM_OPTIONS, **kw)
    names: dict[str, Any] = {k: getattr(helpers, k) for k in dir(helpers) if not k.startswith("_")}

    def need_fixtures() -> None:
        if not fixtures:
            raise scenarios.FixturesUnavailable("no fixtures jar (set P4J_FIXTURES_JAR)")

    names.update(gateway=g, api=api, mode="socket" if port else "inproc",
                 callback_gateway=lambda: g, need_fixtures=need_fixtures,
                 NotApplicable=scenarios.NotApplicable, N=None)
    extras = _extras(g, names)
    dumps = 0
    rows = []

    def marker() -> None:
        nonlocal dumps
        os.getppid()
        dumps += 1

    for name in names_wanted:
        run, between, ops = _prepare(name, names, extras)
        units = max(1, -(-n // ops))
        pad = extras["pad"][0]
        extra, turn = pads.get(name, (0.0, 1.0))
        turns = math.ceil(extra * units * ops / turn)
        run(4 * units)
        between()
        for seg in range(3):
            marker()
            run(units)
            if turns:
                pad(turns)
            marker()
            rows.append({"scenario": name, "segment": seg, "dump": dumps, "units": units,
                         "ops": units * ops})
            between()
    with open(plan, "w") as fh:
        json.dump({"rows": rows, "dumps": dumps}, fh)


def _parse(path: str, event: str = "Ir") -> tuple[int, dict[str, int],
                                                 dict[tuple[str, str], int]]:
    """Total Ir of one callgrind dump, and its exclusive cost of `event` (Ir; with --sim
    e.g. I1mr) by object and by function."""
    total = 0
    column = 1  # a cost line: position, then one number per event (trailing zeros left out)
    by_obj: dict[str, int] = defaultdict(int)
    by_fn: dict[tuple[str, str], int] = defaultdict(int)
    names: dict[str, dict[str, str]] = {"ob": {}, "fn": {}}
    ob = fn = "?"
    skip = False  # the line after calls= is the inclusive cost of the call

    def name_of(kind: str, text: str) -> str:
        m = re.match(r"\((\d+)\)(?: (.*))?", text)
        if not m:
            return text
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), text)

    with open(path) as fh:
        for line in fh:
            c = line[0]
            if c.isdigit() or c in "+-*":
                if skip:
                    skip = False
                    continue
                parts = line.split()
                if len(parts) > column:
                    cost = int(parts[column])
                    by_obj[ob] += cost
                    by_fn[(ob, fn)] += cost
            elif line.startswith("events:"):
                column = line.split()[1:].index(event) + 1
            elif line.startswith("summary:"):
                total = int(line.split()[1])
            elif line.startswith("ob="):
                ob = name_of("ob", line[3:].strip())
            elif line.startswith("fn="):
                fn = name_of("fn", line[3:].strip())
            elif line.startswith(("cob=", "cfn=")):
                name_of(line[1:3], line[4:].strip())
            elif line.startswith("calls="):
                skip = True
    return total, dict(by_obj), dict(by_fn)


#: valgrind's options and the events reported with --sim.
SIM_OPTIONS = ["--cache-sim=yes", "--branch-sim=yes"]


def _sim_totals(path: str) -> dict[str, float]:
    """A dump's simulated I1 misses ("I1mr") and mispredicted branches ("mispredicts":
    Bcm + Bim) from its events and totals lines; {} without simulation."""
    events: list[str] = []
    totals: list[int] = []
    with open(path) as fh:
        for line in fh:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith(("summary:", "totals:")):
                totals = [int(x) for x in line.split()[1:]]
    d = dict(zip(events, totals))
    if "I1mr" not in d:
        return {}
    return {"I1mr": float(d["I1mr"]), "mispredicts": float(d.get("Bcm", 0) + d.get("Bim", 0))}


def _group(obj: str) -> str:
    base = os.path.basename(obj)
    if "_py4jni" in base:
        return "py4jni"
    if base.startswith("libjvm"):
        return "libjvm"
    if base.startswith("python") or base.startswith("libpython"):
        return "python"
    if base.startswith(("libc.", "libc-", "libm.", "libm-", "ld-linux")):
        return "libc"
    if obj in ("???", "?") or not base:
        return "JIT code"
    return base


def measure(names: list[str], n: int = 2000, socket: bool = False,
            pythonpath: str | None = None, pads: dict[str, list[float]] | None = None,
            breakdown: int = 0, sim: bool = False) -> dict[str, dict[str, Any]]:
    """Runs the scenarios under callgrind; returns per scenario: "ir" (lowest segment's
    instructions per operation), "segments" (all three) and, with breakdown, "objects"
    and "functions" of the lowest segment (per operation), with sim its "sim" (_sim_totals
    per operation). `pads` (a test of
    perf/instruction_gate.py): scenario -> [instructions per operation to add in empty
    loop turns, the instructions of one turn]. Raises RuntimeError with the child's
    output when the run fails."""
    if not shutil.which("valgrind"):
        raise RuntimeError("valgrind not found (apt-get install --no-install-recommends "
                           "valgrind; tests/setup_env.sh installs it)")
    env = dict(os.environ, PYTHONHASHSEED="0")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    server = None
    port = 0
    if socket:  # py4j's own GatewayServer, outside valgrind
        from py4j.java_gateway import launch_gateway
        port, server = launch_gateway(die_on_exit=True, return_proc=True)
    fixtures = os.environ.get("P4J_FIXTURES_JAR")
    with tempfile.TemporaryDirectory(prefix="p4j-callgrind-") as out:
        plan = os.path.join(out, "plan.json")
        cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes", *(SIM_OPTIONS * sim),
               "--dump-before=getppid", f"--callgrind-out-file={out}/cg.%p", sys.executable,
               os.path.abspath(__file__), "--child", "--n", str(n),
               "--scenarios", ",".join(names), "--port", str(port), "--plan", plan,
               "--pads", json.dumps(pads or {})]
        if fixtures and not socket:
            cmd += ["--fixtures", fixtures]
        try:
            done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        finally:
            if server is not None:
                server.kill()
                server.wait()
        if done.returncode != 0 or not os.path.exists(plan):
            raise RuntimeError(f"the callgrind run failed (exit {done.returncode}):\n"
                               f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
        with open(plan) as fh:
            layout = json.load(fh)
        files = {int(re.search(r"\.(\d+)-01$", p).group(1)): p  # type: ignore[union-attr]
                 for p in glob.glob(f"{out}/cg.*.*-01")}
        if len(files) < layout["dumps"] or layout["dumps"] not in files:
            raise RuntimeError(f"expected {layout['dumps']} dumps of the main thread, found "
                               f"{len(files)}: something else called getppid")
        results: dict[str, dict[str, Any]] = {}
        for row in layout["rows"]:
            total, by_obj, by_fn = _parse(files[row["dump"]])
            r = results.setdefault(row["scenario"], {"segments": [], "_parts": []})
            per = total / row["ops"]
            r["segments"].append(per)
            simd = _sim_totals(files[row["dump"]]) if sim else {}
            miss_obj = _parse(files[row["dump"]], "I1mr")[1] if simd and breakdown else {}
            r["_parts"].append((per, row["ops"], by_obj, by_fn, simd, miss_obj))
    for name, r in results.items():
        per, ops, by_obj, by_fn, simd, miss_obj = min(r.pop("_parts"), key=lambda p: p[0])
        r["ir"] = per
        if simd:
            r["sim"] = {k: v / ops for k, v in simd.items()}
        if miss_obj:
            misses: dict[str, float] = defaultdict(float)
            for obj, cost in miss_obj.items():
                misses[_group(obj)] += cost / ops
            r["sim_objects"] = dict(sorted(misses.items(), key=lambda kv: -kv[1]))
        if breakdown:
            groups: dict[str, float] = defaultdict(float)
            for obj, cost in by_obj.items():
                groups[_group(obj)] += cost / ops
            r["objects"] = dict(sorted(groups.items(), key=lambda kv: -kv[1]))
            top = sorted(by_fn.items(), key=lambda kv: -kv[1])[:breakdown]
            r["functions"] = [(_group(o), f, c / ops) for (o, f), c in top]
    return results


def measure_floor(names: list[str], n: int = 2000,
                  sim: bool = False) -> dict[str, dict[str, Any]]:
    """The C/JNI floor's instructions per call (perf/floor.c's `p4j_floor --serve` under
    callgrind, the same JVM options): per scenario "ir" (lowest of three runs of n calls
    after a run of 4 n) and "segments", with sim "sim" of the lowest. Scenarios the floor
    lacks are left out."""
    import bench
    import scenarios
    class _Say:
        def log(self, msg: str) -> None:
            print(msg, file=sys.stderr)

    path, why = bench.floor_binary(None, _Say())
    if not path:
        raise RuntimeError(f"no p4j_floor: {why}")
    ids = [s for s in names if s in scenarios.FLOOR_IDS or s == "M1-bound"]
    with tempfile.TemporaryDirectory(prefix="p4j-callgrind-floor-") as out:
        script = "".join(f"run {'M1' if s == 'M1-bound' else s} {k}\n"
                         for s in ids for k in (4 * n, n, n, n)) + "quit\n"
        cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes", *(SIM_OPTIONS * sim),
               "--dump-before=getppid", f"--callgrind-out-file={out}/cg.%p", path, "--serve"]
        for opt in JVM_OPTIONS:
            cmd += ["--jvm-opt", opt]
        done = subprocess.run(cmd, input=script, capture_output=True, text=True)
        answers = [ln for ln in done.stdout.splitlines() if ln.startswith(("ok", "err"))]
        if done.returncode != 0 or len(answers) != 4 * len(ids) or any(
                a.startswith("err") for a in answers):
            raise RuntimeError(f"the floor's callgrind run failed (exit {done.returncode}):\n"
                               f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
        files = {int(re.search(r"\.(\d+)-01$", p).group(1)): p  # type: ignore[union-attr]
                 for p in glob.glob(f"{out}/cg.*.*-01")}
        results: dict[str, dict[str, Any]] = {}
        for i, sid in enumerate(ids):  # two markers per run: its dump is the second
            dumps = [files[2 * (4 * i + k) + 2] for k in (1, 2, 3)]
            per = [_parse(d)[0] / n for d in dumps]
            results[sid] = {"ir": min(per), "segments": per}
            if sim:
                lowest = _sim_totals(dumps[per.index(min(per))])
                results[sid]["sim"] = {k: v / n for k, v in lowest.items()}
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pythonpath", help="the build's python dir (default: as inherited)")
    ap.add_argument("--n", type=int, default=2000, help="operations per segment (default 2000)")
    ap.add_argument("--scenarios", help=f"comma-separated (default: {','.join(DEFAULT)})")
    ap.add_argument("--socket", action="store_true",
                    help="socket mode: calls to a py4j GatewayServer (the client's count)")
    ap.add_argument("--breakdown", type=int, default=0, metavar="K",
                    help="also show instructions by object and the K costliest functions")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    ap.add_argument("--sim", action="store_true",
                    help="also simulate caches and branches: I1 misses, mispredicts per call")
    ap.add_argument("--floor", action="store_true",
                    help="also count the C/JNI floor (perf/floor.c) and show the ratio")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--plan", help=argparse.SUPPRESS)
    ap.add_argument("--pads", default="{}", help=argparse.SUPPRESS)
    ap.add_argument("--fixtures", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.scenarios:
        names = [s for s in args.scenarios.split(",") if s]
    else:
        names = [s for s in DEFAULT if not (args.socket and s == "X4")]
    if args.child:
        child(args.n, names, args.port, json.loads(args.pads), args.plan, args.fixtures)
        return 0
    sys.path.insert(0, PERF)
    import scenarios
    unknown = [s for s in names if s not in scenarios.BY_ID and s not in EXTRAS]
    if unknown:
        print(f"unknown scenarios {unknown}; known: the ids of perf/scenarios.py "
              f"(python perf/bench.py --list) and {EXTRAS}", file=sys.stderr)
        return 2
    if args.socket and "X4" in names:
        print("X4 (callbacks) does not apply to --socket", file=sys.stderr)
        return 2
    try:
        results = measure(names, args.n, args.socket, args.pythonpath,
                          breakdown=args.breakdown, sim=args.sim)
        floor = measure_floor(names, args.n, args.sim) if args.floor else {}
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 1
    for name in names:
        r = results[name]
        unit = {"X4": "callback", "X5-10": "exception", "pad": "turn"}.get(name, "call")
        fl = floor.get(name)
        if fl:
            r["floor"] = fl
        print(f"{name:9s} {r['ir']:12,.0f} Ir/{unit}   segments "
              + " ".join(f"{v:,.0f}" for v in r["segments"])
              + (f"   floor {fl['ir']:,.0f} ({r['ir'] / fl['ir']:.2f}x)" if fl else ""))
        if "sim" in r:
            fs = (fl or {}).get("sim")
            print("          simulated per " + unit + ": " + ", ".join(
                f"{label} {r['sim'][key]:,.1f}" + (f" (floor {fs[key]:,.1f})" if fs else "")
                for key, label in (("I1mr", "I1 misses"), ("mispredicts", "mispredicts"))))
        if "sim_objects" in r:
            print("          I1 misses by object: " + (", ".join(
                f"{k} {v:,.1f}" for k, v in r["sim_objects"].items() if v >= 0.05) or "none"))
        if args.breakdown:
            print("          by object: " + ", ".join(
                f"{k} {v:,.0f}" for k, v in r["objects"].items() if v >= 0.5))
            for group, fn, cost in r["functions"]:
                print(f"          {cost:8,.0f}  {group:8s} {fn}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
