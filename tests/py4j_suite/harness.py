"""Runs py4j's own Python test suite (py4j-python/src/py4j/tests of a py4j checkout)
against py4jni, in-process and in socket mode, and counts the outcomes per mode.

    python tests/py4j_suite/harness.py PY4J_CHECKOUT [--modes inproc,socket,py4j]
                                       [--work DIR] [-k EXPR] [--timeout S]

Nothing is fetched: PY4J_CHECKOUT is a py4j source tree (0.10.9.9 to match the jar in
the venv). The harness stages a copy of its tests in ``--work`` (default
build/py4j_suite): the package is renamed ``py4jtests`` (``py4j.tests`` imports would
resolve into py4jni under the py4j switch), placed at the same depth so its relative
class paths work; py4j's jar is unpacked and its Java test classes (those that do not
need JUnit) compiled against it. Each mode then runs pytest in a child process:

- ``socket``: the py4j switch in socket mode (``import py4j`` is py4jni; the tests'
  own GatewayServer / ClientServer processes serve it).
- ``inproc``: the py4j switch in-process; the embedded JVM has the staged classes on
  its class path and ``py4j.examples.ExampleEntryPoint`` as entry point. Servers a
  test starts whose in-process equivalent is that JVM (ExampleApplication, its
  no-memory-management variant, SingleThreadApplication) are not started; a test that
  needs any other server cannot apply in-process and is counted apart (skipped with
  the server's name).
- ``py4j``: py4j itself, for reference (tests that fail there are not py4jni's).

conftest.py (copied into the staged tree) makes sure no server outlives the test
that started it: a server still listening 5 s after its test is killed and that test
is counted as "left a server" (not a pass). Counts and failures are written to
``<work>/<mode>/summary.txt`` and printed.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zipfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TEST_LIMIT_S = 35  # one test of py4j's suite; its slowest take ~10 s


def py4j_jar() -> str:
    """py4j's jar from its wheel in this interpreter's prefix."""
    found = glob.glob(os.path.join(sys.prefix, "share", "py4j", "py4j*.jar"))
    if not found:
        sys.exit("py4j's jar not found under " + sys.prefix + "/share/py4j")
    return found[0]


def stage(checkout: str, work: str) -> str:
    """Copies the tests and builds the Java classes; returns the staged tests dir."""
    src_tests = os.path.join(checkout, "py4j-python", "src", "py4j", "tests")
    src_java = os.path.join(checkout, "py4j-java", "src", "test")
    if not os.path.isdir(src_tests) or not os.path.isdir(src_java):
        sys.exit(f"{checkout} is not a py4j checkout (no py4j-python/src/py4j/tests)")
    # work/py4j-python/src/py4jsuite/py4jtests: four levels below work, as
    # py4j-python/src/py4j/tests is below the checkout (PY4J_JAVA_PATHS is relative).
    tests = os.path.join(work, "py4j-python", "src", "py4jsuite", "py4jtests")
    shutil.rmtree(tests, ignore_errors=True)
    os.makedirs(tests)
    for name in os.listdir(src_tests):
        path = os.path.join(src_tests, name)
        if not os.path.isfile(path):
            continue
        if name.endswith(".py"):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            text = re.sub(r"\bpy4j\.tests\b", "py4jtests", text)
            with open(os.path.join(tests, name), "w", encoding="utf-8") as f:
                f.write(text)
        else:
            shutil.copy(path, tests)
    shutil.copy(os.path.join(HERE, "conftest.py"), os.path.join(tests, "conftest.py"))
    with open(os.path.join(os.path.dirname(tests), "pytest.ini"), "w") as f:
        f.write("[pytest]\n")  # the rootdir: not the project's pytest settings
    classes = os.path.join(work, "py4j-java", "build", "classes", "java")
    main, test = os.path.join(classes, "main"), os.path.join(classes, "test")
    if not os.path.isdir(os.path.join(main, "py4j")):
        with zipfile.ZipFile(py4j_jar()) as jar:
            jar.extractall(main)
    if not os.path.isdir(os.path.join(test, "py4j", "examples")):
        sources = []
        for dirpath, _, files in os.walk(os.path.join(src_java, "java")):
            for name in files:
                if name.endswith(".java"):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8") as f:
                        if "org.junit" not in f.read():
                            sources.append(path)
        os.makedirs(test, exist_ok=True)
        subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-cp", main, "-d", test,
                        *sources], check=True)
        resources = os.path.join(src_java, "resources")
        if os.path.isdir(resources):
            shutil.copytree(resources, os.path.join(classes, "..", "..", "resources", "test"),
                            dirs_exist_ok=True)
    return tests


def run_mode(mode: str, tests: str, work: str, kexpr: str | None, timeout: int,
             isolate: bool) -> str:
    """Runs the staged suite in a child pytest for one mode; returns the summary."""
    out = os.path.join(work, mode)
    os.makedirs(out, exist_ok=True)
    classes = os.path.join(work, "py4j-java", "build", "classes", "java")
    env = dict(os.environ)
    env["PY4J_SUITE_MODE"] = mode
    env["PY4J_SUITE_OUT"] = out
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(tests)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    if mode == "py4j":
        env.pop("PY4JNI_AS_PY4J", None)
        env["PYTHONPATH"] = os.path.dirname(tests)  # the installed py4j, not py4jni
    else:
        env["PY4JNI_AS_PY4J"] = "1"
        env["PY4JNI_MODE"] = mode
        env["PY4JNI_CLASSPATH"] = os.pathsep.join(
            [os.path.join(classes, "test"), os.path.join(classes, "main")])
        env["PY4JNI_ENTRY_POINT"] = "py4j.examples.ExampleEntryPoint"
    # The switch is installed before pytest imports anything (the .pth hook that reads
    # PY4JNI_AS_PY4J exists only in an installed package, not in a build tree).
    boot = ("import sys, pytest\n"
            "if sys.argv[1] != 'py4j':\n"
            "    from py4jni import _switch; _switch.install()\n"
            "sys.exit(pytest.main(sys.argv[2:]))\n")
    base = [sys.executable, "-c", boot, mode, "-p", "no:faulthandler", "-p", "no:cacheprovider",
            "-o", "python_files=*_test.py *test.py", "-o", "junit_family=xunit1"]
    if isolate:  # a network namespace of its own: py4j's fixed ports are this mode's
        base = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *base]
    for stale in ["left_a_server.txt", "current"] + glob.glob(os.path.join(out, "junit*.xml")):
        if os.path.exists(os.path.join(out, stale)):
            os.remove(os.path.join(out, stale))
    if mode == "inproc":
        # One process per test: each of py4j's tests starts a server of its own, and
        # the in-process equivalent of a fresh server is a fresh JVM (imports into the
        # default view, static state of the test classes).
        listed = subprocess.run(base + ["--collect-only", "-q", tests] +
                                (["-k", kexpr] if kexpr else []), env=env,
                                cwd=os.path.dirname(tests), capture_output=True, text=True)
        runs = [[line.strip()] for line in listed.stdout.splitlines() if "::" in line]
    else:
        runs = [[tests] + (["-k", kexpr] if kexpr else [])]
    deadline = time.monotonic() + timeout
    with open(os.path.join(out, "pytest.log"), "w") as log:
        for i, args in enumerate(runs):
            junit = os.path.join(out, f"junit-{i:04d}.xml")
            cmd = base + ["-v", "-rfEs", "--durations=12", "--junitxml", junit] + args
            log.flush()
            proc = subprocess.Popen(cmd, env=env, cwd=os.path.dirname(tests), stdout=log,
                                    stderr=subprocess.STDOUT)
            watch(proc, out, max(1, int(deadline - time.monotonic())), log)
    junit = os.path.join(out, "junit-*.xml")
    summary = summarize(mode, junit, os.path.join(out, "left_a_server.txt"))
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(summary)
    return summary


def watch(proc: subprocess.Popen, out: str, timeout: int, log: Any) -> None:
    """Waits for the pytest child. A test that runs past TEST_LIMIT_S (conftest writes
    the running test's id to <out>/current) has the Java processes below pytest killed
    (a Python thread blocked on a socket cannot be interrupted from inside, so the
    server's end is what frees it) and is recorded as having left a server; pytest
    itself is killed when the whole mode passes ``timeout`` or one test runs 60 s past
    its Java processes' end."""
    start = time.monotonic()
    killed_for = None
    while proc.poll() is None:
        time.sleep(1)
        if time.monotonic() - start > timeout:
            log.write(f"\nharness: pytest killed after {timeout} s\n")
            proc.kill()
            break
        try:
            with open(os.path.join(out, "current")) as f:
                nodeid = f.read().strip()
            age = time.time() - os.path.getmtime(os.path.join(out, "current"))
        except OSError:
            continue
        if age > TEST_LIMIT_S and killed_for != nodeid:
            killed_for = nodeid
            log.write(f"\nharness: {nodeid} still running after {TEST_LIMIT_S} s: "
                      "its Java processes are killed\n")
            log.flush()
            with open(os.path.join(out, "left_a_server.txt"), "a") as f:
                f.write(test_id(nodeid) + "\n")
            for pid in java_below(proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        elif age > TEST_LIMIT_S + 60 and killed_for == nodeid:
            log.write(f"\nharness: {nodeid} still running: pytest killed\n")
            proc.kill()
            break
    proc.wait()


def test_id(nodeid: str) -> str:
    """module::Class::test of a pytest node id (the id summarize() uses)."""
    parts = nodeid.split("::")
    return "::".join([os.path.splitext(os.path.basename(parts[0]))[0]] + parts[1:])


def java_below(root: int) -> list[int]:
    """The java processes descending from ``root``."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found = []
    for pid in parents:
        p, hops = parents.get(pid, 0), 0
        while p not in (0, 1, root) and hops < 32:
            p, hops = parents.get(p, 0), hops + 1
        if p == root:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if os.path.basename(f.read().split(b"\0")[0]) == b"java":
                        found.append(pid)
            except OSError:
                pass
    return found


# Failures where py4jni differs from py4j on purpose: test id prefix -> docs/deviations.md's
# "Deviations from py4j" row. Counted apart from the failures (and listed).
DEVIATIONS = {
    "inproc": {
        "java_gateway_test::ByteTest::testJavaByteConversion":
            "an int that does not fit the chosen byte/short raises Py4JError",
        "java_gateway_test::ExceptionTest::testJavaErrorGC":
            "JavaObject(id, client) in-process names only the entry point",
        "java_gateway_test::MemoryManagementTest::testNoAttach":
            "shutdown() closes a gateway, not the JVM (another gateway keeps working)",
        "client_server_test::IntegrationTest::testJavaGC":
            "gateway_property.pool in-process is empty",
        "java_callback_test::IntegrationTest::testGC":
            "gateway_property.pool in-process is empty",
        "java_gateway_test::MemoryManagementTest::testGCCollect":
            "ThreadSafeFinalizer.finalizers: none registered for JavaObjects",
    },
    "socket": {
        "java_gateway_test::ProtocolTest::testProtocolSend":
            "set_gateway_client(obj) with a Python stand-in for the client",
        "java_gateway_test::MemoryManagementTest::testGCCollect":
            "ThreadSafeFinalizer.finalizers: none registered for JavaObjects",
    },
    "py4j": {},
}


def summarize(mode: str, junit: str, leaks_file: str) -> str:
    """Counts from pytest's junit XML files (a glob): passed, failed (errors included), not
    applicable (skips with their reasons), and passes that left a server."""
    files = sorted(glob.glob(junit))
    if not files:
        return f"{mode}: no results (see pytest.log)\n"
    leaks = set()
    if os.path.exists(leaks_file):
        with open(leaks_file) as f:
            leaks = {line.strip() for line in f if line.strip()}
    passed, failed, skipped, differ = [], [], [], []
    deviations = DEVIATIONS.get(mode, {})
    cases = [case for path in files for case in ET.parse(path).getroot().iter("testcase")]
    for case in cases:
        name = case.get("classname", "").split(".")[-2:] + [case.get("name", "")]
        tid = "::".join(name)
        if case.find("skipped") is not None:
            skipped.append((tid, case.find("skipped").get("message", "")))  # type: ignore
        elif case.find("failure") is not None or case.find("error") is not None:
            el = case.find("failure")
            if el is None:
                el = case.find("error")
            msg = (el.get("message") or "").splitlines()  # type: ignore
            row = next((r for k, r in deviations.items() if tid.startswith(k)), None)
            if row:
                differ.append((tid, row))
            else:
                failed.append((tid, msg[0][:160] if msg else ""))
        elif tid in leaks:
            failed.append((tid, "left a server running"))
        else:
            passed.append(tid)
    applies = len(passed) + len(failed)
    pct = 100.0 * len(passed) / applies if applies else 0.0
    total = applies + len(differ)
    pct_all = 100.0 * len(passed) / total if total else 0.0
    lines = [f"{mode}: {len(passed)} passed of {applies} that apply ({pct:.1f}%), "
             f"{len(failed)} failed, {len(differ)} differ on purpose (with them: "
             f"{len(passed)} of {total}, {pct_all:.1f}%), {len(skipped)} not applicable"]
    lines += [f"  FAIL {tid}: {msg}" for tid, msg in sorted(failed)]
    lines += [f"  DEVIATION {tid}: deviation row: {row}" for tid, row in sorted(differ)]
    reasons: dict[str, int] = {}
    for _, msg in skipped:
        reasons[msg] = reasons.get(msg, 0) + 1
    lines += [f"  N/A x{n}: {msg}" for msg, n in sorted(reasons.items())]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", help="a py4j source tree (0.10.9.9)")
    parser.add_argument("--modes", default="inproc,socket")
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "py4j_suite"))
    parser.add_argument("-k", dest="kexpr", help="pytest -k expression")
    parser.add_argument("--timeout", type=int, default=3600, help="per mode, seconds")
    parser.add_argument("--no-isolation", action="store_true",
                        help="run the modes one after the other in this network namespace")
    opts = parser.parse_args()
    work = os.path.abspath(opts.work)
    tests = stage(os.path.abspath(opts.checkout), work)
    modes = opts.modes.split(",")
    for mode in modes:
        if mode not in ("inproc", "socket", "py4j"):
            sys.exit(f"unknown mode {mode!r}")
    isolate = can_isolate() and not opts.no_isolation
    if not isolate:  # one after the other: the modes share py4j's fixed ports
        for mode in modes:
            print(run_mode(mode, tests, work, opts.kexpr, opts.timeout, False), end="",
                  flush=True)
        return 0
    import threading
    results: dict[str, str] = {}
    threads = [threading.Thread(target=lambda m=mode: results.__setitem__(
        m, run_mode(m, tests, work, opts.kexpr, opts.timeout, True))) for mode in modes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for mode in modes:
        print(results.get(mode, f"{mode}: no result\n"), end="")
    return 0


def can_isolate() -> bool:
    """True when each mode can run in a network namespace of its own (root, unshare and
    ip present): then the modes run at once, and no other process on the machine can
    answer on py4j's fixed ports."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        return False
    probe = subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"],
                           capture_output=True)
    return probe.returncode == 0


if __name__ == "__main__":
    sys.exit(main())
