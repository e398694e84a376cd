"""Instructions per call (callgrind Ir/call) of the in-process per-call scenarios
M1-bound, M2a and M2b: a load-independent figure for changes on the call path.

    python perf/callgrind_percall.py [--calls N] [--warmup N] [SCENARIO...]

Runs this script's child mode under ``valgrind --tool=callgrind`` once per scenario.
The child warms the scenario up (the JIT settles), calls ``os.getpgid(0)`` (callgrind
dumps its counters on entering getpgid, which neither Python nor the JVM calls
otherwise), runs the scenario N times, and calls it again: the Ir between the two
dumps, over N, is the figure (all threads counted, as the JVM's own work belongs to
the call; the whole-process figure moves by ~1.5% between runs with the JIT and GC),
beside the Ir in py4jni's own extension alone (exact). Needs valgrind; PYTHONPATH must
reach the py4jni build.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

SCENARIOS = {
    "M1-bound": ("f = gw.jvm.java.lang.System.currentTimeMillis", "f()"),
    "M2a": ("sb = gw.jvm.java.lang.StringBuilder()", "sb.append(42)"),
    "M2b": ("sb = gw.jvm.java.lang.StringBuilder()", "sb.append('hello')"),
}


def child(name: str, calls: int, warmup: int) -> None:
    from py4jni import JavaGateway
    gw = JavaGateway()
    setup, op = SCENARIOS[name]
    code = compile(f"for _ in range(n):\n    {op}\n    if sb_reset: sb.setLength(0)\n",
                   name, "exec")
    env = {"gw": gw, "n": warmup, "sb_reset": False}
    exec(setup, env)
    env["sb_reset"] = "sb" in env
    exec(code, env)
    # setLength(0) after each call keeps the builder short; its own cost is measured
    # by the same loop without the operation below and subtracted.
    env["n"] = calls
    os.getpgid(0)
    exec(code, env)
    os.getpgid(0)
    if env["sb_reset"]:
        base = compile("for _ in range(n):\n    sb.setLength(0)\n", name, "exec")
        exec(base, env)
        os.getpgid(0)


def total_ir(path: str) -> int:
    with open(path) as f:
        for line in f:
            m = re.match(r"(?:summary|totals):\s+(\d+)", line)
            if m:
                return int(m.group(1))
    raise RuntimeError(f"no totals in {path}")


def own_ir(path: str) -> int:
    """Ir spent in py4jni's own code (the _py4jni extension: binding, bridge, jni/) in
    one callgrind dump: deterministic, unlike the whole process's JIT and GC work."""
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", path],
                         capture_output=True, text=True, check=True).stdout
    total = 0
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(\S.*)", line)
        if m and "_py4jni" in m.group(2):
            total += int(m.group(1).replace(",", ""))
    return total


def measure(name: str, calls: int, warmup: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=getpgid",
                        f"--callgrind-out-file={out}", sys.executable, __file__,
                        "--child", name, "--calls", str(calls), "--warmup", str(warmup)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        parts = sorted(glob.glob(out + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
        irs = [total_ir(p) for p in parts]
        own = [own_ir(p) for p in parts[1:3]]
        # parts: start..1st getpgid, the loop, [the setLength loop,] the rest
        per_call, per_call_own = irs[1] / calls, own[0] / calls
        if SCENARIOS[name][0].startswith("sb"):
            per_call -= irs[2] / calls
            per_call_own -= own[1] / calls
        return per_call, per_call_own


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", default=list(SCENARIOS))
    parser.add_argument("--calls", type=int, default=100000)
    parser.add_argument("--warmup", type=int, default=30000)
    parser.add_argument("--child")
    opts = parser.parse_args()
    if opts.child:
        child(opts.child, opts.calls, opts.warmup)
        return 0
    for name in opts.scenarios:
        total, own = measure(name, opts.calls, opts.warmup)
        print(f"{name}: {total:.0f} Ir/call ({own:.0f} in py4jni's extension)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
