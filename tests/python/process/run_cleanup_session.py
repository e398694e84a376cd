"""Not collected by the main run (its name is not test_*.py): the session that
tests/python/process/test_run_cleanup.py runs as a pytest run of its own. Its one test leaves
a class-data-sharing dump running, held with SIGSTOP, and writes to
``$P4J_CLEANUP_REPORT`` what the session's end must stop and remove."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import conftest

RECORD = ("from py4jni import JavaGateway\n"
          "gw = JavaGateway(classpath={jar!r}, cds='classpath')\n"
          "assert gw.jvm.org.py4jni.fixtures.Strings is not None\n")


KILLED = ("import os, signal\n"
          "from py4jni import JavaGateway\n"
          "JavaGateway().jvm.java.lang.Math.abs(-1)\n"
          "print(os.getpid(), flush=True)\n"
          "os.kill(os.getpid(), signal.SIGKILL)\n")


def test_a_killed_jvm_leaves_its_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A process whose JVM is killed leaves its attach socket and perf data in /tmp;
    the session's end removes them, and this test's tmp_path with the run's directory."""
    (tmp_path / "left").write_text("x")
    r = subprocess.run([sys.executable, "-c", KILLED], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == -signal.SIGKILL, r.stdout + r.stderr
    pid = int(r.stdout.split()[0])
    left = conftest.stale_jvm_files(conftest.RUN_STARTED)
    assert f"{conftest.JVM_TMP}/.java_pid{pid}" in left, left
    with open(os.environ["P4J_CLEANUP_REPORT"] + ".killed", "w") as fh:
        json.dump({"tmp_path": str(tmp_path), "run_dir": conftest.RUN_DIR,
                   "files": [p for p in left if p.endswith(f"/{pid}") or
                             p.endswith(f".java_pid{pid}")]}, fh)


def test_a_background_dump_is_left_running() -> None:
    """A start with ``cds="classpath"`` and no archive records its classes; when it
    exits, its archive's dump goes on in the background (py4jni/_cds.py). Its processes
    (the creator, the java it runs) are held stopped, so that they are still there when
    the session ends."""
    assert os.environ["XDG_CACHE_HOME"] == conftest.CACHE_DIR
    r = subprocess.run([sys.executable, "-c", RECORD.format(jar=conftest.fixtures_jar())],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    held: list[int] = []
    deadline = time.monotonic() + 10
    while not held and time.monotonic() < deadline:
        for pid in conftest.processes_of_run(conftest.RUN_ID):
            if " create-classpath " in conftest.command_line(pid):
                os.kill(pid, signal.SIGSTOP)
                held.append(pid)
    assert held, "no class-path archive dump was started"
    for pid in conftest.processes_of_run(conftest.RUN_ID):  # its java, if started yet
        os.kill(pid, signal.SIGSTOP)
        held.append(pid)
    locks = [n for n in os.listdir(os.path.join(conftest.CACHE_DIR, "py4jni"))
             if n.startswith("py4jni-cp-") and n.endswith(".lock")]
    assert locks, os.listdir(os.path.join(conftest.CACHE_DIR, "py4jni"))
    with open(os.environ["P4J_CLEANUP_REPORT"], "w") as fh:
        json.dump({"run_id": conftest.RUN_ID, "cache": conftest.CACHE_DIR,
                   "held": sorted(set(held))}, fh)


def test_a_skip_is_listed_by_its_reason() -> None:
    import pytest
    pytest.skip("what a skip says")
