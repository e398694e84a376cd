#!/usr/bin/env python3
"""py4jni benchmark suite: every scenario of perf/README.md, every backend side by side
in one run.

    python perf/bench.py [--quick] [--scenarios M1,X7-16k,...] [--backends py4jni,py4j,...]
                         [--out DIR]

This process is the coordinator and never starts a JVM. Each backend lives in a worker
process of its own (perf/worker.py, multiprocessing with the spawn start method): one
embedded JVM per process for py4jni in-process and JPype; the py4j client and py4jni's
socket client each talk to a py4j GatewayServer of their own, started here. The C/JNI
floor (perf/floor.c; CMake target p4j_floor, else built here with gcc into perf/bin/) is one more
worker. Round by round, for each scenario, each worker runs one batch of about
--round-time seconds (calibrated during warm-up); the report gives the median and the
min-max of the round means, and ratios between backends of the same run.

Results go to perf/results/<date>-<machine>[-quick]/: results.json (every round),
report.md and PNG charts (perf/report.py; `python perf/report.py results.json` redraws).
Exit status: 0 when every requested figure was measured (or is n/a or skipped with the
reason), 1 when one failed (report.md lists them first), 2 on a bad command line, 130
when interrupted.
"""
import argparse
import datetime
import glob
import json
import math
import multiprocessing
import os
import platform
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile

import backends
import scenarios

PERF_DIR = backends.PERF_DIR
REPO_DIR = backends.REPO_DIR

# Run sizes. A cell (scenario x backend) takes part in `rounds` rounds unless its batches
# would exceed `budget` seconds in all: then it runs in fewer rounds (at least
# `min_rounds`), spread evenly over the run. A cell of a large-size scenario
# (Scenario.may_skip: X7/X8 from 1 MiB, X9) whose least work (its first unit, warm-up
# and min_rounds batches of one unit) would exceed SKIP_FACTOR x budget (at least
# SKIP_MIN_S) is "skipped: over budget" after its first units (a backend gone slow).
PRESETS = {
    "full": dict(rounds=21, round_time=0.1, budget=4.0, min_rounds=5, warmup_batches=2,
                 cold_reps=10, mem_objects=1_000_000),
    "quick": dict(rounds=3, round_time=0.05, budget=0.5, min_rounds=1, warmup_batches=1,
                  cold_reps=1, mem_objects=1_000_000),
}
# Left out of a quick run unless --scenarios names them: the sizes whose units take
# seconds on the socket backends (py4j's base64; 100,000 round trips), which a smoke run
# does not need (X2-10k, X7-1M and X8-1M measure the same paths).
QUICK_LEFT_OUT = ("X2-100k", "X7-16M", "X7-64M", "X8-16M", "X8-64M")
MIN_CALLS = 1000  # per round, for sub-millisecond operations
SKIP_FACTOR = 8  # x budget: the most a cell may take at its least (full: 32 s, which
#                  py4j's 64 MiB base64 cell, ~24 s, fits) ...
SKIP_MIN_S = 10.0  # ... and never less than this (quick runs keep slow but sane cells)
LARGE_BUDGET = 0.5  # x budget for the cells of large-size scenarios (they are many and
#                     their batches long: the full run stays under 15 minutes)
MAX_RESTARTS = 3  # per backend, after a crash or a timeout
FLOOR = "floor"  # the C/JNI floor's name among the workers


def fmt_duration(s):
    s = int(s)
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class Progress:
    """One status line on stderr (rewritten in place on a terminal, else printed every
    few seconds), plus permanent log lines, also appended to the file $P4J_PERF_LOG
    names (perf/run.sh's log) when it is set."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.logfile = os.environ.get("P4J_PERF_LOG")
        self.tty = stream.isatty()
        self.t0 = time.monotonic()
        self._last_print = 0.0
        self._last_phase = None
        self._width = 0

    def elapsed(self):
        return time.monotonic() - self.t0

    def update(self, phase, scenario="", backend=""):
        text = f"[{phase}] {scenario:<14} {backend:<14} elapsed {fmt_duration(self.elapsed())}"
        now = time.monotonic()
        if self.tty:
            pad = max(0, self._width - len(text))
            self.stream.write("\r" + text + " " * pad)
            self.stream.flush()
            self._width = len(text)
        elif phase != self._last_phase or now - self._last_print >= 5:
            self.stream.write(text.rstrip() + "\n")
            self.stream.flush()
            self._last_print = now
        self._last_phase = phase

    def log(self, msg):
        if self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self._width = 0
        self.stream.write(msg + "\n")
        self.stream.flush()
        if self.logfile:
            try:
                with open(self.logfile, "a") as f:
                    f.write(f"bench.py [{fmt_duration(self.elapsed())}] {msg}\n")
            except OSError:
                self.logfile = None


# ---- command line ---------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="bench.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="scenarios: " + ", ".join(scenarios.ALL_NAMES) +
               "\ngroups: " + ", ".join(scenarios.GROUPS) +
               "\nbackends: " + ", ".join(backends.BACKEND_NAMES))
    p.add_argument("--quick", action="store_true", help="smoke run: 3 rounds of 0.05 s, one "
                   "cold start per backend, without " + ", ".join(QUICK_LEFT_OUT) +
                   " (about 2-4 minutes)")
    p.add_argument("--scenarios", help="comma-separated scenario ids or groups (default: all)")
    p.add_argument("--backends", help="comma-separated backends (default: all)")
    p.add_argument("--out", help="output directory (default perf/results/<date>-<machine>[-quick])")
    p.add_argument("--rounds", type=int, help="rounds (default 21, quick 3)")
    p.add_argument("--round-time", type=float, help="seconds per batch (default 0.1, quick 0.05)")
    p.add_argument("--budget", type=float, help="seconds of batches per cell before it runs "
                   "in fewer rounds (default 4, quick 0.5)")
    p.add_argument("--skip-over", type=float, help="seconds a cell may take at its least "
                   "(first units, warm-up, fewest rounds) before it is skipped as over budget "
                   f"(default max({SKIP_FACTOR} x budget, {SKIP_MIN_S:g}))")
    p.add_argument("--cold-reps", type=int, help="fresh processes per backend for COLD-* "
                   "(default 10, quick 1)")
    p.add_argument("--batch-timeout", type=float, default=120.0,
                   help="seconds a worker may take for one batch before it is killed (120)")
    p.add_argument("--machine", help="machine name used in the output directory")
    p.add_argument("--floor-bin", help="path of a built p4j_floor")
    p.add_argument("--no-charts", action="store_true", help="skip the PNG charts")
    p.add_argument("--list", action="store_true", help="list scenarios and backends, then exit")
    return p.parse_args(argv)


def _split(text):
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def resolve_backends(text):
    """Requested backends in canonical order; exits 2 on an unknown name."""
    if not text:
        return list(backends.BACKEND_NAMES)
    by_lower = {n.lower(): n for n in backends.BACKEND_NAMES}
    names = _split(text)
    unknown = [n for n in names if n.lower() not in by_lower]
    if unknown:
        usage_error(f"unknown backend(s): {', '.join(unknown)}",
                    "valid backends: " + ", ".join(backends.BACKEND_NAMES))
    wanted = {by_lower[n.lower()] for n in names}
    return [n for n in backends.BACKEND_NAMES if n in wanted]


def resolve_scenarios(text):
    """(timed ids in table order, set of extra names); exits 2 on an unknown name."""
    valid = {n.lower(): n for n in scenarios.ALL_NAMES}
    valid.update({g.lower(): g for g in scenarios.GROUPS})
    names = _split(text) if text else list(scenarios.ALL_NAMES)
    unknown = [n for n in names if n.lower() not in valid]
    if unknown:
        usage_error(f"unknown scenario(s): {', '.join(unknown)}",
                    "valid scenarios: " + ", ".join(scenarios.ALL_NAMES) +
                    "\nvalid groups: " + ", ".join(
                        f"{g} ({','.join(ids)})" for g, ids in scenarios.GROUPS.items()))
    picked = set()
    for n in names:
        canon = valid[n.lower()]
        picked.update(scenarios.GROUPS.get(canon, [canon]))
    extras = {n for n in picked if n in scenarios.EXTRA_IDS}
    if "BW" in extras:
        picked.update(scenarios.GROUPS["X7"] + scenarios.GROUPS["X8"])
    timed = [sid for sid in scenarios.TIMED_IDS if sid in picked]
    return timed, extras


def usage_error(msg, valid):
    sys.stderr.write(f"bench.py: error: {msg}\n{valid}\n")
    sys.exit(2)


# ---- machine and versions -------------------------------------------------------------

def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def cpu_caches():
    """{"L1d": bytes, "L2": bytes, "L3": bytes} of cpu0 as sysfs tells (the bandwidth
    chart marks them); missing levels are left out."""
    out = {}
    for idx in sorted(glob.glob("/sys/devices/system/cpu/cpu0/cache/index*")):
        level = _read(os.path.join(idx, "level")).strip()
        kind = _read(os.path.join(idx, "type")).strip()
        size = re.match(r"(\d+)([KMG]?)", _read(os.path.join(idx, "size")).strip())
        if not level or kind == "Instruction" or not size:
            continue
        n = int(size.group(1)) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[size.group(2)]
        out[f"L{level}" + ("d" if kind == "Data" else "")] = n
    return out


def machine_info():
    cpu = re.search(r"^model name\s*:\s*(.+)$", _read("/proc/cpuinfo"), re.M)
    mem = re.search(r"^MemTotal:\s*(\d+) kB", _read("/proc/meminfo"), re.M)
    java = backends.java_executable()
    java_version = None
    if java:
        try:
            r = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
            java_version = "; ".join(l.strip() for l in r.stderr.strip().splitlines())
        except (OSError, subprocess.SubprocessError) as e:
            java_version = f"? ({e})"
    return {
        "cpu": cpu.group(1).strip() if cpu else platform.processor() or "?",
        "cores": os.cpu_count(),
        "ram_gib": round(int(mem.group(1)) / 2**20, 1) if mem else None,
        "caches": cpu_caches(),
        "kernel": platform.release(),
        "os": platform.platform(),
        "hostname": platform.node(),
        "python": f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})",
        "java": java_version,
        "java_executable": os.path.realpath(java) if java else None,
        "versions": {b: backends.package_version(d) for b, d in
                     (("py4j", "py4j"), ("JPype1", "JPype1"), ("py4jni", "py4jni"),
                      ("numpy", "numpy"), ("matplotlib", "matplotlib"))},
    }


def git_state():
    """Commit of the repository being measured, and whether the work tree differs."""
    def git(*args):
        r = subprocess.run(["git", "-C", REPO_DIR, *args], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None
    try:
        commit = git("rev-parse", "--short=12", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except OSError:
        return None
    if commit is None:
        return "no commit yet"
    return commit + (" + uncommitted changes" if dirty else "")


def machine_slug(info):
    cpu = info["cpu"].lower()
    vendor = next((v for v in ("xeon", "epyc", "ryzen", "core", "arm", "graviton") if v in cpu),
                  re.sub(r"[^a-z0-9]+", "-", cpu).strip("-")[:12] or "cpu")
    ram = f"-{round(info['ram_gib'])}g" if info.get("ram_gib") else ""
    return f"{vendor}-{info['cores']}c{ram}"


# ---- helper processes: GatewayServers, the floor, Python workers ----------------------

class WorkerError(Exception):
    """A worker died ("crashed") or missed its deadline ("timed out"); it was killed."""

    def __init__(self, status, reason):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _describe_exit(code):
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


class LineReader:
    """Reads lines from a pipe with a deadline (select + os.read)."""

    def __init__(self, fileobj):
        self.fd = fileobj.fileno()
        self.buf = b""

    def readline(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode("utf-8", "replace")


class GatewayServer:
    """`java -cp <py4j jar>[:<fixtures jar>] py4j.GatewayServer --die-on-broken-pipe 0`:
    prints its ephemeral port; dies when our end of its stdin closes (also if we are
    killed)."""

    def __init__(self, java, classpath, owner):
        self.owner = owner
        self.log = tempfile.TemporaryFile()
        self.cmd = [java, "-cp", classpath, "py4j.GatewayServer", "--die-on-broken-pipe", "0"]
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, start_new_session=True)
        line = None
        try:
            line = LineReader(self.proc.stdout).readline(60)
        except EOFError:
            pass
        if not line or not line.strip().isdigit():
            self.stop()
            self.log.seek(0)
            err = self.log.read().decode("utf-8", "replace").strip().splitlines()
            raise RuntimeError(f"GatewayServer did not start: {err[-1] if err else line!r}")
        self.port = int(line.strip())

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(3)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


class PyWorker:
    """A spawned perf/worker.py process for one backend."""

    def __init__(self, backend, config, start_timeout):
        self.backend = backend
        self.config = config
        self.start_timeout = start_timeout
        self.proc = None
        self.conn = None

    def start(self):
        import worker  # noqa: F401  (imported for pickling by reference; no bridge inside)
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker.main, args=(child, self.backend, self.config),
                                name=f"perf-{self.backend}", daemon=True)
        self.proc.start()
        child.close()
        return self._recv(self.start_timeout, "start-up")

    def request(self, msg, timeout):
        try:
            self.conn.send(msg)
        except (OSError, EOFError):
            self.kill()
            raise WorkerError("crashed", f"worker gone ({_describe_exit(self.proc.exitcode)})")
        return self._recv(timeout, msg.get("scenario") or msg.get("cmd"))

    def _recv(self, timeout, what):
        if not self.conn.poll(timeout):
            self.kill()
            raise WorkerError("timed out", f"no answer within {timeout:.0f} s ({what})")
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.proc.join(5)
            code = self.proc.exitcode
            self.kill()
            raise WorkerError("crashed", f"worker died during {what} ({_describe_exit(code)})")

    def quit(self):
        try:
            self.request({"cmd": "quit"}, 15)
        except WorkerError:
            pass
        self.kill()

    def kill(self):
        if self.proc is not None and self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)


class FloorWorker:
    """perf/floor.c in --serve mode: the same "run scenario units" requests."""

    def __init__(self, binary, start_timeout):
        self.backend = FLOOR
        self.binary = binary
        self.start_timeout = start_timeout
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([self.binary, "--serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        self.reader = LineReader(self.proc.stdout)
        line = self._line(self.start_timeout, "start-up")
        if line.startswith("ready "):
            return {"ok": True, "info": json.loads(line[6:]), "pid": self.proc.pid}
        self.kill()
        return {"ok": False, "status": "failed", "reason": line.removeprefix("fail ").strip()}

    def _line(self, timeout, what):
        try:
            line = self.reader.readline(timeout)
        except EOFError:
            self.proc.wait(5)
            code = self.proc.returncode
            self.kill()
            raise WorkerError("crashed", f"floor died during {what} ({_describe_exit(code)})")
        if line is None:
            self.kill()
            raise WorkerError("timed out", f"no answer within {timeout:.0f} s ({what})")
        return line

    def request(self, msg, timeout):
        if msg["cmd"] != "run":
            return {"ok": False, "status": "n/a", "reason": "not a floor command"}
        try:
            self.proc.stdin.write(f"run {msg['scenario']} {msg['units']}\n".encode())
            self.proc.stdin.flush()
        except OSError:
            self.kill()
            raise WorkerError("crashed", f"floor gone ({_describe_exit(self.proc.poll())})")
        line = self._line(timeout, msg["scenario"])
        if line.startswith("ok "):
            return {"ok": True, "ns": int(line[3:]), "ops": 1, "extra": None}
        return {"ok": False, "status": "error", "reason": line.removeprefix("err ").strip()}

    def quit(self):
        try:
            self.proc.stdin.write(b"quit\n")
            self.proc.stdin.close()
            self.proc.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _jdk_home():
    for tool in ("javac", "java"):
        home = os.environ.get("JAVA_HOME")
        if home and os.path.isfile(os.path.join(home, "include", "jni.h")):
            return home
        exe = shutil.which(tool)
        if exe:
            home = os.path.dirname(os.path.dirname(os.path.realpath(exe)))
            if os.path.isfile(os.path.join(home, "include", "jni.h")):
                return home
    return None


def floor_binary(explicit, progress):
    """(path, None) of a p4j_floor to run: --floor-bin, $P4J_FLOOR, CMake's
    build/perf/p4j_floor or perf/bin/p4j_floor when not older than floor.c, else
    perf/bin/p4j_floor built now with gcc; (None, reason) when none can be had."""
    src = os.path.join(PERF_DIR, "floor.c")
    for cand in (explicit, os.environ.get("P4J_FLOOR")):
        if cand and os.access(cand, os.X_OK):
            return cand, None
    out = os.path.join(PERF_DIR, "bin", "p4j_floor")
    for cand in (os.path.join(REPO_DIR, "build", "perf", "p4j_floor"), out):  # CMake's, ours
        if os.access(cand, os.X_OK) and os.path.getmtime(cand) >= os.path.getmtime(src):
            return cand, None
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    home = _jdk_home()
    if not cc:
        return None, "no C compiler (gcc) to build perf/floor.c"
    if not home:
        return None, "jni.h not found (install a JDK or set JAVA_HOME)"
    os.makedirs(os.path.dirname(out), exist_ok=True)
    cmd = [cc, "-O2", "-std=c11", "-Wall", f"-I{home}/include", f"-I{home}/include/linux",
           src, "-o", out, "-ldl"]
    progress.log("building the floor: " + " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, "gcc failed: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    return out, None


FIXTURES_SRC = os.path.join(REPO_DIR, "tests", "java")  # org/py4jni/fixtures/*.java
HELPER_SRC = os.path.join(REPO_DIR, "java")  # org/py4jni/*.java: what the fixtures import
FIXTURES_JAR_NAME = "py4jni-perf-fixtures.jar"
# Left out of the fixtures jar, as tests/CMakeLists.txt leaves them out of
# py4jni-test-fixtures.jar: sources that compile only against py4j's jar (a py4j
# ClientServer for the socket tests, the launch take-over's program), which no benchmark calls.
FIXTURES_EXCLUDE = (os.path.join("org", "py4jni", "fixtures", "clientserver") + os.sep,
                    os.path.join("org", "py4jni", "fixtures", "launch") + os.sep)


def fixture_sources(root=FIXTURES_SRC):
    """The .java files of the fixtures jar under root, sorted: every one but those under
    FIXTURES_EXCLUDE."""
    out = []
    for dirpath, _, files in os.walk(root):
        rel = os.path.relpath(dirpath, root) + os.sep
        if any(rel.startswith(x) for x in FIXTURES_EXCLUDE):
            continue
        out += [os.path.join(dirpath, f) for f in files if f.endswith(".java")]
    return sorted(out)


def fixtures_jar(progress, out=None, reuse=True):
    """(path, None) of a jar with the Java test fixtures (tests/java/org/py4jni/fixtures:
    CallbackFixtures, NativeCodec, Buffers, ...) for the scenarios that call them: with
    `reuse`, $P4J_FIXTURES_JAR, the root CMake build's build/tests/py4jni-test-fixtures.jar
    or `out`'s jar when not older than the sources; else `out` (default
    perf/bin/py4jni-perf-fixtures.jar) compiled now with javac from fixture_sources();
    (None, reason) when none can be had. The fixtures import a class of the helper
    (org.py4jni.PythonEntryPoint): javac reads it from java/ without compiling it
    (-implicit:none), so the jar holds the fixtures alone and works on any JVM's class path."""
    out = out or os.path.join(PERF_DIR, "bin", FIXTURES_JAR_NAME)
    sources = fixture_sources()
    if not sources:
        return None, f"no fixture sources under {FIXTURES_SRC}"
    if reuse:
        env = os.environ.get("P4J_FIXTURES_JAR")
        if env:
            if os.path.isfile(env):
                return os.path.abspath(env), None
            progress.log(f"P4J_FIXTURES_JAR={env} does not exist: ignored")
        newest = max(os.path.getmtime(f) for f in sources)
        for cand in (os.path.join(REPO_DIR, "build", "tests", "py4jni-test-fixtures.jar"), out):
            if os.path.isfile(cand) and os.path.getmtime(cand) >= newest:
                return cand, None
    javac = None
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "javac"), os.X_OK):
        javac = os.path.join(home, "bin", "javac")
    javac = javac or shutil.which("javac")
    if not javac:
        return None, "no javac to build the fixtures jar (install a JDK or set P4J_FIXTURES_JAR)"
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(out)) as classes:
        cmd = [javac, "-nowarn", "-encoding", "UTF-8", "-sourcepath", HELPER_SRC,
               "-implicit:none", "-d", classes] + sources
        progress.log(f"building {_rel(out)}: javac -sourcepath {_rel(HELPER_SRC)} "
                     f"-implicit:none, {len(sources)} sources from {_rel(FIXTURES_SRC)}")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            err = [l for l in r.stderr.strip().splitlines() if l.strip()]
            return None, "javac failed: " + (err[0] if err else f"exit status {r.returncode}")
        tmp = out + ".tmp"
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n"
                       "Created-By: perf/bench.py\r\n\r\n")
            for d, _, fs in sorted(os.walk(classes)):
                for f in sorted(fs):
                    full = os.path.join(d, f)
                    z.write(full, os.path.relpath(full, classes))
        os.replace(tmp, out)
    return out, None


def _rel(path):
    return os.path.relpath(path, REPO_DIR) if path.startswith(REPO_DIR + os.sep) else path


# ---- the run ----------------------------------------------------------------------------

_CREATE_VM = re.compile(r"\[startuptime\] Create VM, ([0-9.]+) secs")


def cold_phases(t0, data, stdout):
    """COLD-full of one process in phases (seconds): python start (spawn to the script's
    first line), import, bridge up (JVM + helper, or launch + connect), first call, and
    the rest (the clock reads between them). When the child's JVM logged its start-up
    (-Xlog:startuptime, py4jni in-process), bridge up splits into JVM create
    (JNI_CreateJavaVM as HotSpot times it) and helper init (the remainder: libjvm load,
    py4jni's classes and helper)."""
    phases = {"python start": (data["start_ns"] - t0) / 1e9,
              "import": (data["import_ns"] - data["start_ns"]) / 1e9}
    up = (data["ready_ns"] - data["import_ns"]) / 1e9
    m = _CREATE_VM.search(stdout)
    if m:
        create = min(float(m.group(1)), up)
        phases["JVM create"] = create
        phases["helper init"] = up - create
    else:
        phases["bridge up"] = up
    phases["first call"] = data["first_ns"] / 1e9
    phases["rest"] = max(0.0, (data["end_ns"] - t0) / 1e9 - sum(phases.values()))
    return phases


class Cell:
    """One scenario x one backend: its state and every batch it ran."""

    def __init__(self, sid, backend):
        self.sid = sid
        self.backend = backend
        self.status = "pending"  # ok | n/a | error | crashed | timed out | not installed | failed
        #                          | skipped (over budget)
        self.reason = None
        self.units = None  # units of work per batch
        self.ops = None  # reported operations per unit
        self.unit_ns = None  # estimated ns per unit (calibration)
        self.plan = set()  # rounds this cell takes part in
        self.rounds = []
        self.calibration = []
        self.needs_warmup = False
        self.traceback = None

    def fail(self, status, reason):
        if self.status in ("pending", "ok"):
            self.status, self.reason = status, reason

    def to_json(self):
        per_op = [r["per_op_s"] for r in self.rounds]
        out = {"scenario": self.sid, "backend": self.backend, "status": self.status,
               "reason": self.reason, "units_per_batch": self.units, "ops_per_unit": self.ops,
               "rounds_planned": len(self.plan), "rounds": self.rounds,
               "calibration": self.calibration}
        if self.traceback:
            out["traceback"] = self.traceback
        if per_op and self.status == "ok":
            out["per_op_s"] = {"median": median(per_op), "min": min(per_op), "max": max(per_op),
                               "n": len(per_op)}
            extras = [r["extra"] for r in self.rounds if r.get("extra")]
            if extras:
                out["stats"] = {k: median([e[k] for e in extras]) for k in extras[0]
                                if isinstance(extras[0][k], (int, float))}
                out["stats_range"] = {k: [min(e[k] for e in extras), max(e[k] for e in extras)]
                                      for k in extras[0] if isinstance(extras[0][k], (int, float))}
        return out


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


class Suite:
    def __init__(self, args):
        self.args = args
        self.preset = dict(PRESETS["quick" if args.quick else "full"])
        for key in ("rounds", "round_time", "budget", "cold_reps"):
            if getattr(args, key, None) is not None:
                self.preset[key] = getattr(args, key)
        self.preset["skip_over"] = (args.skip_over if args.skip_over is not None else
                                    max(SKIP_FACTOR * self.preset["budget"], SKIP_MIN_S))
        self.preset["rounds"] = max(1, self.preset["rounds"])
        self.preset["min_rounds"] = min(self.preset["min_rounds"], self.preset["rounds"])
        self.backends = resolve_backends(args.backends)
        self.timed, self.extras = resolve_scenarios(args.scenarios)
        self.left_out = []
        if args.quick and not args.scenarios:
            self.left_out = [sid for sid in QUICK_LEFT_OUT if sid in self.timed]
            self.timed = [sid for sid in self.timed if sid not in QUICK_LEFT_OUT]
        self.progress = Progress()
        self.workers = {}
        self.servers = {}
        self.backend_state = {b: {"status": "pending", "reason": None, "info": None}
                              for b in self.backends}
        self.restarts = {}
        self.cells = {}
        self.cold = {}
        self.mem = {}
        self.floor_state = None
        self.fixtures = None  # {"jar": path or None, "reason": why not}, when scenarios need it
        self.interrupted = False
        self.started = datetime.datetime.now().astimezone()

    # -- helpers --------------------------------------------------------------------------
    def participants(self):
        parts = list(self.backends)
        if self.floor_state and self.floor_state["status"] == "ok":
            parts.append(FLOOR)
        return parts

    def run_batch(self, cell, units, phase):
        w = self.workers.get(cell.backend)
        if w is None:
            cell.fail("failed", self.backend_state.get(cell.backend, {}).get("reason")
                      or "worker unavailable")
            return None
        self.progress.update(phase, cell.sid, cell.backend)
        try:
            resp = w.request({"cmd": "run", "scenario": cell.sid, "units": units},
                             self.args.batch_timeout)
        except WorkerError as e:
            cell.fail(e.status, e.reason)
            self.progress.log(f"{cell.sid} on {cell.backend}: {e.status} ({e.reason})")
            self.restart(cell.backend)
            return None
        if not resp.get("ok"):
            cell.fail(resp.get("status", "error"), resp.get("reason"))
            if resp.get("traceback"):
                cell.traceback = resp["traceback"]
            if resp.get("status") == "error":
                self.progress.log(f"{cell.sid} on {cell.backend}: error ({resp.get('reason')})")
            return None
        cell.ops = resp["ops"]
        return resp

    def restart(self, backend):
        """Starts a fresh worker after a crash or timeout; its cells warm up again."""
        self.workers.pop(backend, None)
        n = self.restarts.get(backend, 0) + 1
        self.restarts[backend] = n
        if n > MAX_RESTARTS:
            reason = f"worker restarted {MAX_RESTARTS} times already"
            self.progress.log(f"{backend}: giving up ({reason})")
            for c in self.cells.values():
                if c.backend == backend:
                    c.fail("crashed", reason)
            return
        self.progress.log(f"{backend}: restarting its worker")
        self.start_worker(backend)
        for c in self.cells.values():
            if c.backend == backend:
                c.needs_warmup = True

    def start_worker(self, backend):
        if backend == FLOOR:
            w = FloorWorker(self.floor_bin, 60)
        else:
            config = {"port": self.servers[backend].port if backend in self.servers else None}
            if self.fixtures:
                config.update(fixtures_jar=self.fixtures["jar"],
                              fixtures_reason=self.fixtures["reason"])
            w = PyWorker(backend, config, start_timeout=180)
        try:
            resp = w.start()
        except WorkerError as e:
            resp = {"ok": False, "status": e.status, "reason": e.reason}
        state = self.floor_state if backend == FLOOR else self.backend_state[backend]
        if resp.get("ok"):
            self.workers[backend] = w
            state.update(status="ok", info=resp.get("info"))
            return True
        state.update(status=resp.get("status", "failed"), reason=resp.get("reason"))
        if resp.get("traceback"):
            state["traceback"] = resp["traceback"]
        for c in self.cells.values():
            if c.backend == backend:
                c.fail(state["status"], state["reason"])
        return False

    # -- phases -----------------------------------------------------------------------------
    def setup(self):
        p = self.progress
        if "FLOOR" in self.extras:
            self.floor_bin, why = floor_binary(self.args.floor_bin, p)
            self.floor_state = {"status": "ok" if self.floor_bin else "failed", "reason": why,
                                "info": None, "binary": self.floor_bin}
        if scenarios.needs_fixtures(self.timed):
            p.update("fixtures")
            try:
                jar, why = fixtures_jar(p)
            except OSError as e:
                jar, why = None, f"fixtures jar: {e}"
            self.fixtures = {"jar": jar, "reason": why}
            if why:
                p.log(f"fixtures: {why} (the scenarios that need them will say so)")
        self.jar = backends.find_py4j_jar()
        java = backends.java_executable()
        for b in self.backends:
            spec = backends.BACKENDS[b]
            if not backends.package_importable(spec.package):
                self.backend_state[b].update(
                    status="not installed",
                    reason=self._import_reason(spec.package))
                continue
            if spec.needs_server:
                if not self.jar or not java:
                    self.backend_state[b].update(
                        status="failed",
                        reason="needs a py4j GatewayServer: " +
                               ("py4j's jar not found (pip install py4j)" if not self.jar
                                else "java not found"))
                    continue
                p.update("servers", "", b)
                try:
                    cp = self.jar
                    if self.fixtures and self.fixtures["jar"]:
                        cp += os.pathsep + self.fixtures["jar"]
                    self.servers[b] = GatewayServer(java, cp, b)
                except RuntimeError as e:
                    self.backend_state[b].update(status="failed", reason=str(e))

    def _import_reason(self, package):
        """Why a package does not import, asked of a fresh interpreter (so this process
        stays free of bridges)."""
        code = ("import sys; sys.path[:0] = [p for p in sys.argv[1:] if p]\n"
                f"import {package}")
        extra = backends.extra_pythonpath(package) or ""
        r = subprocess.run([sys.executable, "-c", code, extra], capture_output=True, text=True)
        lines = [l for l in r.stderr.strip().splitlines() if l.strip()]
        return lines[-1] if lines else f"cannot import {package}"

    def cold_phase(self):
        want_full = bool(self.extras & {"COLD-full", "COLD-ratio"})
        want_hs = "COLD-handshake" in self.extras
        if not (want_full or want_hs):
            return
        reps = self.preset["cold_reps"]
        if want_full:
            self._prime_cds()
        for b in self.backends:
            self.cold[b] = {"full": {"status": "pending", "reps": []} if want_full else None,
                            "handshake": {"status": "pending", "reps": []} if want_hs else None}
        for rep in range(reps):
            order = self.backends[rep % len(self.backends):] + self.backends[:rep % len(self.backends)]
            for b in order:
                spec = backends.BACKENDS[b]
                st = self.backend_state[b]
                for kind in ("full", "handshake"):
                    entry = self.cold[b][kind]
                    if entry is None or entry["status"] not in ("pending", "ok"):
                        continue
                    if st["status"] in ("not installed", "failed"):
                        entry.update(status=st["status"], reason=st["reason"])
                        continue
                    if kind == "handshake" and not spec.needs_server:
                        entry.update(status="n/a", reason="in-process: no server, no handshake")
                        continue
                    if kind == "full" and spec.needs_server and not self.jar:
                        entry.update(status="n/a", reason="py4j's jar not found")
                        continue
                    self.progress.update(f"cold {rep + 1}/{reps}", f"COLD-{kind}", b)
                    self._cold_once(b, kind, entry)

    _PRIME_CDS = (
        "import os, time\n"
        "from py4jni import JavaGateway, _cds, _py4jni, helper_jar_path\n"
        "JavaGateway()\n"
        "key = _cds.archive_key(helper_jar_path(), _py4jni.find_libjvm(None))\n"
        "end = time.monotonic() + 60\n"
        "while not _cds.find_archive(_cds.cache_dir(), key) and time.monotonic() < end:\n"
        "    time.sleep(0.1)\n"
        "os._exit(0)\n")

    def _prime_cds(self):
        """py4jni's first in-process start makes its class-data-sharing archive in the
        background (py4jni/_cds.py) and later starts map it: one unmeasured start, which
        waits for the archive (if it is not already in the cache), so that every COLD-full
        repetition measures the same, usual case."""
        inproc = [b for b in self.backends if backends.BACKENDS[b].package == "py4jni"
                  and backends.BACKENDS[b].mode == "inproc"
                  and self.backend_state[b]["status"] not in ("not installed", "failed")]
        if not inproc or os.environ.get("PY4JNI_CDS") == "0":
            return
        env = dict(os.environ)
        extra = backends.extra_pythonpath("py4jni")
        if extra:
            env["PYTHONPATH"] = extra + os.pathsep + env.get("PYTHONPATH", "")
        try:
            subprocess.run([sys.executable, "-c", self._PRIME_CDS], env=env, timeout=120,
                           capture_output=True)
        except subprocess.TimeoutExpired:
            pass  # then the repetitions show it (the first ones without the archive)

    def _cold_once(self, b, kind, entry):
        spec = backends.BACKENDS[b]
        if kind == "full":
            src = backends.cold_full_source(b, self.jar)
        else:
            src = backends.cold_handshake_source(b, self.servers[b].port)
        env = dict(os.environ)
        extra = backends.extra_pythonpath(spec.package)
        if extra:
            env["PYTHONPATH"] = extra + os.pathsep + env.get("PYTHONPATH", "")
        t0 = time.monotonic_ns()
        proc = subprocess.Popen([sys.executable, "-c", src], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=max(60, self.args.batch_timeout))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            entry.update(status="timed out", reason="cold process did not finish in time")
            return
        line = next((l for l in out.decode("utf-8", "replace").splitlines()
                     if l.startswith("P4JCOLD ")), None)
        if line is None:
            lines = [l for l in err.decode("utf-8", "replace").strip().splitlines() if l.strip()]
            entry.update(status="error", reason=(lines[-1] if lines else
                                                 f"no result ({_describe_exit(proc.returncode)})"))
            return
        data = json.loads(line[8:])
        if kind == "full":
            rep = {"total_s": (data["end_ns"] - t0) / 1e9, "first_call_s": data["first_ns"] / 1e9,
                   "warm_s": data["warm_ns"] / 1e9}
            if "start_ns" in data:  # the breakdown: where the cold start went
                rep["phases_s"] = cold_phases(t0, data, out.decode("utf-8", "replace"))
        else:
            rep = {"handshake_s": data["handshake_ns"] / 1e9}
        entry["status"] = "ok"
        entry["reps"].append(rep)

    def start_workers(self):
        for b in self.participants():
            st = self.floor_state if b == FLOOR else self.backend_state[b]
            if st["status"] not in ("pending", "ok"):
                continue
            self.progress.update("starting", "", b)
            if not self.start_worker(b):
                self.progress.log(f"{b}: {st['status']} ({st['reason']})")

    def make_cells(self):
        for sid in self.timed:
            for b in self.backends:
                self.cells[(sid, b)] = Cell(sid, b)
        if self.floor_state:
            for sid in scenarios.FLOOR_IDS:
                if sid not in self.left_out:
                    self.cells[(sid, FLOOR)] = Cell(sid, FLOOR)
        for (sid, b), c in self.cells.items():
            st = self.floor_state if b == FLOOR else self.backend_state[b]
            if st["status"] not in ("pending", "ok"):
                c.fail(st["status"], st["reason"])

    def ordered_cells(self, r=0):
        parts = self.participants()
        k = r % len(parts) if parts else 0
        parts = parts[k:] + parts[:k]
        sids = self.timed + [s for s in scenarios.FLOOR_IDS if s not in self.timed]
        for sid in sids:
            for b in parts:
                c = self.cells.get((sid, b))
                if c is not None:
                    yield c

    def calibrate(self, cell):
        """Warm-up and calibration: grow the batch until it takes a fifth of a round, then
        size it to a round (>= MIN_CALLS operations when they are sub-millisecond), then
        run warm-up batches and size it again from the last one."""
        target = self.preset["round_time"] * 1e9
        units = 1
        while True:
            resp = self.run_batch(cell, units, "warm-up")
            if resp is None:
                return
            ns = max(resp["ns"], 1)
            cell.calibration.append({"units": units, "ns": ns})
            if (units == 1 and len(cell.calibration) <= 2 and scenarios.BY_ID[cell.sid].may_skip
                    and self.over_budget(cell, ns / 1e9)):
                if cell.status == "skipped":
                    return
                continue  # the first unit ran cold (JIT): decide on a second one
            if ns >= target / 5 or units >= 10**9:
                break
            units = min(units * 100, max(units * 2, math.ceil(units * (target / 4) / ns)))
        cell.status = "ok"

        def size(unit_ns):
            n = max(1, round(target / unit_ns))
            if unit_ns / cell.ops < 1e6:
                n = max(n, math.ceil(MIN_CALLS / cell.ops))
            return n

        cell.unit_ns = ns / units
        for _ in range(self.preset["warmup_batches"]):
            if cell.unit_ns > 1e9:  # a unit above a second: the calibration was warm-up enough
                break
            n = size(cell.unit_ns)
            resp = self.run_batch(cell, n, "warm-up")
            if resp is None:
                return
            cell.calibration.append({"units": n, "ns": resp["ns"]})
            cell.unit_ns = max(resp["ns"], 1) / n
        cell.units = size(cell.unit_ns)

    def over_budget(self, cell, unit_s):
        """True when `cell`'s least work at `unit_s` a unit would exceed SKIP_FACTOR x
        budget (at least SKIP_MIN_S). The cell is then marked skipped, unless that one unit alone fits in the
        cap: a first unit runs cold (interpreted Java, first allocations), so the caller
        times a second one and asks again."""
        least = 1 + self.preset["warmup_batches"] + self.preset["min_rounds"]
        cap = self.preset["skip_over"]
        if unit_s * least <= cap:
            return False
        if len(cell.calibration) == 1 and unit_s <= cap:
            return True
        cell.fail("skipped", f"over budget: one unit took {unit_s:.3g} s, and the cell's "
                  f"least work ({least} units) would exceed {cap:g} s")
        self.progress.log(f"{cell.sid} on {cell.backend}: skipped (over budget, "
                          f"{unit_s:.3g} s a unit)")
        return True

    def plan(self):
        R = self.preset["rounds"]
        for c in self.cells.values():
            if c.status != "ok":
                continue
            batch_s = c.units * c.unit_ns / 1e9
            budget = self.preset["budget"] * (LARGE_BUDGET if scenarios.BY_ID[c.sid].may_skip
                                              else 1)
            k = R if batch_s * R <= budget else \
                max(self.preset["min_rounds"], int(budget / batch_s))
            k = min(k, R)
            c.plan = {math.floor(i * R / k) for i in range(k)}

    def measure(self):
        R = self.preset["rounds"]
        for r in range(R):
            for c in self.ordered_cells(r):
                if c.status != "ok" or r not in c.plan:
                    continue
                if c.needs_warmup:
                    if self.run_batch(c, c.units, f"round {r + 1}/{R} re-warm") is None:
                        continue
                    c.needs_warmup = False
                resp = self.run_batch(c, c.units, f"round {r + 1}/{R}")
                if resp is None:
                    continue
                ops = c.units * resp["ops"]
                c.rounds.append({"round": r, "t_s": round(self.progress.elapsed(), 3),
                                 "units": c.units, "ns": resp["ns"],
                                 "per_op_s": resp["ns"] / ops / 1e9, "extra": resp.get("extra")})

    def mem_phase(self):
        if "MEM" not in self.extras:
            return
        for b in self.backends:
            w = self.workers.get(b)
            st = self.backend_state[b]
            if backends.BACKENDS[b].mode != "inproc":
                self.mem[b] = {"status": "n/a", "reason": "socket client: the target is about "
                               "the in-process bridge (a million round trips)"}
                continue
            if w is None:
                self.mem[b] = {"status": st["status"] if st["status"] != "ok" else "crashed",
                               "reason": st["reason"] or "worker unavailable"}
                continue
            self.progress.update("memory", "MEM", b)
            try:
                resp = w.request({"cmd": "mem", "objects": self.preset["mem_objects"]},
                                 max(300, self.args.batch_timeout))
            except WorkerError as e:
                self.mem[b] = {"status": e.status, "reason": e.reason}
                self.workers.pop(b, None)
                continue
            if resp.get("ok"):
                resp = dict(resp)
                resp.pop("ok")
                self.mem[b] = {"status": "ok", **resp}
            else:
                self.mem[b] = {"status": resp.get("status"), "reason": resp.get("reason")}

    def shutdown(self):
        for w in list(self.workers.values()):
            w.quit()
        self.workers.clear()
        for s in self.servers.values():
            s.stop()

    def run(self):
        p = self.progress
        p.log(f"py4jni bench: {len(self.timed)} timed scenarios x {len(self.backends)} backends "
              f"({', '.join(self.backends)}), {self.preset['rounds']} rounds of "
              f"{self.preset['round_time']} s; extras: {', '.join(sorted(self.extras)) or '-'}")
        try:
            self.setup()
            for b in self.backends:
                st = self.backend_state[b]
                if st["status"] not in ("pending", "ok"):
                    p.log(f"{b}: {st['status']} ({st['reason']})")
            if self.floor_state and self.floor_state["status"] != "ok":
                p.log(f"floor: {self.floor_state['status']} ({self.floor_state['reason']})")
            self.cold_phase()
            self.make_cells()
            self.start_workers()
            for c in self.ordered_cells():
                if c.status == "pending":
                    self.calibrate(c)
            self.plan()
            self.measure()
            self.mem_phase()
        except KeyboardInterrupt:
            self.interrupted = True
            p.log("interrupted: writing what was measured")
        finally:
            self.shutdown()
        p.log(f"measured in {fmt_duration(p.elapsed())}")

    def results(self, argv):
        info = machine_info()
        meta = {
            "suite": "py4jni perf", "date": self.started.isoformat(timespec="seconds"),
            "command": (os.environ.get("P4J_PERF_LAUNCHER") or "python perf/bench.py") + "".join(
                " " + shlex.quote(a) for a in argv),
            "mode": "quick" if self.args.quick else "full",
            "preset": self.preset, "min_calls": MIN_CALLS,
            "duration_s": round(self.progress.elapsed(), 1), "interrupted": self.interrupted,
            "machine": info, "backends": self.backend_state, "requested_backends": self.backends,
            "timed_scenarios": self.timed, "extras": sorted(self.extras),
            "left_out": self.left_out,
            "servers": {b: {"port": s.port, "command": " ".join(s.cmd)}
                        for b, s in self.servers.items()},
            "server_sharing": "each socket backend (py4j, py4jni-socket) has its own "
                              "GatewayServer JVM, started by the suite",
            "floor": self.floor_state, "restarts": self.restarts,
            "py4j_jar": getattr(self, "jar", None), "fixtures": self.fixtures,
            "git": git_state(),
        }
        defs = {}
        for sid in self.timed + [s for s in scenarios.FLOOR_IDS if (s, FLOOR) in self.cells]:
            sc = scenarios.BY_ID[sid]
            defs[sid] = {"group": sc.group, "work": sc.work, "op_name": sc.op_name,
                         "ops_per_unit": sc.ops, "note": sc.note, "params": sc.params,
                         "code": {f: {k: v for k, v in sc.expr(f).__dict__.items() if v}
                                  for f in ("py4j", "jpype")}}
        return {"meta": meta, "scenarios": defs,
                "cells": [c.to_json() for c in self.cells.values()],
                "cold": self.cold, "mem": self.mem}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.list:
        print("scenarios:")
        for sc in scenarios.SCENARIOS:
            print(f"  {sc.id:<16} {sc.work}")
        for sid, what in scenarios.EXTRA_IDS.items():
            print(f"  {sid:<16} {what}")
        print("groups: " + ", ".join(f"{g}={','.join(ids)}" for g, ids in scenarios.GROUPS.items()))
        print("backends: " + ", ".join(backends.BACKEND_NAMES))
        return 0
    suite = Suite(args)  # validates names (exit 2) before anything starts
    suite.run()
    results = suite.results(argv)
    info = results["meta"]["machine"]
    out = args.out or os.path.join(
        PERF_DIR, "results",
        f"{suite.started:%Y-%m-%d}-{args.machine or machine_slug(info)}"
        + ("-quick" if args.quick else ""))
    import report  # matplotlib is imported lazily inside, only for the charts
    paths = report.write_all(results, out, charts=not args.no_charts)
    cwd = os.getcwd() + os.sep
    suite.progress.log("wrote " + ", ".join(os.path.relpath(p) if os.path.abspath(p).startswith(cwd)
                                            else p for p in paths))
    if suite.interrupted:
        return 130
    failed = report.failures(results)
    if failed:
        suite.progress.log(f"FAILED: {len(failed)} figure(s) missing (report.md lists them):")
        for sid, b, st, reason in failed:
            suite.progress.log(f"  {sid} on {b}: {st} ({reason})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
