"""Callbacks in socket mode: py4j's callback protocol against py4j's own GatewayServer.
test_callbacks.py runs the callback behaviour both modes share; this file
covers what is socket mode's own: the callback server (on demand, ephemeral ports,
resetCallbackClient, shutdown), proxy ids and their release on Java's `g`, py4j's
conversions of return values, the wire protocol itself, threads and nesting.

Gateways that start callback servers of their own get a GatewayServer of their own
(`server` below): a GatewayServer has one callback client, and pointing it elsewhere
would take callbacks away from the session's socket gateway.
"""
from __future__ import annotations

import gc
import os
import socket
import threading
import weakref

import pytest

from conftest import fixtures_jar, free_port, py4j_jar, run_python
from py4jni import (CallbackServerParameters, GatewayParameters, JavaGateway, Py4JJavaError,
                    Py4JNetworkError, launch_gateway)
from py4jni.socket_mode import callbacks as socket_callbacks

pytestmark = pytest.mark.skipif(py4j_jar() is None, reason="py4j's jar is not installed")

PREFIX = "An exception was raised by the Python Proxy. Return Message: "
FX = "org.py4jni.fixtures.CallbackFixtures"


class Add:
    def __init__(self):
        self.threads = []

    def apply(self, a, b):
        self.threads.append(threading.current_thread().name)
        return a + b

    def name(self):
        return "add"

    class Java:
        implements = ["org.py4jni.fixtures.Operator"]


class Returns:
    """An AllTypes whose methods return what the test sets."""

    def __init__(self, value=None):
        self.value = value

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args: self.value

    class Java:
        implements = [FX + "$AllTypes", "org.py4jni.fixtures.Operator"]


@pytest.fixture(scope="module")
def server():
    """A GatewayServer (py4j's jar + fixtures) for this module's own gateways."""
    port, proc = launch_gateway(classpath=os.pathsep.join([py4j_jar(), fixtures_jar()]),
                                die_on_exit=True, return_proc=True)
    yield port
    proc.kill()
    proc.wait()


@pytest.fixture
def own(server):
    """Makes gateways on the module's server; shuts them down after the test."""
    made = []

    def make(**kwargs):
        params = kwargs.pop("gateway_parameters", None) or GatewayParameters(port=server)
        gw = JavaGateway(gateway_parameters=params, **kwargs)
        made.append(gw)
        return gw

    yield make
    for gw in reversed(made):
        gw.close()  # shutdown() would stop the shared GatewayServer (py4j's rule)


def ephemeral(**kwargs):
    return CallbackServerParameters(port=0, **kwargs)


def collect_until(pred, fx, limit=200):
    """Java and Python GC rounds until `pred()` holds (at most `limit` rounds)."""
    for _ in range(limit):
        gc.collect()
        fx.gc()
        if pred():
            return True
    return False


# ---------------------------------------------------------------- callback server

def test_callback_server_on_an_ephemeral_port(own):
    gw = own(callback_server_parameters=ephemeral())
    cbs = gw.get_callback_server()
    assert isinstance(cbs, socket_callbacks.CallbackServer)
    port = cbs.get_listening_port()
    assert port not in (0, 25334)
    assert cbs.get_listening_address() == "127.0.0.1"
    # the GatewayServer was told (py4j's resetCallbackClient through GATEWAY_SERVER)
    assert gw.java_gateway_server.getPythonPort() == port
    assert gw.jvm.org.py4jni.fixtures.Callbacks.apply(Add(), 2, 3) == 5


def test_java_gateway_server_is_py4js_object(own):
    gw = own()
    assert gw.java_gateway_server.getClass().getName() == "py4j.GatewayServer"
    assert "GATEWAY_SERVER" in repr(gw.java_gateway_server)


def test_callback_server_started_on_demand(own):
    gw = own()  # no callback_server_parameters: nothing listens yet
    assert gw.get_callback_server() is None
    op = Add()
    assert gw.jvm.org.py4jni.fixtures.Callbacks.apply(op, 20, 22) == 42
    cbs = gw.get_callback_server()
    assert cbs is not None  # py4j's default port 25334, or any port when it is taken
    assert gw.java_gateway_server.getPythonPort() == cbs.get_listening_port()
    assert gw.start_callback_server() is False  # already running


def test_start_and_shutdown_callback_server(own):
    gw = own(callback_server_parameters=ephemeral(eager_load=False))
    assert gw.get_callback_server() is None
    assert gw.start_callback_server() is True
    assert gw.start_callback_server() is False
    cbs = gw.get_callback_server()
    port = cbs.get_listening_port()
    gw.shutdown_callback_server()
    assert gw.get_callback_server() is None
    assert cbs.is_shutdown
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=10).close()
    # passing a proxy starts a new one
    assert gw.jvm.org.py4jni.fixtures.Callbacks.apply(Add(), 1, 1) == 2
    assert gw.get_callback_server() is not cbs


def test_start_callback_server_with_parameters(own):
    gw = own()
    assert gw.start_callback_server(ephemeral()) is True
    port = gw.get_callback_server().get_listening_port()
    assert port != 25334 and gw.java_gateway_server.getPythonPort() == port
    assert gw.jvm.org.py4jni.fixtures.Callbacks.name(Add()) == "add"


def test_port_in_use_is_a_network_error(own):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(Py4JNetworkError, match=f"127.0.0.1:{port}"):
            own(callback_server_parameters=CallbackServerParameters(port=port))


def test_shutdown_closes_the_callback_server(own):
    holder = own(callback_server_parameters=ephemeral())
    fx_holder = holder.jvm.org.py4jni.fixtures.CallbackFixtures
    op = Add()
    fx_holder.hold(op)
    port = holder.get_callback_server().get_listening_port()
    holder.close()  # closes the callback server too; shutdown() would stop the server
    assert holder.get_callback_server() is None
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=10).close()
    other = own()  # no callback server: Java still points at the closed one
    fx = other.jvm.org.py4jni.fixtures.CallbackFixtures
    try:
        with pytest.raises(Py4JJavaError) as info:
            fx.applyHeld(1, 2)
        text = str(info.value)  # py4j 0.10.9.9: java.net.ConnectException
        assert "ConnectException" in text or "Py4JNetworkException" in text
    finally:
        fx.drop()


# ------------------------------------------------------------------ ids and lifetime

@pytest.mark.socket_only("py4j's proxy ids; the session's socket gateway")
def test_proxy_ids_follow_py4j_one_entry_per_proxy(gateway):
    fx = gateway.jvm.org.py4jni.fixtures.CallbackFixtures
    pool = socket_callbacks.pool_of(gateway)
    op = Add()
    fx.hold(op)
    fx.twiceInList(op)  # a second Java proxy of the same object
    ids = [pid for pid, obj in pool.dict.items() if obj is op]
    assert len(ids) == 2 and all(p.startswith("p") and p[1:].isdigit() for p in ids)  # py4j's
    assert fx.applyHeld(3, 4) == 7
    ref = weakref.ref(op)
    del op
    fx.drop()
    # Java's GC finalizes each Java proxy; each sends `g`; then the object goes
    assert collect_until(lambda: ref() is None, fx), "Python object not released"
    assert not any(pid in pool for pid in ids)


def test_object_lives_while_java_holds_it(own):
    gw = own(callback_server_parameters=ephemeral())
    fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures
    pool = socket_callbacks.pool_of(gw)
    op = Add()
    ref = weakref.ref(op)
    fx.hold(op)
    del op
    for _ in range(3):
        gc.collect()
        fx.gc()
    assert ref() is not None and len(pool) == 1
    assert fx.applyHeld(2, 2) == 4
    fx.drop()
    assert collect_until(lambda: ref() is None, fx)
    assert len(pool) == 0


def test_pool_interface():
    pool = socket_callbacks.PythonProxyPool()
    a, b = object(), object()
    pa, pb = pool.put(a), pool.put(b)
    assert pa.startswith("p") and int(pb[1:]) > int(pa[1:])  # py4j's scheme
    pa2 = pool.put(a)  # py4j's: the same object again is an entry of its own
    assert pa2 not in (pa, pb)
    assert len(pool) == 3 and pa in pool and pool[pb] is b and pool[pa2] is a
    assert pool.release(pa) and pa not in pool and pool[pa2] is a
    assert not pool.release(pa)
    assert pool.release(pa2) and len(pool) == 1
    assert pool.put(b, force_id="t") == "t" and pool["t"] is b
    assert not pool.release("t")  # forced ids stay
    del pool[pb]
    assert pb not in pool
    pool.clear()
    assert len(pool) == 0


def test_ids_are_unique_across_gateways(own):
    """A GatewayServer outlives its gateways: a stale proxy's `g` must not release
    another gateway's object."""
    first = own(callback_server_parameters=ephemeral())
    first.jvm.org.py4jni.fixtures.Callbacks.apply(Add(), 1, 1)
    ids1 = set(socket_callbacks.pool_of(first).dict)
    second = own(callback_server_parameters=ephemeral())
    second.jvm.org.py4jni.fixtures.Callbacks.apply(Add(), 1, 1)
    assert not ids1 & set(socket_callbacks.pool_of(second).dict)


def test_shutdown_callback_server_empties_the_pool(own):
    gw = own(callback_server_parameters=ephemeral())
    fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures
    op = Add()
    ref = weakref.ref(op)
    fx.hold(op)
    del op
    gw.shutdown_callback_server()
    gc.collect()
    assert ref() is None  # py4j empties its pool too: Java's proxy can no longer call
    fx.drop()


# ------------------------------------------------------------------ return values

def test_py4j_converts_return_values(own):
    gw = own(callback_server_parameters=ephemeral())
    fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures
    assert fx.nextByte(Returns(42), 1) == 42
    assert fx.upper(Returns("Q"), "q") == "Q"
    assert fx.third(Returns(0.25), 0.75) == 0.25
    assert fx.boxed(Returns(None), 1) is None
    assert fx.greet(Returns("a\nb\\c\r\x00\U0001F600"), "x") == "a\nb\\c\r\x00\U0001F600"
    assert fx.reverse(Returns(b"\x00\xff\n"), b"") == b"\x00\xff\n"
    # py4j's own checks, with py4j's messages
    msg = fx.catchingApply(Returns("three"), 1, 2)
    assert msg == ("py4j.Py4JException: Incompatible output type. Expected: int "
                   "Actual: java.lang.String")
    msg = fx.catchingApply(Returns(2**40), 1, 2)
    assert "Incompatible output type" in msg and "java.lang.Long" in msg
    msg = fx.catchingApply(Returns(None), 1, 2)
    assert msg.startswith("java.lang.NullPointerException")


def test_return_value_python_cannot_convert(own):
    gw = own(callback_server_parameters=ephemeral())
    fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures
    with pytest.raises(Py4JJavaError, match="cannot be converted to Java"):
        fx.greet(Returns(object()), "x")
    with pytest.raises(Py4JJavaError, match="lone surrogate"):
        fx.greet(Returns("\ud800"), "x")
    assert fx.greet(Returns("ok"), "x") == "ok"  # the connection still works


def test_return_a_proxy_and_java_objects(own):
    gw = own(callback_server_parameters=ephemeral())
    fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures
    op = Add()
    made = fx.echo(Returns(op), None)  # Python returns a proxy: Java makes one more
    assert made.apply(5, 6) == 11 and op.threads  # back into Python
    sb = gw.jvm.java.lang.StringBuilder("x")
    assert fx.echoClass(Returns(sb), None) == "java.lang.StringBuilder"
    assert fx.echo(Returns(sb), None).toString() == "x"


def test_auto_convert_in_callbacks(server, own):
    gw = own(gateway_parameters=GatewayParameters(port=server, auto_convert=True),
             callback_server_parameters=ephemeral())
    fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures
    # the list Python returns becomes an ArrayList made for the answer; it lives until
    # Java has read the answer
    assert list(fx.names(Returns(["a", "b", "c"]))) == ["a", "b", "c"]


# ------------------------------------------------------------------ exceptions

def test_callback_raising(own):
    gw = own(callback_server_parameters=ephemeral())
    fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures

    class Raiser(Add):
        def apply(self, a, b):
            raise KeyError(f"nope {a}")

    msg = fx.catchingApply(Raiser(), 3, 0)
    assert msg.startswith("py4j.Py4JException: " + PREFIX + "Traceback (most recent call last)")
    assert "KeyError: 'nope 3'" in msg and "in apply" in msg
    with pytest.raises(Py4JJavaError) as info:
        gw.jvm.org.py4jni.fixtures.Callbacks.apply(Raiser(), 1, 2)
    assert info.value.java_exception.getClass().getName() == "py4j.Py4JException"
    assert "KeyError: 'nope 1'" in str(info.value)


def test_missing_method_and_object_methods(own):
    gw = own(callback_server_parameters=ephemeral())
    fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures

    class Bare:
        class Java:
            implements = ["java.lang.Runnable"]

    bare = Bare()
    assert fx.catching(bare).startswith("py4j.Py4JException: " + PREFIX)
    assert "AttributeError" in fx.catching(bare)
    # java.lang.Object's methods: Python's when defined, else str(), identity hash
    assert fx.str(bare) == str(bare)
    assert fx.hash(bare) == fx.hash(bare)

    class Named(Bare):
        def toString(self):
            return "named"

        def hashCode(self):
            return 7

    assert fx.str(Named()) == "named" and fx.hash(Named()) == 7


def test_propagate_java_exceptions(own):
    gw = own(callback_server_parameters=ephemeral(propagate_java_exceptions=True))
    fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures

    class Io:
        def run(self):
            fx.throwIO("disk full")

        class Java:
            implements = [FX + "$Checked"]

    assert fx.runChecked(Io()) == "IOException: disk full"


def test_unknown_proxy_id_and_raw_protocol(own):
    gw = own(callback_server_parameters=ephemeral())
    port = gw.get_callback_server().get_listening_port()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        f = s.makefile("rb")
        s.sendall(b"c\np999\nrun\ni1\ne\n")
        assert f.readline() == b"!xsObject ID unknown\n"
        s.sendall(b"g\np999\ne\n")
        assert f.readline() == b"!y\n"
        s.sendall(b"q\n")  # not py4j's: an error, then the connection closes
        assert f.readline() == b"!xn\n"
        assert f.readline() == b""


def test_auth_token_on_callback_connections(own):
    gw = own(callback_server_parameters=ephemeral(auth_token="s3cret"))
    port = gw.get_callback_server().get_listening_port()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        f = s.makefile("rb")
        s.sendall(b"A\nwrong\ne\n")
        assert f.readline() == b"!xn\n"
        try:  # then, as py4j, the connection is reset
            assert f.readline() == b""
        except ConnectionResetError:
            pass
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        f = s.makefile("rb")
        s.sendall(b"A\ns3cret\ne\n")
        assert f.readline() == b"!yv\n"
        s.sendall(b"g\np0\ne\n")
        assert f.readline() == b"!y\n"


def test_auth_end_to_end():
    """py4j's GatewayServer --enable-auth does not authenticate its callback connections:
    the callback server does not take the gateway's token (py4j would, and then refuse
    every callback)."""
    port, token, proc = launch_gateway(classpath=os.pathsep.join([py4j_jar(), fixtures_jar()]),
                                       enable_auth=True, die_on_exit=True, return_proc=True)
    try:
        gw = JavaGateway(gateway_parameters=GatewayParameters(port=port, auth_token=token),
                         callback_server_parameters=ephemeral())
        try:
            assert gw.get_callback_server().auth_token is None
            assert gw.jvm.org.py4jni.fixtures.Callbacks.apply(Add(), 4, 5) == 9
        finally:
            gw.shutdown()
    finally:
        proc.kill()
        proc.wait()


# ------------------------------------------------------------------ entry point

def test_python_server_entry_point(own):
    class Entry:
        def ping(self, s):
            return "pong " + s

    gw = own(callback_server_parameters=ephemeral(), python_server_entry_point=Entry())
    jvm = gw.jvm
    ifaces = gw.new_array(jvm.java.lang.Class, 1)
    ifaces[0] = jvm.java.lang.Class.forName(FX + "$PyEntry")
    entry = gw.java_gateway_server.getPythonServerEntryPoint(ifaces)
    assert entry.ping("x") == "pong x"  # Python -> Java proxy "t" -> Python


# ------------------------------------------------------------------ threads and nesting

def test_callback_from_a_java_thread(own):
    gw = own(callback_server_parameters=ephemeral())

    class R:
        def __init__(self):
            self.names = []

        def run(self):
            self.names.append(threading.current_thread().name)

        class Java:
            implements = ["java.lang.Runnable"]

    r = R()
    gw.jvm.org.py4jni.fixtures.Callbacks.runOnThread(r)
    assert len(r.names) == 1 and r.names[0].startswith("py4jni-callback-connection-")


def test_concurrent_callbacks_use_several_connections(own):
    gw = own(callback_server_parameters=ephemeral())
    op = Add()
    total = gw.jvm.org.py4jni.fixtures.CallbackFixtures.applyOnThreads(op, 4, 200)
    assert total == 4 * sum(i + 1 for i in range(200))
    assert len(op.threads) == 800
    assert all(t.startswith("py4jni-callback-connection-") for t in op.threads)


def test_nested_python_java_python(own):
    gw = own(callback_server_parameters=ephemeral())
    fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures

    class Down:
        def __init__(self):
            self.threads = []

        def down(self, n):
            self.threads.append(threading.current_thread().name)
            return 0 if n == 0 else fx.recurse(self, n)

        class Java:
            implements = [FX + "$Recurser"]

    d = Down()
    assert fx.recurse(d, 25) == 25
    # each level waits for the next on its own connection and thread
    assert len(d.threads) == 25 and len(set(d.threads)) == 25
    assert fx.recurseOnThread(Down(), 10) == 10


def test_python_threads_and_nested_callbacks_together(own):
    gw = own(callback_server_parameters=ephemeral())
    fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures

    class Down:
        def down(self, n):
            return 0 if n == 0 else fx.recurse(self, n)

        class Java:
            implements = [FX + "$Recurser"]

    errors = []

    def work():
        try:
            for _ in range(5):
                assert fx.recurse(Down(), 4) == 4
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_sorting_python_comparables(own):
    """X4's shape: Java sorts Python Comparables; `other` arrives as a Java reference."""
    gw = own(callback_server_parameters=ephemeral())

    class Cmp:
        def __init__(self, key):
            self.key = key

        def compareTo(self, other):
            o = other.hashCode()  # a Java reference to the other proxy: one more callback
            return (self.key > o) - (self.key < o)

        def hashCode(self):
            return self.key

        class Java:
            implements = ["java.lang.Comparable"]

    keys = [(i * 37) % 50 for i in range(50)]
    lst = gw.jvm.java.util.ArrayList()
    for k in keys:
        lst.add(Cmp(k))
    gw.jvm.java.util.Collections.sort(lst)
    assert [lst.get(i).hashCode() for i in range(50)] == sorted(keys)


def test_process_exits_with_a_running_callback_server():
    """Its threads are daemons and the gateway's finalizer stops it: a script that never
    shuts its gateway down still exits."""
    code = f"""
import os
from py4jni import JavaGateway, CallbackServerParameters
gw = JavaGateway.launch_gateway(jarpath={py4j_jar()!r},
                                classpath=os.environ["P4J_FIXTURES_JAR"], die_on_exit=True,
                                callback_server_parameters=CallbackServerParameters(port=0))
class Add:
    def apply(self, a, b): return a + b
    class Java:
        implements = ["org.py4jni.fixtures.Operator"]
gw.jvm.org.py4jni.fixtures.CallbackFixtures.hold(Add())
print(gw.jvm.org.py4jni.fixtures.CallbackFixtures.applyHeld(2, 3))
"""
    r = run_python(code)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == ["5"]


def test_server_signals_follow_py4j(own):
    """py4j's server signals: started, connection started/stopped, pre/post shutdown and
    stopped, each with the callback server as sender."""
    from py4jni import java_gateway as jg
    events = []
    names = ["server_started", "server_connection_started", "server_connection_stopped",
             "pre_server_shutdown", "server_stopped", "post_server_shutdown"]
    receivers = {}
    for name in names:
        def receiver(signal, sender, _name=name, **params):
            events.append((_name, sender))
        receivers[name] = receiver
        getattr(jg, name).connect(receiver)
    try:
        gw = own(callback_server_parameters=ephemeral())
        server = gw.get_callback_server()
        assert gw.jvm.org.py4jni.fixtures.Callbacks.apply(Add(), 1, 2) == 3
        gw.shutdown_callback_server()
    finally:
        for name in names:
            getattr(jg, name).disconnect(receivers[name])
    seen = [name for name, sender in events if sender is server]
    assert seen[0] == "server_started" and "server_connection_started" in seen
    assert "server_connection_stopped" in seen
    # between pre_ and post_server_shutdown: the accepting thread stops and the
    # connections close (concurrently, as in py4j)
    tail = seen[seen.index("pre_server_shutdown"):]
    assert tail[0] == "pre_server_shutdown" and tail[-1] == "post_server_shutdown"
    assert {"server_stopped"} <= set(tail[1:-1]) <= {
        "server_stopped", "server_connection_stopped",
        "server_connection_started"}  # one Java opened as the shutdown began


def test_callback_server_starts_before_java_is_up():
    """py4j's callback server does not need the GatewayServer: the gateway and its
    callback server start first; Java is pointed at it when the first proxy is sent."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    gw = JavaGateway(gateway_parameters=GatewayParameters(port=port),
                     callback_server_parameters=ephemeral())
    proc = None
    try:
        assert gw.get_callback_server().get_listening_port() > 0
        from py4jni import launch_gateway
        _, proc = launch_gateway(port=port, classpath=fixtures_jar(), die_on_exit=True,
                                 return_proc=True)
        assert gw.jvm.org.py4jni.fixtures.Callbacks.apply(Add(), 2, 5) == 7
    finally:
        gw.close()
        if proc is not None:
            proc.kill()
            proc.wait()


def test_default_callback_parameters_take_the_gateways_token():
    # PySpark with PYSPARK_PIN_THREAD=false: JavaGateway(GatewayParameters(port, token))
    # without callback parameters, on a GatewayServer whose callback client authenticates
    # with the same token; ensure_callback_server_started then starts the server late
    from py4jni import JavaObject
    port, proc = launch_gateway(classpath=os.pathsep.join([py4j_jar(), fixtures_jar()]),
                                die_on_exit=True, return_proc=True)
    boot = JavaGateway(gateway_parameters=GatewayParameters(port=port))
    try:
        jvm, token = boot.jvm, "s3cret"
        loopback = jvm.java.net.InetAddress.getByName("127.0.0.1")
        server = jvm.py4j.GatewayServer.GatewayServerBuilder().javaPort(0) \
            .authToken(token).callbackClient(free_port(), loopback, token).build()
        server.start()
        gw = JavaGateway(gateway_parameters=GatewayParameters(
            port=server.getListeningPort(), auth_token=token, auto_convert=True))
        try:
            params = gw.callback_server_parameters
            assert params.auth_token == token and not params.eager_load
            assert gw._callback_server is None
            params.eager_load, params.port = True, 0
            gw.start_callback_server(params)
            cb_port = gw._callback_server.server_socket.getsockname()[1]
            jgws = JavaObject("GATEWAY_SERVER", gw._gateway_client)
            jgws.resetCallbackClient(jgws.getCallbackClient().getAddress(), cb_port)
            assert gw.jvm.org.py4jni.fixtures.Callbacks.apply(Add(), 4, 5) == 9
        finally:
            gw.close()
            server.shutdown()
    finally:
        boot.close()
        proc.kill()
        proc.wait()
