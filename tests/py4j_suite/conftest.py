"""Staged next to py4j's tests by harness.py (PY4J_SUITE_MODE: inproc, socket, py4j).

- Every test: Java processes a test started (servers) must be gone within 5 s of its
  end; one still running is killed and the test is recorded in left_a_server.txt of
  the mode's output directory (counted as a failure), so no test can pass on a server
  an earlier test left. A test still running after 25 s has its Java children killed
  (recorded the same way) and, 15 s later, is interrupted; harness.py does the same
  from outside at 35 s (a thread blocked in C with the GIL held runs no handler). The
  running test's id is in that directory's file "current". A callback server (Python)
  still listening after its test is shut down, and the test recorded the same way.
- inproc: ``multiprocessing.Process.start`` of a target that starts a Java server runs
  the target's command line through a recorder instead: the servers whose in-process
  equivalent is the embedded JVM (entry point ExampleEntryPoint) are not started, any
  other makes the test not applicable (unittest.SkipTest naming the server). Tests
  of the socket machinery itself (NOT_APPLICABLE_INPROC) are skipped with the reason.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import time
import unittest
from typing import Any, Iterator

import pytest

MODE = os.environ.get("PY4J_SUITE_MODE", "py4j")
OUT = os.environ.get("PY4J_SUITE_OUT", ".")
# Java main classes whose in-process equivalent is the embedded JVM with
# ExampleEntryPoint as the gateway's entry point (a GatewayServer / ClientServer of it).
INPROC_EQUIVALENT = {"py4j.examples.ExampleApplication",
                     "py4j.examples.SingleThreadApplication"}
# Tests of py4j's suite that cannot apply in-process, whatever their server: the thing
# they test is the socket machinery itself (node id suffix or class -> reason).
_NO_SERVER = "there is no server process in-process"
NOT_APPLICABLE_INPROC = {
    "java_gateway_test.py::GatewayLauncherTest":
        "launch_gateway's child server process (" + _NO_SERVER + ")",
    "java_gateway_test.py::RetryTest": "socket connection retries (no connection in-process)",
    "client_server_test.py::RetryTest": "socket connection retries (no connection in-process)",
    "java_gateway_test.py::ProtocolTest::testProtocolSend":
        "py4j's wire protocol on a test connection (no wire protocol in-process)",
    "java_gateway_test.py::StreamTest": "py4j's binary socket protocol (JavaMember.stream)",
    "client_server_test.py::IntegrationTest::testStream":
        "py4j's binary socket protocol (JavaMember.stream)",
    "py4j_signals_test.py": "signals of the socket callback server (no callback server "
                            "in-process)",
    "java_gateway_test.py::JVMTest::testJavaGatewayServer":
        "the GatewayServer object (" + _NO_SERVER + ")",
    "client_server_test.py::IntegrationTest::testPythonGC":
        "the GatewayServer object's bindings (" + _NO_SERVER + ")",
    "java_callback_test.py::ResetCallbackClientTest":
        "resetCallbackClient of the GatewayServer object (" + _NO_SERVER + ")",
    "java_gateway_test.py::DeprecatedTest::test_gateway_client":
        "GatewayClient() is a socket client to a server process",
    "java_gateway_test.py::ThreadTest": "GatewayClient() is a socket client to a server process",
    "client_server_test.py::GarbageCollectionTest::testCleanConnections":
        "the pool of socket connections (gateway_client.deque)",
}
# Tests that cannot apply to py4jni in socket mode either.
NOT_APPLICABLE_SOCKET = {
    "memory_leak_test.py":
        "instruments py4j's Python classes (subclasses hooking py4j's internal factories "
        "_create_gateway_client, _create_callback_server..., counting their instances); "
        "py4jni's client and objects are C objects without those hooks",
}
TEST_LIMIT_S = 25  # below the harness's 35 s, which also works when the GIL is held


def _children() -> dict[int, int]:
    """pid -> parent pid of every process on the machine."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                table[int(entry)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                pass
    return table


def _java_descendants() -> list[int]:
    """Java processes below this one (the servers tests start)."""
    parents = _children()
    me = os.getpid()
    found = []
    for pid in parents:
        p, hops = pid, 0
        while p > 1 and hops < 32:
            p = parents.get(p, 0)
            hops += 1
            if p == me:
                break
        if p != me:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv0 = f.read().split(b"\0")[0]
        except OSError:
            continue
        if os.path.basename(argv0) == b"java":
            found.append(pid)
    return found


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _record_leak(nodeid: str) -> None:
    parts = nodeid.split("::")
    module = os.path.splitext(os.path.basename(parts[0]))[0]
    with open(os.path.join(OUT, "left_a_server.txt"), "a") as f:
        f.write("::".join([module] + parts[1:]) + "\n")


def _not_applicable(nodeid: str, table: dict[str, str]) -> str | None:
    tail = nodeid.split("/")[-1]
    for key, reason in table.items():
        if tail == key or tail.startswith(key + "::"):
            return reason
    return None


@pytest.fixture(autouse=True)
def _no_server_outlives_its_test(request: pytest.FixtureRequest) -> Iterator[None]:
    nodeid = request.node.nodeid
    if MODE in ("inproc", "socket"):
        reason = _not_applicable(nodeid, NOT_APPLICABLE_SOCKET)
        if MODE == "inproc":
            reason = _not_applicable(nodeid, NOT_APPLICABLE_INPROC) or reason
        if reason:
            where = "in-process" if MODE == "inproc" else "to py4jni"
            pytest.skip(f"not applicable {where}: {reason}")
    state = {"stage": 0}

    def on_alarm(signum: int, frame: Any) -> None:
        if state["stage"] == 0:
            state["stage"] = 1
            pids = _java_descendants()
            if pids:
                _record_leak(nodeid)
                _kill(pids)
            signal.alarm(15)
        else:
            raise TimeoutError(f"harness: test still running after {TEST_LIMIT_S + 15} s")

    with open(os.path.join(OUT, "current"), "w") as f:
        f.write(nodeid)
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(TEST_LIMIT_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        try:
            os.remove(os.path.join(OUT, "current"))
        except OSError:
            pass
        deadline = time.monotonic() + 5
        pids = _java_descendants()
        while pids and time.monotonic() < deadline:
            time.sleep(0.1)
            pids = _java_descendants()
        if pids:
            if state["stage"] == 0:
                _record_leak(nodeid)
            _kill(pids)
            time.sleep(0.5)
        if _stop_python_servers():  # a callback server the test left listening
            _record_leak(nodeid)


def _stop_python_servers() -> bool:
    """Shuts down the callback servers / PythonServers still listening in this process
    (a test that failed before its shutdown leaves them: the next test could not bind
    py4j's port); True when there was one."""
    import gc
    import sys
    kinds = [getattr(sys.modules.get(m), "CallbackServer", None)
             for m in ("py4j.java_gateway", "py4jni.socket_mode.callbacks")]
    kinds = [k for k in kinds if isinstance(k, type)]
    found = False
    for obj in gc.get_objects():
        if kinds and isinstance(obj, tuple(kinds)) and not getattr(obj, "is_shutdown", True) \
                and getattr(obj, "server_socket", None) is not None:
            found = True
            try:
                obj.shutdown()
            except Exception:  # noqa: BLE001 - best effort
                pass
    return found


class _Recorded(Exception):
    def __init__(self, argv: list[str]) -> None:
        super().__init__(argv)
        self.argv = argv


def _main_class(argv: list[str]) -> str | None:
    if not argv or os.path.basename(str(argv[0])) != "java":
        return None
    skip = False
    for arg in argv[1:]:
        if skip:
            skip = False
        elif arg in ("-cp", "-classpath", "--class-path"):
            skip = True
        elif not str(arg).startswith("-"):
            return str(arg)
    return None


if MODE == "inproc":
    _original_start = multiprocessing.Process.start

    def _start(self: Any) -> None:
        target = getattr(self, "_target", None)
        if target is None:
            return _original_start(self)

        def record(args: Any, *rest: Any, **kwargs: Any) -> int:
            raise _Recorded(list(args))

        saved = subprocess.call
        subprocess.call = record  # type: ignore[assignment]
        try:
            target(*self._args, **self._kwargs)
            argv = None  # the target ran here without starting a process
        except _Recorded as rec:
            argv = rec.argv
        finally:
            subprocess.call = saved  # type: ignore[assignment]
        main = _main_class(argv) if argv else None
        if argv and main not in INPROC_EQUIVALENT:
            raise unittest.SkipTest(
                f"not applicable in-process: needs its own server ({main or argv[0]})")
        self._target = lambda *a, **k: None
        return _original_start(self)

    multiprocessing.Process.start = _start  # type: ignore[method-assign]
