"""Instructions per call of py4jni's in-process calls under callgrind (load-independent).

    python perf/callgrind_calls.py [--pythonpath DIR] [--n 2000] [--scenarios M1-bound,M2a]

Runs one Python process under ``valgrind --tool=callgrind`` (Debian package
``valgrind``). Each scenario is warmed up (4 x n calls), then runs three segments of n
calls; ``os.getppid()`` between segments is the dump marker (``--dump-before=getppid``)
and the main thread's instruction count of each segment divided by its calls is one
figure; the lowest of the three is printed. The JVM runs with ``-Xbatch`` (compilation
waits for the compiler, so the code is in the same tiers in every run) and without C2's
implicit null checks (a trap in compiled code is not delivered under valgrind). The
counts include the Python loop, the binding, JNI and the Java code of the call, so
compare builds with each other (``--pythonpath`` of each build's ``build/python``), not
with the C floor. Scenarios: M1-bound, M2a, M2b, M4, X4 (per sort of 100 Python
Comparables), X5 (per exception caught), CS (a caller-sensitive call,
``Field.getInt(None)``), size (``ArrayList.size()``, a plain call to set CS beside).
With ``--socket`` the calls go to a py4j GatewayServer (py4j's own, started outside
valgrind with the venv's py4j ``launch_gateway``) through py4jni's socket mode: the
counts are the client's (the main thread's) instructions per call; X4 (callbacks)
does not apply there.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

SCENARIOS = ["M1-bound", "M2a", "M2b", "M4", "X4", "X5", "CS", "size"]
PER = {"X4": 100, "X5": 10}  # calls per unit: X4 counts sorts, X5 exceptions


def child(n: int, names: list[str], port: int = 0) -> None:
    """The measured process: runs the scenarios with dump markers between segments
    (in-process, or through a socket to the GatewayServer on ``port``)."""
    from py4jni import GatewayParameters, JavaGateway
    from py4jni.protocol import Py4JJavaError
    if port:
        g = JavaGateway(gateway_parameters=GatewayParameters(port=port))
    else:
        g = JavaGateway(jvm_options=["-Xbatch", "-XX:+UnlockDiagnosticVMOptions",
                                     "-XX:-ImplicitNullChecks"])
    jvm = g.jvm
    f = jvm.java.lang.System.currentTimeMillis
    sb = jvm.java.lang.StringBuilder()
    new_sb = jvm.java.lang.StringBuilder
    lst = jvm.java.util.ArrayList()
    size = lst.size
    get_int = jvm.java.lang.Class.forName("java.lang.Integer").getField("MAX_VALUE").getInt

    class Cmp:
        def __init__(self, k: int) -> None:
            self.k = k

        def compareTo(self, o: object) -> int:  # noqa: N802 - Java's name
            return self.k - o.hashCode()  # type: ignore[attr-defined]

        def hashCode(self) -> int:  # noqa: N802 - Java's name
            return self.k

        class Java:
            implements = ["java.lang.Comparable"]

    order = [(i * 37) % 100 for i in range(100)]
    tmpl = jvm.java.util.ArrayList()
    for k in order if "X4" in names else []:
        tmpl.add(Cmp(k))
    new_list, sort = jvm.java.util.ArrayList, jvm.java.util.Collections.sort

    def m1(k: int) -> None:
        for _ in range(k):
            f()

    def appends(arg: object) -> object:
        def run(k: int) -> None:
            for _ in range(k // 1000):
                for _ in range(1000):
                    sb.append(arg)
                sb.setLength(0)
        return run

    def m4(k: int) -> None:
        for _ in range(k):
            new_sb()

    def x4(k: int) -> None:
        for _ in range(k // 100):
            sort(new_list(tmpl))

    def x5(k: int) -> None:
        for _ in range(k // 10):
            try:
                lst.get(-1)
            except Py4JJavaError:
                pass

    def cs(k: int) -> None:
        for _ in range(k):
            get_int(None)

    def plain(k: int) -> None:
        for _ in range(k):
            size()

    runs = {"M1-bound": m1, "M2a": appends(42), "M2b": appends("hello"), "M4": m4, "X4": x4,
            "X5": x5, "CS": cs, "size": plain}
    for name in names:
        run = runs[name]
        run(4 * n)
        for _ in range(3):
            os.getppid()
            run(n)
        os.getppid()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pythonpath", help="the build's python dir (default: as inherited)")
    ap.add_argument("--n", type=int, default=2000, help="calls per segment (default 2000)")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--socket", action="store_true",
                    help="socket mode: calls to a py4j GatewayServer (the client's count)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    names = [s for s in args.scenarios.split(",") if s]
    if args.socket and "--scenarios" not in sys.argv:
        names = [s for s in names if s != "X4"]
    unknown = set(names) - set(SCENARIOS)
    if unknown:
        print(f"unknown scenarios {sorted(unknown)}; known: {SCENARIOS}", file=sys.stderr)
        return 2
    if args.socket and "X4" in names:
        print("X4 (callbacks) does not apply to --socket", file=sys.stderr)
        return 2
    if args.child:
        child(args.n, names, args.port)
        return 0
    if not shutil.which("valgrind"):
        print("valgrind not found (apt-get install --no-install-recommends valgrind)",
              file=sys.stderr)
        return 2
    env = dict(os.environ)
    if args.pythonpath:
        env["PYTHONPATH"] = args.pythonpath
    server = None
    if args.socket:  # py4j's own GatewayServer, outside valgrind
        from py4j.java_gateway import launch_gateway
        args.port, server = launch_gateway(die_on_exit=True, return_proc=True)
    with tempfile.TemporaryDirectory(prefix="p4j-callgrind-") as out:
        cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
               "--dump-before=getppid", f"--callgrind-out-file={out}/cg.%p", sys.executable,
               os.path.abspath(__file__), "--child", "--n", str(args.n),
               "--scenarios", ",".join(names), "--port", str(args.port)]
        try:
            done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        finally:
            if server is not None:
                server.kill()
                server.wait()
        if done.returncode != 0:
            print(done.stdout[-2000:], done.stderr[-4000:], file=sys.stderr)
            return 1
        parts: dict[int, int] = {}
        for path in glob.glob(f"{out}/cg.*.*-01"):  # part k of the main thread (01)
            k = int(re.search(r"\.(\d+)-01$", path).group(1))  # type: ignore[union-attr]
            with open(path) as fh:
                for line in fh:
                    if line.startswith("summary:"):
                        parts[k] = int(line.split()[1])
    for s, name in enumerate(names):
        calls = args.n // PER.get(name, 1)
        per = [parts[4 * s + 2 + i] / calls for i in range(3)]
        unit = {"X4": "sort", "X5": "exception"}.get(name, "call")
        print(f"{name:9s} {min(per):12,.0f} Ir/{unit}   segments "
              + " ".join(f"{v:,.0f}" for v in per))
    return 0


if __name__ == "__main__":
    sys.exit(main())
