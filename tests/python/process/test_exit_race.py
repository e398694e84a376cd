"""Interpreter exit while Java threads are entering Python: buffers being released by
DirectBuffers' Cleaner and proxy callbacks from Java threads at the instant Python
finalises. Each run is a fresh interpreter (one JVM per process); a crash shows as a
negative return code and HotSpot's "fatal error" text.

Before the gate in python-binding/src/inproc/py_callbacks.c, a thread that had passed the
"Python is exiting" check could enter PyGILState_Ensure after Py_FinalizeEx freed the
interpreter (SIGSEGV in _PyThreadState_SetCurrent on the Cleaner thread). Pinned to one
CPU, the buffers-only run crashed in about 3 runs in 100; these tests run many children,
several at a time, to give that window its chances."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import fixtures_jar

RUNS = int(os.environ.get("P4J_EXIT_STRESS_RUNS", "24"))  # children per test
AT_ONCE = 2

CHILD = """\
import os, sys
if hasattr(os, "sched_setaffinity"):  # one CPU: the exit and the Java threads interleave
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from py4jni import JavaGateway
gw = JavaGateway(classpath=os.environ["P4J_FIXTURES_JAR"],
                 jvm_options=["-XX:ErrorFile=" + sys.argv[1] + "/hs_err_%p.log"])
class Op:
    class Java:
        implements = ["org.py4jni.fixtures.Operator"]
    def apply(self, a, b):
        return a + b
    def name(self):
        return "op"
if sys.argv[2] == "callbacks":
    gw.jvm.org.py4jni.fixtures.Callbacks.applyUntilRefused(Op(), 4)
B = gw.jvm.org.py4jni.fixtures.Buffers
B.hold(gw.direct_buffer(bytearray(1 << 20)))
for _ in range(2000):
    gw.direct_buffer(bytearray(4096))
gw.jvm.java.lang.System.gc()
print("done", flush=True)
"""


def _run_children(kind: str, workdir: Path) -> list[str]:
    """Runs RUNS children, AT_ONCE at a time; returns a description of each failure."""
    env = dict(os.environ, P4J_FIXTURES_JAR=fixtures_jar())
    failures: list[str] = []
    left = RUNS
    while left:
        batch = [subprocess.Popen([sys.executable, "-c", CHILD, str(workdir), kind],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=env, cwd=workdir)
                 for _ in range(min(AT_ONCE, left))]
        left -= len(batch)
        for p in batch:
            out, err = p.communicate(timeout=300)
            if p.returncode != 0 or "done" not in out or "fatal error" in out + err:
                failures.append(f"status {p.returncode}:\n{out[-1500:]}\n{err[-1500:]}")
    for log in sorted(workdir.glob("hs_err_*.log")):
        failures.append(f"{log.name}:\n{log.read_text(errors='replace')[:3000]}")
    return failures


@pytest.mark.parametrize("kind", ["buffers", "callbacks"])
def test_exit_while_java_threads_enter_python(kind, tmp_path):
    """Python exits while the Cleaner releases 2000 buffers ("callbacks": and four Java
    threads call a Python proxy in a loop): every child exits with status 0 and no
    crash report; callbacks refused at exit end the Java threads' loops."""
    failures = _run_children(kind, tmp_path)
    assert not failures, f"{len(failures)} of {RUNS} runs failed:\n" + "\n".join(failures[:3])


def test_forked_child_exits_while_parent_threads_were_entering(tmp_path):
    """A child forked while Java threads of the parent were entering Python (they wait
    for the GIL the forking thread holds) exits normally: its exit does not wait for
    those threads, which the child does not have."""
    code = CHILD.split("B = gw.jvm")[0].replace('sys.argv[2] == "callbacks"', "True") + """\
import time
pid = os.fork()
if pid == 0:
    sys.exit(0)  # a normal exit: the atexit handlers run
deadline = time.monotonic() + 60
while not os.waitpid(pid, os.WNOHANG)[0] and time.monotonic() < deadline:
    time.sleep(0.05)
if time.monotonic() >= deadline:
    os.kill(pid, 9)
    print("child hung at exit", flush=True)
else:
    print("child exited", flush=True)
"""
    env = dict(os.environ, P4J_FIXTURES_JAR=fixtures_jar())
    for _ in range(3):
        r = subprocess.run([sys.executable, "-c", code, str(tmp_path), "callbacks"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
        assert r.returncode == 0 and "child exited" in r.stdout, (r.stdout, r.stderr[-2000:])


SLEEPER = """\
import threading, time
from py4jni import JavaGateway
gw = JavaGateway()
inside = threading.Event()
class Sleeper:
    class Java:
        implements = ["java.lang.Runnable"]
    def run(self):
        print("callback running", flush=True)
        inside.set()
        time.sleep(600)
        print("callback finished", flush=True)
gw.jvm.java.lang.Thread(Sleeper()).start()
assert inside.wait(60), "the Java thread never called back"
print("exiting", flush=True)
"""


def test_exit_does_not_wait_for_a_callback_that_never_returns() -> None:
    """Python's exit gives callbacks still running on Java threads a bounded time to
    return: a callback sleeping for 600 s does not hold the exit up (the process ends
    with status 0 and the callback's work not done)."""
    r = subprocess.run([sys.executable, "-c", SLEEPER], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "callback running" in r.stdout and "exiting" in r.stdout, r.stdout + r.stderr
    assert "callback finished" not in r.stdout
