"""Ctrl-C (SIGINT) during a socket-mode wait, compared with py4j's own client on the same
server: the wait ends at once with the Python handler's exception (py4j's socket read is
interrupted), the connection whose answer was abandoned is never used again (its late
answer is never read as another command's), nothing is resent, and a handler that does
not raise leaves the wait to finish. GatewayServer mode, ClientServer (pinned-thread)
mode with a nested callback wait, and a release's wait (a Python peer that answers
releases late).

Every case runs in a child process (signals are process-wide); the parent sends SIGINT
0.5 s after the child says "ready". Bounds are far from the waits involved (a 60 s sleep
interrupted in under 5 s), never fine measurements.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest

from conftest import fixtures_jar, free_port, py4j_jar, start_java_clientserver

pytestmark = pytest.mark.skipif(py4j_jar() is None, reason="py4j's jar is not installed")

IMPORTS = textwrap.dedent('''
    import os, signal, sys, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    impl, mode, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if impl == "py4j":
        from py4j.java_gateway import JavaGateway, GatewayParameters
        from py4j.clientserver import ClientServer, JavaParameters, PythonParameters
    else:
        from py4jni import JavaGateway, GatewayParameters, _py4jni
        from py4jni.clientserver import ClientServer, JavaParameters, PythonParameters

    def ready():
        print("ready", flush=True)
''')

CALLS = IMPORTS + textwrap.dedent('''
    if mode == "gateway":
        gw = JavaGateway(gateway_parameters=GatewayParameters(port=port))
    else:
        gw = ClientServer(JavaParameters(port=port), PythonParameters(port=int(sys.argv[4])))
    jvm = gw.jvm
    Thread, Math, Integer = jvm.java.lang.Thread, jvm.java.lang.Math, jvm.java.lang.Integer
    print("warm", Math.abs(-1), flush=True)

    def sleep(ms):
        ready()
        try:
            Thread.sleep(ms)
            return "slept"
        except KeyboardInterrupt:
            return "interrupted"
        except Exception as exc:  # py4j's GatewayClient: its clean-up fails (see the test)
            cause = " from KeyboardInterrupt" * isinstance(exc.__context__, KeyboardInterrupt)
            return f"failed {type(exc).__name__}{cause}"

    print("first", sleep(60000), flush=True)
    print("next", Math.abs(-7), Integer.toHexString(255), flush=True)
    # a short sleep interrupted: its answer comes while the calls below run
    print("second", sleep(1500), flush=True)
    t0, answers = time.monotonic(), set()
    while time.monotonic() - t0 < 2.5:
        answers.add((Math.abs(-3), Integer.toHexString(4095)))
    print("later", sorted(answers), flush=True)

    class Sleeper:
        """An Operator whose apply waits in Java: a wait nested in a callback."""
        def apply(self, a, b):
            Thread.sleep(60000)
            return a + b
        def name(self):
            return "sleeper"
        class Java:
            implements = ["org.py4jni.fixtures.Operator"]

    if mode == "clientserver":  # pinned: Java calls back on this thread's connection
        ready()
        try:
            jvm.org.py4jni.fixtures.Callbacks.apply(Sleeper(), 2, 3)
            print("nested returned", flush=True)
        except KeyboardInterrupt:
            print("nested interrupted", flush=True)
        except Exception as exc:
            print("nested failed", type(exc).__name__, flush=True)
        print("after nested", Math.abs(-9), flush=True)

        class Napper(Sleeper):
            """An Operator whose apply waits in Python: Ctrl-C lands in the callback."""
            def apply(self, a, b):
                time.sleep(60)
                return a + b

        ready()
        try:
            jvm.org.py4jni.fixtures.Callbacks.apply(Napper(), 2, 3)
            print("callback returned", flush=True)
        except KeyboardInterrupt:
            print("callback interrupted", flush=True)
        except Exception as exc:
            print("callback failed", type(exc).__name__, flush=True)
        print("after callback", Math.abs(-11), flush=True)

    handled = []
    signal.signal(signal.SIGINT, lambda *a: handled.append(1))  # returns: the wait goes on
    print("quiet", sleep(1500), len(handled), flush=True)
    if impl == "py4jni":
        counts = _py4jni.socket_counts(gw._gateway_client)
        print("retried", counts["retried"], "closed", counts["closed"], flush=True)
    if mode == "gateway":
        gw.close()
    else:
        gw.shutdown()
    print("done", flush=True)
''')

# A py4j-speaking Python peer in the child whose first release ("m d") is answered only
# after 60 s; entry point calls get a new object id each.
RELEASE = IMPORTS + textwrap.dedent('''
    import socket, threading
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    accepted, late = [], threading.Event()

    def serve(conn):
        with conn, conn.makefile("rb") as f:
            n = 0
            while True:
                lines = []
                while (line := f.readline()) not in (b"e\\n", b""):
                    lines.append(line)
                if not line:
                    return
                try:
                    if lines[:2] == [b"m\\n", b"d\\n"]:
                        if not late.is_set():
                            late.set()
                            time.sleep(60)
                        conn.sendall(b"!yv\\n")
                    else:
                        n += 1
                        conn.sendall(b"!yro%d\\n" % n)
                except OSError:
                    return

    def accept():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            accepted.append(conn)
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    gw = JavaGateway(gateway_parameters=GatewayParameters(port=srv.getsockname()[1]))
    obj = gw.entry_point.make()
    ready()
    try:
        del obj                 # the release waits for the peer's answer
        for _ in range(3):
            time.sleep(0.01)    # calls: where Python raises what is pending
        print("release waited", flush=True)
    except KeyboardInterrupt:
        print("release interrupted", flush=True)
    print("next", type(gw.entry_point.make()).__name__, "connections", len(accepted), flush=True)
    gw.close()
    print("done", flush=True)
''')


def run_child(code: str, *args: str, timeout: float = 150) -> tuple[list[str], list[float], str]:
    """Runs `code` with `args`; sends SIGINT 0.5 s after each "ready" line. Returns the
    other stdout lines, how long after each SIGINT the next line came, and stderr. The
    child is killed after `timeout` s (the lines so far are then in the failure)."""
    env = dict(os.environ, P4J_FIXTURES_JAR=fixtures_jar())
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    errors: list[str] = []
    reader = threading.Thread(target=lambda: errors.append(proc.stderr.read()), daemon=True)
    reader.start()
    killer = threading.Timer(timeout, proc.kill)
    killer.start()
    lines: list[str] = []
    delays: list[float] = []
    sent = None
    try:
        assert proc.stdout is not None
        for text in proc.stdout:
            if sent is not None:
                delays.append(time.monotonic() - sent)
                sent = None
            if text.strip() == "ready":
                time.sleep(0.5)
                proc.send_signal(signal.SIGINT)
                sent = time.monotonic()
                continue
            lines.append(text.strip())
        proc.wait()
        reader.join()
    finally:
        killer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = "".join(errors)
    assert proc.returncode == 0, "\n".join(lines) + "\n" + err[-4000:]
    return lines, delays, err


def line(lines: list[str], tag: str) -> str:
    for text in lines:
        if text.split()[0] == tag:
            return text
    raise AssertionError(f"no {tag!r} line in {lines}")


@pytest.fixture(scope="module")
def clientservers() -> Any:
    """Starts a Java ClientServer (py4j's, with the fixtures) per call: (java, python)
    ports; all are stopped at the end."""
    procs: list[subprocess.Popen] = []

    def start() -> tuple[int, int]:
        python_port = free_port()
        proc, java_port = start_java_clientserver(python_port)
        procs.append(proc)
        return java_port, python_port

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("mode", ["gateway", "clientserver"])
def test_sigint_ends_a_socket_wait_as_with_py4j(mode: str, py4j_server: int,
                                                clientservers: Any) -> None:
    """Thread.sleep(60000) in the server, Ctrl-C 0.5 s in: KeyboardInterrupt at once with
    either client; the next calls get their own answers, also while the late answer of an
    interrupted 1.5 s sleep arrives; nothing is resent; a handler that returns leaves the
    sleep to finish. Pinned mode: a wait inside a callback (Java calling a Python
    Operator that sleeps in Java) ends the call below it too, and so does a Ctrl-C while
    the callback runs Python code (the main thread's callback raises it)."""
    seen: dict[str, list[str]] = {}
    for impl in ("py4j", "py4jni"):
        ports = [str(py4j_server)] if mode == "gateway" else [str(p) for p in clientservers()]
        lines, delays, err = run_child(CALLS, impl, mode, *ports)
        # py4j's GatewayClient catches the KeyboardInterrupt to clean up and fails there
        # (it calls shutdown_socket, which only ClientServerConnection has): a deviation
        # row of docs/deviations.md; its ClientServer raises the KeyboardInterrupt
        raised = ("failed AttributeError from KeyboardInterrupt"
                  if (impl, mode) == ("py4j", "gateway") else "interrupted")
        assert line(lines, "first") == "first " + raised, (impl, lines, err)
        assert delays[0] < 5.0, (impl, delays)  # 60 s when the wait is not interrupted
        assert line(lines, "next") == "next 7 ff", (impl, lines)
        assert line(lines, "second") == "second " + raised, (impl, lines)
        assert line(lines, "later") == "later [(3, 'fff')]", (impl, lines)
        assert line(lines, "quiet") == "quiet slept 1", (impl, lines)
        if mode == "clientserver":
            assert line(lines, "nested") == "nested interrupted", (impl, lines, err)
            assert line(lines, "callback") == "callback interrupted", (impl, lines, err)
            assert max(delays[2:4]) < 5.0, (impl, delays)
            assert "after nested 9" in lines and "after callback 11" in lines, (impl, lines)
        assert lines[-1] == "done", (impl, lines, err)
        seen[impl] = [text.replace(raised, "interrupted") for text in lines
                      if not text.startswith("retried")]
        if impl == "py4jni":
            words = line(lines, "retried").split()
            # never resent; the interrupted connections (2, pinned 3) closed
            assert words[1] == "0" and int(words[3]) >= (2 if mode == "gateway" else 3), words
    assert seen["py4jni"] == seen["py4j"]


def test_sigint_during_a_release_wait_raises_after_the_del() -> None:
    """A release (`del obj`) waiting for a peer that answers late: py4jni raises the
    handler's KeyboardInterrupt right after the statement, and the next call runs on a new
    connection. py4j's finalizer gets it (py4j logs "KeyboardInterrupt while sending
    command."), its clean-up fails and the finalizer swallows that: the Ctrl-C is lost (a
    row of docs/deviations.md); its next call opens a new connection too (the
    abandoned one is not given back)."""
    lines, delays, err = run_child(RELEASE, "py4jni", "gateway", "0")
    assert lines[:2] == ["release interrupted", "next JavaObject connections 2"], (lines, err)
    assert delays[0] < 5.0, delays
    lines, delays, err = run_child(RELEASE, "py4j", "gateway", "0")
    assert lines[:2] == ["release waited", "next JavaObject connections 2"], (lines, err)
    assert "KeyboardInterrupt while sending command" in err, err
    assert delays[0] < 5.0, delays
