"""py4j behaviours of the client and its servers in both transports; socket mode is
compared with py4j's own client (py4j 0.10.9.9) on the same GatewayServer: JavaGateway's
client and callback-server methods, attributes set from Python on a JavaObject, auto_field's
lookups (counted on the wire through a relay), ``_auto_field``, ``get_java_class``,
``dir()`` with called names, ``help()`` of a member, names holding NUL, error messages,
``launch_gateway(die_on_exit=True)`` then ``shutdown()``."""
from __future__ import annotations

import contextlib
import gc
import socket
import threading

import pytest

from conftest import fixtures_jar, run_python
from py4jni import JavaObject, Py4JError, get_field, get_java_class, java_import, set_field
from py4jni.java_gateway import GatewayClient, GatewayParameters, JavaClass

FX = "org.py4jni.fixtures"


@pytest.fixture
def theirs(gateway):
    """py4j's own JavaGateway on the socket gateway's server (skips in-process)."""
    if gateway._mode == "inproc":
        pytest.skip("py4j's client needs a socket")
    from py4j.java_gateway import GatewayParameters as Py4jParameters
    from py4j.java_gateway import JavaGateway as Py4jGateway
    g = Py4jGateway(gateway_parameters=Py4jParameters(port=gateway.gateway_parameters.port))
    yield g
    g.close()


class Relay:
    """A TCP relay to a GatewayServer that keeps what clients sent (commands counted
    on the wire)."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.sent = bytearray()
        self.lock = threading.Lock()
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(8)
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=self._pump, args=(conn, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, conn, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, record: bool) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if record:
                    with self.lock:
                        self.sent += data
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def count(self, command: bytes) -> int:
        with self.lock:
            return bytes(self.sent).count(command)

    def close(self) -> None:
        self.server.close()


# -- attributes set from Python ----------------------------------------------------------

def test_attributes_set_from_python(gateway):
    sb = gateway.jvm.java.lang.StringBuilder("ab")
    sb.note = "mine"
    assert sb.note == "mine" and sb.__dict__ == {"note": "mine"}
    assert isinstance(sb, JavaObject) and sb.length() == 2  # still a Java object
    a, b = gateway.jvm.java.util.ArrayList(), gateway.jvm.java.util.ArrayList()
    a.cycle, b.cycle = b, a  # a Python collection wrapper takes attributes too
    assert a.cycle is b and b.cycle is a
    a.add(1)
    assert list(b.cycle) == [1]
    del sb.note
    assert "note" not in sb.__dict__ and sb.length() == 2  # a Java member again (py4j's)


def test_attributes_make_cycles_the_gc_collects(gateway):
    client = gateway._gateway_client
    gc.collect()
    before = client.global_ref_count() if gateway._mode == "inproc" else None
    for _ in range(50):
        o1, o2 = gateway.jvm.java.lang.StringBuilder(), gateway.jvm.java.lang.StringBuilder()
        o1.cycle, o2.cycle = o2, o1
    del o1, o2
    gc.collect()
    if before is not None:  # every reference of the cycles was released
        assert client.global_ref_count() <= before
    assert gateway.jvm.java.lang.Math.max(1, 2) == 2


def test_py4j_takes_attributes_too(theirs):
    sb = theirs.jvm.java.lang.StringBuilder("ab")
    sb.note = "mine"
    assert sb.note == "mine" and sb.length() == 2


# -- auto_field and member lookups --------------------------------------------------------

def _lookups(make_gateway, port: int) -> tuple[int, int, list[object]]:
    """Field-get commands sent for: a method name read twice, a field read twice."""
    relay = Relay(port)
    try:
        gw = make_gateway(relay.port)
        try:
            obj = gw.jvm.org.py4jni.fixtures.Fields()
            before = relay.count(b"f\ng\n")
            m1, m2 = obj.toString, obj.toString
            methods = relay.count(b"f\ng\n") - before
            before = relay.count(b"f\ng\n")
            values = [obj.i, obj.i, m1(), m2() == m1()]
            fields = relay.count(b"f\ng\n") - before
            return methods, fields, values[:1] + values[3:]
        finally:
            gw.close()
    finally:
        relay.close()


def test_auto_field_member_read_twice_asks_once(gateway):
    if gateway._mode == "inproc":
        pytest.skip("counted on the wire")
    from py4j.java_gateway import GatewayParameters as Py4jParameters
    from py4j.java_gateway import JavaGateway as Py4jGateway

    from py4jni import JavaGateway
    port = gateway.gateway_parameters.port
    ours = _lookups(lambda p: JavaGateway(gateway_parameters=GatewayParameters(
        port=p, auto_field=True)), port)
    expected = _lookups(lambda p: Py4jGateway(gateway_parameters=Py4jParameters(
        port=p, auto_field=True)), port)
    assert ours == expected == (1, 2, [3, True])


def test_auto_field_is_writable_per_object(gateway):
    obj = gateway.jvm.org.py4jni.fixtures.Fields()
    other = gateway.jvm.org.py4jni.fixtures.Fields()
    assert obj._auto_field is False
    obj._auto_field = True
    assert obj._auto_field is True and obj.i == 3 and obj.str == "hello"
    assert "i" in dir(obj) and "toString" in dir(obj)
    assert other._auto_field is False and not isinstance(other.i, int)  # its own setting
    obj._auto_field = False
    assert not isinstance(obj.i, int)
    assert obj.toString().startswith("org.py4jni.fixtures.Fields")


def test_auto_field_writable_as_py4j(gateway, theirs):
    for gw in (gateway, theirs):
        obj = gw.jvm.org.py4jni.fixtures.Fields()
        obj._auto_field = True
        assert (obj.i, obj.str) == (3, "hello")


def test_get_java_class(gateway):
    ArrayList = gateway.jvm.java.util.ArrayList
    clazz = get_java_class(ArrayList)
    assert clazz.getName() == "java.util.ArrayList"
    assert clazz.getClass().getName() == "java.lang.Class"
    assert ArrayList._java_lang_class.getName() == "java.util.ArrayList"


def test_dir_lists_names_called(gateway):
    sb = gateway.jvm.java.lang.StringBuilder()
    listed = dir(sb)
    assert "append" in listed and len(listed) == len(set(listed))
    with pytest.raises(Py4JError):
        sb.does_not_exist_here()
    assert sorted(dir(sb)) == sorted(listed + ["does_not_exist_here"])


def test_dir_lists_names_called_as_py4j(gateway, theirs):
    pages = []
    for gw in (gateway, theirs):
        sb = gw.jvm.java.lang.StringBuilder()
        try:
            sb.does_not_exist_here()
        except Exception:  # noqa: BLE001 - each client's own Py4JError
            pass
        pages.append(sorted(dir(sb)))
    assert pages[0] == pages[1]


def test_help_of_a_member(gateway):
    sb = gateway.jvm.java.lang.StringBuilder()
    page = gateway.help(sb.insert, display=False)
    assert "insert(int, String)" in page and "length()" not in page
    with pytest.raises(Py4JError, match="pattern should be None"):
        gateway.help(sb.insert, pattern="x*", display=False)
    import pydoc
    assert "insert(" in pydoc.render_doc(sb.insert)


def test_help_of_a_member_as_py4j(gateway, theirs):
    ours = gateway.help(gateway.jvm.java.lang.StringBuilder().insert, display=False)
    expected = theirs.help(theirs.jvm.java.lang.StringBuilder().insert, display=False)
    assert ours == expected


# -- names holding NUL ----------------------------------------------------------------------

def test_names_with_nul_are_refused(gateway):
    sb = gateway.jvm.java.lang.StringBuilder("abc")
    Math = gateway.jvm.java.lang.Math
    cases = [lambda: getattr(sb, "length\0junk"), lambda: getattr(Math, "abs\0x"),
             lambda: getattr(gateway.jvm.java.lang, "Str\0ing"),
             lambda: getattr(gateway.jvm, "Str\0ing"),
             lambda: JavaClass("java.lang.Str\0ing", gateway._gateway_client),
             lambda: get_field(sb, "count\0"), lambda: set_field(sb, "count\0", 1),
             lambda: java_import(gateway.jvm, "java.util.\0*")]
    for case in cases:
        with pytest.raises(Py4JError, match="cannot hold NUL"):
            case()
    assert (sb.length(), Math.abs(-3), getattr(sb, "length")()) == (3, 3, 3)


def test_py4j_does_not_cut_a_name_at_nul_either(theirs):
    with pytest.raises(Exception):  # py4j's Py4JError: Java finds no such method
        getattr(theirs.jvm.java.lang.StringBuilder("abc"), "length\0junk")()


# -- error messages ------------------------------------------------------------------------

def test_int_field_out_of_range_says_so(gateway):
    if gateway._mode != "inproc":
        pytest.skip("in socket mode py4j's server decides")
    obj = gateway.jvm.org.py4jni.fixtures.Fields()
    with pytest.raises(Py4JError, match="cannot assign 1099511627776 to field i of type "
                                        "int: out of the int range"):
        set_field(obj, "i", 2**40)


def test_jvm_options_of_the_wrong_type_are_named():
    from py4jni import JavaGateway
    with pytest.raises(TypeError, match=r"jvm_options\[0\] must be a str .* not int \(1\)"):
        JavaGateway(jvm_options=[1, 2])
    # a str would be taken a character at a time ("Unrecognized option: -")
    with pytest.raises(TypeError, match=r"jvm_options must be a list of str .* not str"):
        JavaGateway(jvm_options="-Xmx1g")


def test_a_nul_in_an_option_or_the_class_path_is_refused():
    # C reads a string up to its first NUL: "-Dfoo=a\0b" set foo to "a", silently
    from py4jni import JavaGateway
    with pytest.raises(ValueError, match=r"jvm_options\[1\]: embedded null character"):
        JavaGateway(jvm_options=["-Dok=1", "-Dfoo=a\0b"])
    with pytest.raises(ValueError, match="classpath: embedded null character"):
        JavaGateway(classpath=["a.jar", "b\0.jar"])


def test_a_library_that_is_no_jvm_is_named_so():
    r = run_python("from py4jni import JavaGateway\n"
                   "try:\n    JavaGateway(libjvm='libc.so.6')\n"
                   "except Exception as e:\n    print('ERR', e)\n")
    assert "ERR libc.so.6 is not a JVM: it has no JNI_CreateJavaVM" in r.stdout, r.stderr


# -- JavaGateway's client and callback-server methods (socket) ------------------------------

class Adder:
    def apply(self, a, b):
        return a + b

    class Java:
        implements = [f"{FX}.Operator"]


def _ours(gateway):
    from py4jni import CallbackServerParameters, JavaGateway
    return JavaGateway(gateway_parameters=GatewayParameters(port=gateway.gateway_parameters.port),
                       callback_server_parameters=CallbackServerParameters(port=0))


def test_set_gateway_client(gateway, theirs):
    from py4j.java_gateway import GatewayClient as Py4jClient
    from py4j.java_gateway import GatewayParameters as Py4jParameters
    port = gateway.gateway_parameters.port
    ours = _ours(gateway)
    try:
        for gw, client in ((ours, GatewayClient(port=port)),
                           (theirs, Py4jClient(gateway_parameters=Py4jParameters(port=port)))):
            gw.set_gateway_client(client)
            assert gw._gateway_client is client
            assert client.gateway_property is gw.gateway_property
            assert gw.jvm.java.lang.Math.max(3, 4) == 4
            assert gw.java_gateway_server.getListeningPort() == port
            assert gw.entry_point is not None
    finally:
        ours.shutdown_callback_server()
        ours.close()


def test_close_and_restart_callback_server(gateway, theirs):
    from py4j.java_gateway import CallbackServerParameters as Py4jCallbackParameters
    ours = _ours(gateway)
    theirs.start_callback_server(Py4jCallbackParameters(port=0))

    def point_java_at_callback_server(gw):
        gw.java_gateway_server.resetCallbackClient(
            gw.java_gateway_server.getCallbackClient().getAddress(),
            gw.get_callback_server().get_listening_port())

    outcomes = []
    try:
        for gw in (ours, theirs):
            point_java_at_callback_server(gw)  # each client's own callback server
            calc = gw.jvm.org.py4jni.fixtures.Callbacks
            seen = [calc.apply(Adder(), 2, 3)]
            server = gw.get_callback_server()
            seen.append(len(server.connections) >= 1)
            gw.close_callback_server()  # its connections closed, the server listening
            seen.append(gw.get_callback_server() is server)
            try:  # Java's connection was closed under it: its answer is lost
                seen.append(calc.apply(Adder(), 4, 5))
            except Exception as exc:  # noqa: BLE001 - each client's own Py4JJavaError
                seen.append(type(exc).__name__ + ("NetworkException" in str(exc)) * "/net")
            seen.append(calc.apply(Adder(), 4, 5))  # Java connects again
            gw.restart_callback_server()
            fresh = gw.get_callback_server()
            seen.append(fresh is not server and fresh is not None)
            point_java_at_callback_server(gw)
            seen.append(calc.apply(Adder(), 6, 7))
            outcomes.append(seen)
    finally:
        theirs.shutdown_callback_server()
        ours.shutdown_callback_server()
        ours.close()
        if gateway.get_callback_server() is not None:  # the shared gateway's again
            point_java_at_callback_server(gateway)
    assert outcomes[0] == outcomes[1] == [5, True, True, "Py4JJavaError/net", 9, True, 13]


def test_callback_server_methods_in_process(gateway):
    if gateway._mode != "inproc":
        pytest.skip("in-process")
    gateway.close_callback_server()
    gateway.restart_callback_server()
    assert gateway.get_callback_server() is None  # no server: callbacks are JNI upcalls
    assert gateway.jvm.org.py4jni.fixtures.Callbacks.apply(Adder(), 2, 3) == 5


# -- launch_gateway(die_on_exit=True) then shutdown() ------------------------------------

def test_launch_die_on_exit_then_shutdown():
    """As py4j's own test: after shutdown() the child still runs (it ends when its stdin
    closes, at the latest at this process's exit); a line on its stdin ends it."""
    from py4j.java_gateway import JavaGateway as Py4jGateway

    from py4jni import JavaGateway
    gateways = [Py4jGateway.launch_gateway(die_on_exit=True),
                JavaGateway.launch_gateway(die_on_exit=True)]
    try:
        seen = []
        for gw in gateways:
            proc = gw.java_process
            alive = [proc.poll() is None, gw.jvm.java.lang.Math.max(1, 2) == 2]
            gw.shutdown()
            alive.append(proc.poll() is None)
            proc.stdin.write(b"\n")
            proc.stdin.flush()
            alive.append(proc.wait(timeout=30))
            seen.append(alive)
        assert seen[0] == seen[1] == [True, True, True, 0]
        with pytest.raises(Py4JError):
            gateways[1].jvm.java.lang.Math.max(1, 2)
    finally:
        for gw in gateways:
            if gw.java_process.poll() is None:
                gw.java_process.kill()
                gw.java_process.wait()


@contextlib.contextmanager
def _both_callback_servers(gateway, theirs, read_timeout: float | None = None):
    """py4jni's client and py4j's (``theirs``) on ``gateway``'s GatewayServer, each with a
    callback server (of ``read_timeout``): iterating what it yields starts each in turn and
    points Java's callback client at it; on leaving, both are shut down and Java is pointed
    back at ``gateway``'s callback server."""
    from py4j.java_gateway import CallbackServerParameters as Py4jCallbackParameters

    from py4jni import CallbackServerParameters, JavaGateway
    ours = JavaGateway(
        gateway_parameters=GatewayParameters(port=gateway.gateway_parameters.port),
        callback_server_parameters=CallbackServerParameters(port=0, read_timeout=read_timeout))
    theirs.start_callback_server(Py4jCallbackParameters(port=0, read_timeout=read_timeout))

    def each():
        for gw in (ours, theirs):
            gw.start_callback_server()
            gw.java_gateway_server.resetCallbackClient(
                gw.java_gateway_server.getCallbackClient().getAddress(),
                gw.get_callback_server().get_listening_port())
            yield gw
    try:
        yield each()
    finally:
        theirs.shutdown_callback_server()
        ours.shutdown_callback_server()
        ours.close()
        if gateway.get_callback_server() is not None:
            gateway.java_gateway_server.resetCallbackClient(
                gateway.java_gateway_server.getCallbackClient().getAddress(),
                gateway.get_callback_server().get_listening_port())


# -- Python proxies in py4j's pool, py4j.finalizer's registry ------------------------------

def test_proxy_pool_counts_as_py4j(gateway, theirs):
    """The same Python object passed twice is two pool entries; the pool empties as
    Java's GC releases the proxies (each sends py4j's ``g``)."""
    counts = []
    with _both_callback_servers(gateway, theirs) as gateways:
        for gw in gateways:
            fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures
            pool = gw.gateway_property.pool
            start = len(pool)
            op = Adder()
            fx.hold(op)
            fx.twiceInList(op)  # a second Java proxy of the same object
            seen = [len(pool) - start]
            fx.drop()
            del op
            for _ in range(200):  # Java's GC finalizes the proxies; each sends `g`
                gc.collect()
                fx.gc()
                if len(pool) == start:
                    break
            seen.append(len(pool) - start)
            counts.append(seen)
    assert counts[0] == counts[1] == [2, 0]


def test_finalizer_registry_after_collection_as_py4j(gateway, theirs):
    """py4j registers a finalizer per JavaObject in ThreadSafeFinalizer (py4jni's objects
    need none: docs/deviations.md); after gc.collect() both registries are back where they were."""
    from py4j.finalizer import ThreadSafeFinalizer as Theirs

    from py4jni.finalizer import ThreadSafeFinalizer as Ours
    deltas = []
    for gw, registry in ((gateway, Ours), (theirs, Theirs)):
        gc.collect()
        start = len(registry.finalizers)

        def make(gw=gw):
            sb = gw.jvm.java.lang.StringBuffer()
            sb.append("Hello World")
            sb2 = gw.jvm.java.lang.StringBuffer()
            sb2.append("Hello World")
            return sb.toString() + sb2.toString()

        assert make() == "Hello World" * 2
        gc.collect()
        deltas.append(len(registry.finalizers) - start)
    assert deltas == [0, 0]


def test_java_retries_a_callback_connection_python_timed_out(gateway, theirs):
    """py4j's read_timeout on a callback connection closes it with a RST, so Java's next
    callback fails on write and its callback client retries on a new connection."""
    import time

    outcomes = []
    with _both_callback_servers(gateway, theirs, read_timeout=0.25) as gateways:
        for gw in gateways:
            calc = gw.jvm.org.py4jni.fixtures.Callbacks
            seen = [calc.apply(Adder(), 1, 2)]
            first = list(gw.get_callback_server().connections)
            time.sleep(0.6)  # Python's side of the connection times out
            seen.append(calc.apply(Adder(), 3, 4))  # Java retries: no error
            later = list(gw.get_callback_server().connections)
            seen.append(any(c not in first for c in later))  # a new one (py4j: a WeakSet)
            outcomes.append(seen)
    assert outcomes[0] == outcomes[1] == [3, 7, True]


# -- gateway_client.deque: the idle connections ----------------------------------------

def _deque_story(gw, port: int) -> list[object]:
    """What a program sees of py4j's deque of idle connections while it reads, takes,
    gives back and closes them between calls."""
    dq = gw._gateway_client.deque
    call = gw.jvm.java.lang.System.currentTimeMillis
    out: list[object] = []
    gw._gateway_client.close()  # start with no idle connection
    out.append(len(dq))
    call()
    out.append(len(dq))                                 # the call's connection, given back
    first = str(dq[0])
    call()
    out.append(str(dq[0]) == first)                     # the same one again
    out.append(dq[0].is_connected and bool(dq))
    out.append(dq[0].socket.getpeername()[1] == port)   # a socket to the GatewayServer
    taken = dq.pop()
    out.append(len(dq))                                 # the pool sees it gone
    out.append(taken.is_connected)
    call()
    out.append(len(dq))                                 # the call opened another one
    out.append(str(dq[0]) != str(taken))
    dq.append(taken)
    out.append(len(dq))
    out.append(str(dq[-1]) == str(taken) and taken in dq and dq.index(taken) == 1)
    call()                                              # takes and gives back dq[-1]
    out.append(str(dq[-1]) == str(taken))
    oldest = dq.popleft()
    oldest.close()
    out.append(oldest.is_connected)
    out.append([len(dq), str(dq[0]) == str(taken)])
    dq.remove(taken)
    del taken
    gc.collect()                                        # a dropped connection is closed
    out.append(len(dq))
    call()
    out.append(len(dq))
    dq.clear()
    gc.collect()
    out.append(len(dq))
    out.append(call() > 0)                              # a new connection serves the call
    out.append(len(dq))
    return out


def test_gateway_client_deque_as_py4j(gateway, theirs):
    """``gateway._gateway_client.deque`` lists the idle connections as py4j's deque does:
    a call's connection comes back to it, one taken out (pop, popleft, remove) is not
    used by calls until given back (append), close() closes it, a dropped one closes;
    py4j's client on the same GatewayServer sees the same."""
    from py4jni import _py4jni
    port = gateway.gateway_parameters.port
    ours = _ours(gateway)
    try:
        made = _py4jni.socket_counts(ours._gateway_client)["made"]
        got = _deque_story(ours, port)
        counts = _py4jni.socket_counts(ours._gateway_client)
    finally:
        ours.close()
    expected = _deque_story(theirs, port)
    assert got == expected
    assert got == [0, 1, True, True, True, 0, True, 1, True, 2, True, True, False, [1, True],
                   0, 1, 0, True, 1]
    # connections made: the first, one while one was taken, one after remove(), one after
    # clear(): a connection taken out of the pool is not used by calls
    assert counts["made"] - made == 4 and counts["retried"] == 0


def test_gateway_client_deque_in_process_is_empty(inproc_gateway):
    dq = inproc_gateway._gateway_client.deque
    inproc_gateway.jvm.java.lang.System.currentTimeMillis()
    assert len(dq) == 0 and list(dq) == [] and not dq
    with pytest.raises(IndexError):
        dq.pop()


def test_ended_callback_connection_leaves_the_weakset_as_py4j(gateway, theirs):
    """``callback_server.connections`` is py4j's WeakSet: a connection that ended (here:
    Python's read_timeout) has no socket and leaves it once nothing holds it (the
    accepting thread holds the newest); py4j's client on the same GatewayServer sees the
    same."""
    import time
    import weakref

    outcomes = []
    with _both_callback_servers(gateway, theirs, read_timeout=0.25) as gateways:
        for gw in gateways:
            connections = gw.get_callback_server().connections
            seen: list[object] = [isinstance(connections, weakref.WeakSet)]
            gc.collect()
            gc.disable()  # no collection but the test's own
            try:
                seen.append(gw.jvm.org.py4jni.fixtures.Callbacks.apply(Adder(), 1, 2))
                seen.append(len(connections))
                deadline = time.monotonic() + 10
                # Python's side times out and closes; its thread ends (py4j's connection
                # is a Thread, py4jni's has one)
                while any(getattr(c, "thread", c).is_alive() for c in connections) and \
                        time.monotonic() < deadline:
                    time.sleep(0.05)
                seen.append([c.socket is None for c in connections])
                # Java's next callback fails on write and retries on a new connection;
                # the ended one is gone at once, the new one listed
                seen.append(gw.jvm.org.py4jni.fixtures.Callbacks.apply(Adder(), 3, 4))
                seen.append(len(connections))
                gc.collect()
                seen.append(len(connections))
            finally:
                gc.enable()
            outcomes.append(seen)
    assert outcomes[0] == outcomes[1] == [True, 3, 1, [True], 7, 1, 1]


def test_more_than_32_arguments_are_refused_in_process(gateway):
    # docs/deviations.md: in-process a call takes at most 32 arguments (a resolved member's
    # fixed arrays); socket mode sends them all and py4j's server answers
    sb = gateway.jvm.java.lang.StringBuilder("x")
    if gateway._mode == "inproc":
        with pytest.raises(Py4JError, match="at most 32 arguments per call"):
            sb.append(*range(33))
    else:
        with pytest.raises(Py4JError) as raised:
            sb.append(*range(33))
        assert "at most 32" not in str(raised.value)
    assert sb.append(*range(1)).toString() == "x0"  # the object is still usable
