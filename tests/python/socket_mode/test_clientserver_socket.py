"""py4j's pinned-thread socket mode: py4jni's ClientServer against py4j's own
Java ``py4j.ClientServer`` (tests/java/org/py4jni/fixtures/clientserver/, a JVM per
test). Each Python thread has its own connection; a callback Java makes on it runs on the
Python thread that waits there, to any depth; Java threads of their own reach Python's
PythonServer; the differential test runs one scenario through py4j's Python ClientServer
and through py4jni's and compares what they saw."""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from clientserver_scenario import FX, Add, Down
from conftest import clientserver_jar, fixtures_jar, free_port, py4j_jar, \
    start_java_clientserver
from py4jni import Py4JAuthenticationError, Py4JError, Py4JJavaError, Py4JNetworkError
from py4jni.clientserver import (ClientServer, ClientServerConnection, JavaClient,
                                 JavaParameters, PythonParameters, PythonServer)

pytestmark = pytest.mark.skipif(py4j_jar() is None or clientserver_jar() is None,
                                reason="py4j's jar or the ClientServer fixture is missing")

class Java:
    """A Java ClientServer in a child JVM and the ClientServers the test made on it."""

    def __init__(self, token=None):
        self.python_port = free_port()
        self.proc, self.port = start_java_clientserver(self.python_port, token)
        self.made = []

    def connect(self, token=None, python_token=None, **kwargs):
        entry = kwargs.pop("python_server_entry_point", None)
        cs = ClientServer(JavaParameters(port=self.port, auth_token=token),
                          PythonParameters(port=self.python_port, auth_token=python_token,
                                           **kwargs),
                          python_server_entry_point=entry)
        self.made.append(cs)
        return cs

    def close(self):
        for cs in self.made:
            try:
                cs.shutdown()
            except Exception:  # noqa: BLE001 - already shut down
                pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture
def java():
    side = Java()
    yield side
    side.close()


@pytest.fixture
def cs(java):
    return java.connect()


def test_calls_entry_point_and_classes(cs):
    assert isinstance(cs._gateway_client, JavaClient)
    assert cs._gateway_client.kind == "socket" and cs._mode == "socket"
    assert cs.entry_point.hello("py4j") == "hello py4j"
    assert cs.jvm.java.lang.Math.max(3, 7) == 7
    sb = cs.jvm.java.lang.StringBuilder("a")
    sb.append(42)
    assert str(sb) == "a42"
    assert isinstance(cs.get_callback_server(), PythonServer)  # eager_load, py4j's default


def test_callback_runs_on_the_calling_thread(cs):
    op = Add()
    assert cs.jvm.org.py4jni.fixtures.Callbacks.apply(op, 2, 3) == 5
    assert op.threads == [threading.get_ident()]


def test_nested_callbacks_stay_on_the_calling_thread(cs):
    fx = cs.jvm.org.py4jni.fixtures.CallbackFixtures
    down = Down(fx)
    assert fx.recurse(down, 6) == 6  # Python -> Java -> Python ... six levels deep
    assert down.threads == [threading.get_ident()] * 6


def test_java_thread_reaches_the_python_server_and_calls_back_on_its_connection(cs):
    fx = cs.jvm.org.py4jni.fixtures.CallbackFixtures
    down = Down(fx)
    assert fx.recurseOnThread(down, 4) == 4
    # a new Java thread has no pinned connection: it connects to the PythonServer, whose
    # connection thread runs every level (its Java calls go out on that connection)
    assert len(down.threads) == 4 and len(set(down.threads)) == 1
    assert down.threads[0] != threading.get_ident()
    connections = cs.get_callback_server().connections
    assert all(isinstance(c, ClientServerConnection) for c in connections)


def test_python_entry_point_from_a_java_thread(java):
    cs = java.connect(python_server_entry_point=Add())
    assert cs.entry_point.applyPythonEntryOnThread(4, 5) == 9


def test_two_python_threads_each_pinned(cs):
    fx = cs.jvm.org.py4jni.fixtures.CallbackFixtures
    apply = cs.jvm.org.py4jni.fixtures.Callbacks.apply
    seen = {}
    errors = []
    barrier = threading.Barrier(2)

    def work(key):
        try:
            op, down = Add(), Down(fx)
            names = set()
            barrier.wait()
            for i in range(20):
                assert apply(op, i, 1) == i + 1
                assert fx.recurse(down, 3) == 3
                names.add(cs.entry_point.threadName())
            seen[key] = (threading.get_ident(), set(op.threads), set(down.threads), names)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for ident, op_threads, down_threads, names in seen.values():
        assert op_threads == {ident} and down_threads == {ident}
        assert len(names) == 1  # one Java thread serves each Python thread
    assert seen["a"][3] != seen["b"][3]


def wait_for(read, value, seconds=30.0):
    """Polls read() until it returns value (Java counts a connection on its accepting
    thread, a moment after serving it); returns the last value read."""
    deadline = time.monotonic() + seconds
    got = read()
    while got != value and time.monotonic() < deadline:
        time.sleep(0.02)
        got = read()
    return got


def test_a_finished_thread_closes_its_connection(cs):
    entry = cs.entry_point
    assert wait_for(entry.openConnections, 1) == 1  # this thread's
    during = []
    t = threading.Thread(target=lambda: during.append(wait_for(entry.openConnections, 2)))
    t.start()
    t.join()
    assert during == [2]  # the thread had a connection of its own ...
    assert wait_for(entry.openConnections, 1) == 1  # ... closed when it ended


def test_thread_outliving_its_client(java):
    # a thread keeps its pinned connection after its client is gone; its exit then
    # closes nothing of the freed client (run under ASan by tests/ci/run_sanitizers.sh)
    import weakref
    cs = java.connect()
    client = weakref.ref(cs._gateway_client)
    box = [cs.entry_point]
    ready, go = threading.Event(), threading.Event()
    said = []

    def work():
        said.append(box[0].hello("t"))
        ready.set()
        go.wait()

    t = threading.Thread(target=work)
    t.start()
    ready.wait()
    box.clear()
    java.made.remove(cs)
    cs.close()  # Java stays up
    del cs
    gc.collect()
    assert client() is None
    go.set()
    t.join()
    assert said == ["hello t"]
    again = java.connect()  # the process and the Java side go on
    assert again.entry_point.hello("u") == "hello u"


def test_java_exception_is_py4jjavaerror(cs):
    with pytest.raises(Py4JJavaError) as info:
        cs.jvm.java.lang.Integer.parseInt("nope")
    assert info.value.java_exception.getClass().getName() == \
        "java.lang.NumberFormatException"


def test_python_exception_in_callback_reaches_java(cs):
    class Bad(Add):
        def apply(self, a, b):
            raise ValueError("boom")

    with pytest.raises(Py4JJavaError) as info:
        cs.jvm.org.py4jni.fixtures.Callbacks.apply(Bad(), 1, 2)
    assert "ValueError: boom" in str(info.value)
    assert cs.jvm.org.py4jni.fixtures.Callbacks.apply(Add(), 1, 2) == 3  # still usable


def test_released_java_object_is_deleted_on_the_java_side(cs):
    from py4jni import JavaObject
    sb = cs.jvm.java.lang.StringBuilder("kept")
    target = sb._target_id
    assert str(JavaObject(target, cs._gateway_client)) == "kept"
    del sb
    gc.collect()
    with pytest.raises(Py4JError):
        str(JavaObject(target, cs._gateway_client))


def test_auth_token_right_and_wrong():
    side = Java(token="s3cret")
    try:
        good = side.connect(token="s3cret", python_token="s3cret")
        assert good.entry_point.hello("a") == "hello a"
        fx = good.jvm.org.py4jni.fixtures.CallbackFixtures
        assert fx.recurseOnThread(Down(fx), 2) == 2  # Java authenticates to PythonServer
        wrong = side.connect(token="nope", eager_load=False)
        with pytest.raises(Py4JAuthenticationError):
            wrong.entry_point.hello("b")
        missing = side.connect(eager_load=False)
        with pytest.raises(Py4JAuthenticationError):
            missing.entry_point.hello("c")
    finally:
        side.close()


def test_wrong_token_on_the_python_server_refuses_java():
    side = Java(token="s3cret")
    try:
        cs = side.connect(token="s3cret", python_token="other")
        fx = cs.jvm.org.py4jni.fixtures.CallbackFixtures
        with pytest.raises(Py4JJavaError):
            fx.recurseOnThread(Down(fx), 2)
        assert cs.entry_point.hello("still") == "hello still"
    finally:
        side.close()


def test_broken_connection_mid_callback_is_a_network_error(java, cs):
    class Killer(Add):
        def apply(self, a, b):
            java.proc.kill()
            java.proc.wait()
            return a + b

    with pytest.raises(Py4JNetworkError):
        cs.jvm.org.py4jni.fixtures.Callbacks.apply(Killer(), 1, 2)

    class Calls(Add):
        def apply(self, a, b):
            return cs.jvm.java.lang.Math.max(a, b)

    with pytest.raises(Py4JNetworkError):
        cs.jvm.org.py4jni.fixtures.Callbacks.apply(Calls(), 1, 2)


def test_shutdown_stops_java_then_connecting_is_refused(java):
    cs = java.connect()
    entry = cs.entry_point
    assert entry.hello("x") == "hello x"
    cs.shutdown()
    assert java.proc.wait(timeout=60) == 0  # the Java ClientServer stopped, its JVM ended
    assert cs.get_callback_server() is None
    with pytest.raises(Py4JError):
        entry.hello("y")
    again = java.connect(eager_load=False)
    with pytest.raises(Py4JNetworkError):
        again.entry_point.hello("z")


def test_close_leaves_java_running(java):
    cs = java.connect()
    assert cs.entry_point.hello("x") == "hello x"
    cs.close()
    assert java.proc.poll() is None
    other = java.connect()
    assert other.entry_point.hello("y") == "hello y"


def assert_raw_text_calls_back_here(cs, send_command):
    """Sends py4j command text with `send_command`: a call, then one whose Java side
    calls a Python proxy back, which must run on this thread (as in py4j)."""
    assert send_command("c\nt\nhello\nsraw\ne\n") == "yshello raw"
    op = Add()
    pid = cs.gateway_property.pool.put(op)
    answer = send_command("c\nz:org.py4jni.fixtures.Callbacks\napply\n"
                          f"f{pid};org.py4jni.fixtures.Operator\ni1\ni2\ne\n")
    assert answer == "yi3"
    assert op.threads == [threading.get_ident()]


def test_raw_client_connection(cs):
    conn = ClientServerConnection(cs.java_parameters, cs.python_parameters,
                                  cs.gateway_property, cs._gateway_client)
    conn.connect_to_java_server()
    try:
        assert_raw_text_calls_back_here(cs, conn.send_command)
    finally:
        conn.close()
    assert not conn.is_connected


def test_raw_client_connection_with_a_wrong_token():
    side = Java(token="s3cret")
    try:
        cs = side.connect(token="s3cret", eager_load=False)
        params = JavaParameters(port=side.port, auth_token="wrong")
        conn = ClientServerConnection(params, cs.python_parameters, cs.gateway_property,
                                      cs._gateway_client)
        with pytest.raises(Py4JAuthenticationError):
            conn.connect_to_java_server()
    finally:
        side.close()


def test_differential_against_py4js_clientserver():
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clientserver_scenario.py")
    results = {}
    for impl in ("py4j", "py4jni"):
        python_port = free_port()
        proc, java_port = start_java_clientserver(python_port)
        try:
            out = subprocess.run([sys.executable, str(script), impl, str(java_port),
                                  str(python_port)], capture_output=True, text=True,
                                 timeout=120, env=dict(os.environ))
            assert out.returncode == 0, impl + ": " + out.stderr
            results[impl] = json.loads(out.stdout.strip().splitlines()[-1])
        finally:
            proc.kill()
            proc.wait()
    assert results["py4jni"] == results["py4j"]
    assert results["py4jni"]["apply_on_caller"] and results["py4jni"]["recurse_on_caller"]


PROGRAM = textwrap.dedent('''
    import sys, threading
    from py4j.clientserver import ClientServer, JavaClient, JavaParameters, PythonParameters
    import py4j.clientserver

    class Add(object):
        def apply(self, a, b):
            return a + b if threading.current_thread() is threading.main_thread() else -1
        def name(self):
            return "add"
        class Java:
            implements = ["org.py4jni.fixtures.Operator"]

    assert py4j.clientserver.__name__ == "py4jni.clientserver"
    cs = ClientServer(JavaParameters(port=int(sys.argv[1])),
                      PythonParameters(port=int(sys.argv[2])))
    print(type(cs._gateway_client).__name__, isinstance(cs._gateway_client, JavaClient),
          cs.entry_point.hello("switch"), cs.jvm.org.py4jni.fixtures.Callbacks.apply(Add(), 1, 2))
    cs.shutdown()
''')


def test_py4j_program_through_python_m_py4jni_run_socket(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    python_port = free_port()
    proc, java_port = start_java_clientserver(python_port)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    try:
        out = subprocess.run([sys.executable, "-m", "py4jni", "run", "--socket", str(script),
                              str(java_port), str(python_port)], capture_output=True,
                             text=True, timeout=120, env=env)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == ["Client", "True", "hello", "switch", "3"]
        assert proc.wait(timeout=60) == 0  # its shutdown() stopped the Java side
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_default_clientserver_stays_in_process():
    from conftest import run_python
    out = run_python(textwrap.dedent(f'''
        from py4jni.clientserver import ClientServer
        cs = ClientServer(classpath={fixtures_jar()!r})
        print(cs._gateway_client.kind)
    '''))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["inproc"]


def test_pysparks_late_callback_server_start():
    # what pyspark.java_gateway.ensure_callback_server_started does (foreachBatch,
    # StreamingQueryListener) on the ClientServer PySpark makes: no PythonServer at first
    # (eager_load=False, port 0), then one on an ephemeral port Java is re-pointed at
    from py4jni import JavaObject
    side = Java(token="s3cret")
    try:
        cs = ClientServer(JavaParameters(port=side.port, auth_token="s3cret", auto_convert=True),
                          PythonParameters(port=0, eager_load=False))
        side.made.append(cs)
        assert "_callback_server" in cs.__dict__ and cs._callback_server is None
        cs.callback_server_parameters.eager_load = True
        cs.callback_server_parameters.daemonize = True
        cs.callback_server_parameters.daemonize_connections = True
        cs.callback_server_parameters.port = 0
        cs.start_callback_server(cs.callback_server_parameters)
        assert cs._callback_server is cs.get_callback_server()
        port = cs._callback_server.server_socket.getsockname()[1]
        assert port == cs._callback_server.get_listening_port() != 0
        cs._callback_server.port = port
        cs._python_proxy_port = port
        jgws = JavaObject("GATEWAY_SERVER", cs._gateway_client)
        jgws.resetCallbackClient(jgws.getCallbackClient().getAddress(), port)
        fx = cs.jvm.org.py4jni.fixtures.CallbackFixtures
        down = Down(fx)
        assert fx.recurseOnThread(down, 3) == 3  # a Java thread reached the new server
        assert down.threads[0] != threading.get_ident()
        cs.shutdown_callback_server()
        assert cs._callback_server is None
    finally:
        side.close()


EXIT_PROGRAM = textwrap.dedent('''
    import sys, threading, time
    sys.path.insert(0, sys.argv[3])
    from clientserver_scenario import FX, Add, Down
    from py4jni.clientserver import ClientServer, JavaParameters, PythonParameters

    cs = ClientServer(JavaParameters(port=int(sys.argv[1])),
                      PythonParameters(port=int(sys.argv[2])))
    fx = cs.jvm.org.py4jni.fixtures.CallbackFixtures
    assert fx.recurseOnThread(Down(fx), 2) == 2  # a PythonServer connection stays open
    inside = threading.Event()

    class Slow(Add):
        def apply(self, a, b):
            inside.set()
            time.sleep(60)  # Java waits for this answer when the interpreter exits
            return a + b

    def in_java():  # a pinned connection waiting for Java's answer
        cs.jvm.java.lang.Thread.sleep(60000)

    def in_callback():  # a pinned connection running Java's callback
        cs.jvm.org.py4jni.fixtures.Callbacks.apply(Slow(), 1, 2)

    for target in (in_java, in_callback):
        threading.Thread(target=target, daemon=True).start()
    inside.wait(30)
    time.sleep(0.2)  # the other daemon thread is in Java's sleep by now
    print("exiting", flush=True)
    sys.exit(int(sys.argv[4]))
''')


@pytest.mark.parametrize("code", [0, 3])
def test_exit_with_daemon_threads_on_pinned_connections(tmp_path, code):
    # as PySpark's driver ends: no shutdown(), daemon threads blocked on their pinned
    # connections (in a Java call, in a callback), a PythonServer connection open
    script = tmp_path / "exit.py"
    script.write_text(EXIT_PROGRAM)
    python_port = free_port()
    proc, java_port = start_java_clientserver(python_port)
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run([sys.executable, str(script), str(java_port), str(python_port),
                              here, str(code)], capture_output=True, text=True,
                             timeout=50, env=dict(os.environ))  # under the threads' 60 s
        assert out.returncode == code, out.stderr
        assert out.stdout.split() == ["exiting"]
        for sign in ("Traceback", "Exception ignored", "Fatal Python"):
            assert sign not in out.stderr, out.stderr
    finally:
        proc.kill()
        proc.wait()


def test_client_send_command_runs_callbacks_on_the_calling_thread(cs):
    # py4j's JavaClient.send_command: the thread's own connection, so a callback Java
    # makes meanwhile runs here (on the thread that waits for the answer)
    assert_raw_text_calls_back_here(cs, cs._gateway_client.send_command)


def test_client_send_command_uses_a_connection_set_for_the_thread(cs):
    client = cs._gateway_client
    assert client.get_thread_connection() is None
    sent = []

    class Recording(ClientServerConnection):
        def send_command(self, command):
            sent.append(command)
            return super().send_command(command)

    conn = Recording(cs.java_parameters, cs.python_parameters, cs.gateway_property, client)
    conn.connect_to_java_server()
    try:
        client.set_thread_connection(conn)
        assert client.get_thread_connection() is conn
        assert client.send_command("c\nt\nhello\nsset\ne\n") == "yshello set"
        assert sent == ["c\nt\nhello\nsset\ne\n"]
        seen = []
        other = threading.Thread(target=lambda: seen.append(client.get_thread_connection()))
        other.start()
        other.join()
        assert seen == [None]  # per thread, as py4j's threading.local
        client.close()  # py4j: closes this thread's connection too
        assert not conn.is_connected
    finally:
        conn.close()
    assert cs.entry_point.hello("after") == "hello after"


def test_client_garbage_collect_object(cs):
    from collections import deque

    from py4jni import JavaObject
    client = cs._gateway_client
    sb = cs.jvm.java.lang.StringBuilder("kept")
    target = sb._target_id
    queued = client.finalizer_deque = deque()
    try:  # with a FinalizerWorker's deque: queued for it, as py4j's JavaClient
        client.garbage_collect_object(target)
        assert list(queued) == [(client, target)]
        assert str(JavaObject(target, client)) == "kept"
    finally:
        client.finalizer_deque = None
    client.garbage_collect_object(target)  # py4jni's ClientServer has none: at once
    with pytest.raises(Py4JError):
        str(JavaObject(target, client))


def test_client_close_then_calls_reconnect(cs):
    client = cs._gateway_client
    assert cs.entry_point.hello("a") == "hello a"
    client.close()
    assert not client.closed and client.is_connected
    assert cs.entry_point.hello("b") == "hello b"  # a new connection for this thread


def test_client_shutdown_gateway_stops_java(java):
    cs = java.connect(eager_load=False)
    assert cs.entry_point.hello("x") == "hello x"
    cs._gateway_client.shutdown_gateway()
    assert java.proc.wait(timeout=60) == 0  # the Java ClientServer stopped, its JVM ended
    assert not cs._gateway_client.is_connected
    with pytest.raises(Py4JError):
        cs.entry_point.hello("y")


def _pinned_deque_story(cs) -> list:
    """What a program sees of py4j's JavaClient.deque: each thread's connection while no
    call of that thread uses it, gone once the thread ended, a new one after close()."""
    dq = cs._gateway_client.deque
    call = cs.jvm.java.lang.System.currentTimeMillis
    out: list = []
    call()
    out.append(len(dq))                                  # this thread's, idle
    first = str(dq[0])
    call()
    out.append([len(dq), str(dq[0]) == first, all(dq)])
    seen = []

    def work():
        call()
        seen.append(len(dq) >= 2)                        # its own and the main thread's

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.append(seen)
    out.append(wait_for(lambda: (gc.collect(), len(dq))[1], 1, 10.0))  # theirs went
    dq[0].close()
    call()                                               # on a new connection
    out.append([len(dq), str(dq[0]) != first])
    return out


def test_pinned_deque_as_py4j():
    """``cs._gateway_client.deque`` in pinned-thread mode lists each thread's connection
    while it is idle, as py4j's JavaClient.deque, compared with py4j's ClientServer on a
    Java ClientServer of its own."""
    from py4j.clientserver import ClientServer as Py4jClientServer
    from py4j.clientserver import JavaParameters as Py4jJava
    from py4j.clientserver import PythonParameters as Py4jPython
    results = []
    for impl in ("py4j", "py4jni"):
        side = Java()
        try:
            if impl == "py4j":
                cs = Py4jClientServer(Py4jJava(port=side.port),
                                      Py4jPython(port=side.python_port))
                side.made.append(cs)
            else:
                cs = side.connect()
            results.append(_pinned_deque_story(cs))
        finally:
            side.close()
    assert results[0] == results[1] == [1, [1, True, True], [True] * 3, 1, [1, True]]


def test_pinned_deque_is_never_taken(cs):
    cs.jvm.java.lang.System.currentTimeMillis()
    dq = cs._gateway_client.deque
    for take in (dq.pop, dq.popleft, lambda: dq.remove(dq[0]), dq.clear):
        with pytest.raises(Py4JError, match="belongs to its thread"):
            take()
    assert len(dq) == 1 and dq[0].is_connected


def _served_pair(timeout: float):
    """A TCP connection: (the peer's end, the end Python serves, with `timeout` set)."""
    import socket
    srv = socket.create_server(("127.0.0.1", 0))
    peer = socket.create_connection(srv.getsockname())
    conn, _ = srv.accept()
    srv.close()
    conn.settimeout(timeout)
    return peer, conn


def test_served_connection_timing_out_is_reset_as_py4j():
    """A served connection whose read_timeout expires closes with a RST (so Java's next
    write fails and it retries on a new connection), as py4j's ClientServerConnection;
    py4jni knows the time-out by its error's cause (TimeoutError, py4j's socket.timeout),
    not by the error's text."""
    from py4j.clientserver import ClientServerConnection as Py4jConnection
    from py4j.clientserver import JavaParameters as Py4jJava
    from py4j.clientserver import PythonParameters as Py4jPython
    from py4j.java_gateway import GatewayProperty as Py4jProperty
    from py4j.java_gateway import PythonProxyPool as Py4jPool

    from py4jni import _py4jni
    from py4jni.java_gateway import GatewayProperty
    from py4jni.socket_mode.callbacks import PythonProxyPool
    client = _py4jni.socket_client("127.0.0.1", free_port(), None, 0.0, pinned=True)
    try:
        peer, conn = _served_pair(0.2)
        with peer, conn, pytest.raises(Py4JNetworkError) as info:
            _py4jni.serve_connection(client, os.dup(conn.fileno()), None, 0.2)
        assert isinstance(info.value.cause, TimeoutError), info.value.cause
        outcomes = []
        for impl in ("py4j", "py4jni"):
            peer, conn = _served_pair(0.2)
            if impl == "py4j":
                c = Py4jConnection(Py4jJava(), Py4jPython(read_timeout=0.2),
                                   Py4jProperty(False, Py4jPool()), None)
                c.init_socket_from_python_server(conn, conn.makefile("rb"))
            else:
                c = ClientServerConnection(JavaParameters(), PythonParameters(read_timeout=0.2),
                                           GatewayProperty(False, PythonProxyPool()), client)
                c.init_socket_from_python_server(conn, None)
            c.wait_for_commands()  # returns once the time-out closed the connection
            peer.settimeout(5)
            try:
                outcomes.append(peer.recv(1))
            except ConnectionResetError:
                outcomes.append("reset")
            finally:
                peer.close()
                conn.close()
        assert outcomes == ["reset", "reset"]
    finally:
        client.shutdown()


def _pinned_connections_story(cs, down_cls) -> list:
    """Java threads of their own call back: each opens a connection to the PythonServer,
    which Python's read_timeout ends; what ``connections`` lists meanwhile."""
    connections = cs._callback_server.connections
    fx = cs.jvm.org.py4jni.fixtures.CallbackFixtures
    out: list = [type(connections).__name__]
    gc.collect()
    gc.disable()  # no collection but the story's own
    try:
        out.append(fx.recurseOnThread(down_cls(fx), 1))
        out.append(len(connections))
        deadline = time.monotonic() + 10
        while any(c.socket is not None for c in connections) and time.monotonic() < deadline:
            time.sleep(0.05)  # Python's side times out and closes
        out.append([c.socket is None for c in connections])
        out.append(fx.recurseOnThread(down_cls(fx), 1))  # another Java thread, connection
        out.append(len(connections))  # the ended one gone, the newest listed
        gc.collect()
        out.append(len(connections))
    finally:
        gc.enable()
    return out


def test_pinned_server_connections_weakset_as_py4j():
    """py4j's PythonServer keeps its connections in a WeakSet: an ended one has no socket
    and stays listed while something holds it (the accepting thread holds the newest
    until it accepts another: py4j's RetryTest.testGoodRetryFromJava reads it after it
    ended); py4jni's the same, compared with py4j's ClientServer on a Java ClientServer
    of its own."""
    from py4j.clientserver import ClientServer as Py4jClientServer
    from py4j.clientserver import JavaParameters as Py4jJava
    from py4j.clientserver import PythonParameters as Py4jPython
    results = []
    for impl in ("py4j", "py4jni"):
        side = Java()
        try:
            if impl == "py4j":
                cs = Py4jClientServer(Py4jJava(port=side.port),
                                      Py4jPython(port=side.python_port, read_timeout=0.25))
                side.made.append(cs)
            else:
                cs = side.connect(read_timeout=0.25)
            results.append(_pinned_connections_story(cs, Down))
        finally:
            side.close()
    assert results[0] == results[1] == ["WeakSet", 1, 1, [True], 1, 1, 1]
