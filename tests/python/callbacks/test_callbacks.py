"""Java calls Python: py4j-style proxies.

Fixtures: org.py4jni.fixtures.CallbackFixtures (tests/java), plus Callbacks/Operator.
Tests taking `gw`, `fx` or `cb` run in both modes (in-process, and socket mode through
py4j's GatewayServer and py4jni's callback server); those whose behaviour is in-process
only say why. Socket-mode specifics are in test_socket_callbacks.py.
"""
from __future__ import annotations

import gc
import math
import sys
import threading
import time
import weakref

import pytest

from conftest import fixtures_jar, run_python, run_threads
from py4jni import JavaGateway, Py4JError, Py4JJavaError
from py4jni import _py4jni

PY4J_PREFIX = "An exception was raised by the Python Proxy. Return Message: "


@pytest.fixture
def gw(gateway):
    return gateway


@pytest.fixture
def fx(gw):
    return gw.jvm.org.py4jni.fixtures.CallbackFixtures


@pytest.fixture
def cb(gw):
    return gw.jvm.org.py4jni.fixtures.Callbacks


def socket_mode(gw_or_class):
    return gw_or_class._gateway_client.kind == "socket"


def py4j_exception(gw_or_class):
    """The class Java throws for a failed callback: py4jni's in-process, py4j's over sockets."""
    return "py4j.Py4JException" if socket_mode(gw_or_class) else "org.py4jni.Py4JException"


# In socket mode py4j's Java proxy sends every call to Python and converts what Python
# returns itself (its rules and messages: test_socket_callbacks.py covers them).
PY4J_CONVERTS = "socket mode: py4j's Java proxy converts return values (its own rules)"
# py4j's GatewayServer makes a new Java proxy for each proxy argument and hands a proxy
# back to Python as a reference to that Java object.
PY4J_PROXIES = ("socket mode: py4j's server makes a new Java proxy for each argument and "
                "hands proxies back as Java references")


class Add:
    def __init__(self):
        self.threads = set()

    def apply(self, a, b):
        self.threads.add(threading.current_thread().name)
        return a + b

    def name(self):
        return "add"

    class Java:
        implements = ["org.py4jni.fixtures.Operator"]


class AllTypes:
    def __init__(self, gw=None):
        self.sunk = []
        self.gw = gw

    def flip(self, b):
        return not b

    def nextByte(self, b):
        return b + 1

    def upper(self, c):
        return c.upper()

    def half(self, s):
        return s // 2

    def twice(self, i):
        return 2 * i

    def big(self, v):
        return v * 3

    def third(self, f):
        return f / 3

    def sqrt(self, d):
        return math.sqrt(d)

    def greet(self, s):
        return "hi " + s

    def reverse(self, b):
        return bytes(reversed(b))

    def echo(self, o):
        return o

    def boxed(self, i):
        return None if i is None else i + 1

    def sink(self, x):
        self.sunk.append(x)
        return "ignored for void"

    def names(self):
        lst = self.gw.jvm.java.util.ArrayList()
        lst.add("a")
        lst.add("b")
        return lst

    def ints(self):
        return self.gw.jvm.org.py4jni.fixtures.NativeCodec.range(5)

    class Java:
        implements = ["org.py4jni.fixtures.CallbackFixtures$AllTypes"]


# ----------------------------------------------------------------- basic calls

def test_proxy_call_and_name(cb):
    op = Add()
    assert cb.apply(op, 2, 3) == 5
    assert cb.name(op) == "add"
    assert cb.applyMany(op, 100) == sum(2 * i for i in range(100))
    assert cb.isOperator(op)
    if socket_mode(cb):  # the callback server's threads
        assert threading.current_thread().name not in op.threads
    else:
        assert op.threads == {threading.current_thread().name}  # the calling thread


def test_every_type_crosses(gw, fx):
    t = AllTypes(gw)
    assert fx.flip(t, True) is False
    assert fx.nextByte(t, 41) == 42
    assert fx.upper(t, "q") == "Q"
    assert fx.half(t, -300) == -150
    assert fx.twice(t, 21) == 42
    assert fx.big(t, 2**40) == 3 * 2**40
    assert fx.third(t, 0.75) == pytest.approx(0.25)
    assert fx.sqrt(t, 2.0) == math.sqrt(2.0)
    assert fx.greet(t, "wörld \U0001F600 \x00!") == "hi wörld \U0001F600 \x00!"
    assert fx.reverse(t, b"\x00\x01\xff") == b"\xff\x01\x00"
    assert fx.boxed(t, 7) == 8
    assert fx.boxed(t, None) is None
    fx.sink(t, 9)
    assert t.sunk == [9]
    assert list(fx.names(t)) == ["a", "b"]
    assert fx.sumInts(t) == 10


def test_echo_converts_both_ways(gw, fx):
    t = AllTypes(gw)
    assert fx.echo(t, 5) == 5
    assert fx.echoClass(t, 5) == "java.lang.Integer"
    assert fx.echoClass(t, 2**40) == "java.lang.Long"
    assert fx.echoClass(t, 1.5) == "java.lang.Double"
    assert fx.echoClass(t, "s") == "java.lang.String"
    assert fx.echoClass(t, True) == "java.lang.Boolean"
    assert fx.echoClass(t, None) == "null"
    sb = gw.jvm.java.lang.StringBuilder("x")
    assert fx.echoClass(t, sb) == "java.lang.StringBuilder"
    got = fx.echo(t, sb)
    got.append("y")
    assert sb.toString() == "xy"


def test_byte_array_arguments_from_many_threads(gw, fx):
    """A byte[] argument of a callback, declared byte[] or passed as an Object, arrives
    as bytes with its content (in-process: read on the calling Java thread from a local
    reference of that call), from four threads at once, small and 64 KiB and over."""
    t = AllTypes(gw)
    assert fx.echoClass(t, b"ab") == "[B"
    data = {n: bytes(i & 0xFF for i in range(n)) for n in (0, 1, 1000, 70_000)}
    errors: list = []

    def work(sizes):
        try:
            for _ in range(20):
                for n in sizes:
                    if fx.reverse(t, data[n]) != data[n][::-1]:
                        errors.append(("reverse", n))
                    if fx.echo(t, data[n]) != data[n]:
                        errors.append(("echo", n))
        except Exception as exc:  # reported below, not lost on the thread
            errors.append(exc)

    run_threads(work, [((0, 1000),), ((70_000, 1),), ((1000, 70_000),), ((1, 0),)])
    assert errors == []


def test_proxy_with_two_interfaces(gw, fx, cb):
    class Both:
        def __init__(self):
            self.ran = 0

        def run(self):
            self.ran += 1

        def apply(self, a, b):
            return a * b

        def name(self):
            return "both"

        class Java:
            implements = ["java.lang.Runnable", "org.py4jni.fixtures.Operator"]

    b = Both()
    assert cb.apply(b, 6, 7) == 42
    cb.run(b)
    assert b.ran == 1


@pytest.mark.inproc_only(PY4J_PROXIES)
def test_proxy_handed_back_is_the_python_object(gw, fx):
    op = Add()
    assert getattr(fx, "pass")(op) is op  # `pass` is a Python keyword
    fx.hold(op)
    assert fx.held() is op
    lst = fx.twiceInList(op)
    assert lst[0] is op and lst[1] is op
    fx.drop()


def test_java_objects_as_arguments_and_results(gw, fx):
    class Keeper:
        def echo(self, o):
            self.seen = o
            return o

        class Java:
            implements = ["org.py4jni.fixtures.CallbackFixtures$AllTypes"]

    k = Keeper()
    lst = gw.jvm.java.util.ArrayList()
    lst.add(3)
    back = fx.echo(k, lst)
    assert back.size() == 1 and k.seen.get(0) == 3


# ------------------------------------------------------------------ results

@pytest.mark.inproc_only(PY4J_CONVERTS)
def test_none_to_primitive_is_an_error(fx):
    class Bad:
        def apply(self, a, b):
            return None

        def name(self):
            return None  # fine: String

        class Java:
            implements = ["org.py4jni.fixtures.Operator"]

    msg = fx.catchingApply(Bad(), 1, 2)
    assert msg.startswith("org.py4jni.Py4JException: ")
    assert "None cannot be returned as Java int" in msg
    assert "Bad.apply" in msg


@pytest.mark.inproc_only(PY4J_CONVERTS)
def test_int_out_of_range_is_an_error(fx):
    class Big:
        def apply(self, a, b):
            return 2**31

        class Java:
            implements = ["org.py4jni.fixtures.Operator"]

    msg = fx.catchingApply(Big(), 1, 2)
    assert "org.py4jni.Py4JException" in msg and "out of range for Java int" in msg


@pytest.mark.inproc_only(PY4J_CONVERTS)
def test_wrong_type_is_an_error(gw, fx, cb):
    class Wrong:
        def apply(self, a, b):
            return "three"

        def name(self):
            return 3

        class Java:
            implements = ["org.py4jni.fixtures.Operator"]

    msg = fx.catchingApply(Wrong(), 1, 2)
    assert "cannot convert a string to Java int" in msg and "'three'" in msg
    with pytest.raises(Py4JJavaError) as info:
        cb.name(Wrong())
    assert "Java java.lang.Integer" in str(info.value) and "java.lang.String" in str(info.value)

    class Unconvertible:
        def greet(self, s):
            return object()

        class Java:
            implements = ["org.py4jni.fixtures.CallbackFixtures$AllTypes"]

    with pytest.raises(Py4JJavaError, match="cannot be converted to Java"):
        fx.greet(Unconvertible(), "x")


@pytest.mark.inproc_only(PY4J_CONVERTS)
def test_byte_and_char_ranges(fx):
    class T(AllTypes):
        def nextByte(self, b):
            return 200

        def upper(self, c):
            return "ab"

    t = T()
    with pytest.raises(Py4JJavaError, match="out of range for Java byte"):
        fx.nextByte(t, 1)
    with pytest.raises(Py4JJavaError, match="length 2 cannot be a Java char"):
        fx.upper(t, "a")


# --------------------------------------------------------------- exceptions

class Raiser:
    def apply(self, a, b):
        raise ValueError(f"boom {a}")

    def name(self):
        return "raiser"

    class Java:
        implements = ["org.py4jni.fixtures.Operator"]


def test_python_exception_reaches_java_with_traceback(fx):
    msg = fx.catchingApply(Raiser(), 7, 0)
    assert msg.startswith(py4j_exception(fx) + ": " + PY4J_PREFIX + "Traceback")
    assert "ValueError: boom 7" in msg
    assert "in apply" in msg  # the Python frame


def test_python_exception_uncaught_surfaces_as_py4jjavaerror(gw, cb):
    with pytest.raises(Py4JJavaError) as info:
        cb.apply(Raiser(), 1, 2)
    exc = info.value
    assert exc.java_exception.getClass().getName() == py4j_exception(gw)
    assert "ValueError: boom 1" in exc.java_exception.getMessage()
    assert "ValueError: boom 1" in str(exc)


def test_java_exception_in_nested_call_is_py4jjavaerror(gw, fx):
    seen = []

    class Nested:
        def apply(self, a, b):
            try:
                fx.divide(a, b)
            except Py4JJavaError as e:
                seen.append(e.java_exception.getClass().getName())
                raise
            return 0

        class Java:
            implements = ["org.py4jni.fixtures.Operator"]

    msg = fx.catchingApply(Nested(), 1, 0)
    assert seen == ["java.lang.ArithmeticException"]
    assert py4j_exception(gw) in msg and "Py4JJavaError" in msg
    assert "ArithmeticException" in msg


def test_missing_method_is_attribute_error_in_java(fx):
    class Partial:
        class Java:
            implements = ["org.py4jni.fixtures.Operator"]

    msg = fx.catchingApply(Partial(), 1, 2)
    assert "AttributeError" in msg and "apply" in msg


def test_propagate_java_exceptions(gw):
    from py4jni import CallbackServerParameters
    gw2 = JavaGateway(classpath=fixtures_jar(), callback_server_parameters=CallbackServerParameters(
        propagate_java_exceptions=True))
    try:
        fx2 = gw2.jvm.org.py4jni.fixtures.CallbackFixtures

        class Io:
            def run(self):
                fx2.throwIO("disk full")

            class Java:
                implements = ["org.py4jni.fixtures.CallbackFixtures$Checked"]

        assert fx2.runChecked(Io()) == "IOException: disk full"
    finally:
        gw2.shutdown()
    fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures

    class Io2:
        def run(self):
            fx.throwIO("disk full")

        class Java:
            implements = ["org.py4jni.fixtures.CallbackFixtures$Checked"]

    out = fx.runChecked(Io2())  # default: py4j's Py4JException with the traceback
    assert out.startswith(py4j_exception(gw) + ": " + PY4J_PREFIX)


# ------------------------------------------------------------------ threads

def test_callback_from_new_java_thread(cb):
    class R:
        def __init__(self):
            self.names = []

        def run(self):
            self.names.append(threading.current_thread().name)

        class Java:
            implements = ["java.lang.Runnable"]

    r = R()
    cb.runOnThread(r)
    cb.runOnThread(r)
    assert len(r.names) == 2
    assert threading.current_thread().name not in r.names


def test_many_short_lived_java_threads(cb):
    """Each Java thread keeps a Python thread state while it lives; it is deleted when
    the thread exits."""
    class R:
        count = 0

        def run(self):
            R.count += 1

        class Java:
            implements = ["java.lang.Runnable"]

    r = R()
    for _ in range(200):
        cb.runOnThread(r)
    assert R.count == 200


def test_callbacks_from_many_java_threads(fx):
    op = Add()
    total = fx.applyOnThreads(op, 8, 500)
    assert total == 8 * sum(i + 1 for i in range(500))
    assert len(op.threads) >= 2


def test_python_threads_call_java_that_calls_back(cb):
    op = Add()
    errors = []

    def work():
        try:
            for _ in range(50):
                assert cb.applyMany(op, 20) == sum(2 * i for i in range(20))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_callback_does_not_hold_gil_while_java_runs(fx):
    """A Python thread keeps running while Java threads call back."""
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        fx.applyOnThreads(Add(), 2, 2000)
    finally:
        stop.set()
        t.join()
    assert ticks


# -------------------------------------------------------------- re-entrancy

class Down:
    def __init__(self, fx):
        self.fx = fx
        self.deepest = None

    def down(self, n):
        if n == 0:
            self.deepest = n
            return 0
        return self.fx.recurse(self, n)

    class Java:
        implements = ["org.py4jni.fixtures.CallbackFixtures$Recurser"]


def test_reentrancy_120_levels(fx):
    d = Down(fx)
    # each level: Java recurse -> Python down -> Java recurse ... (test_callback_depth.py:
    # 1,000 levels on the main thread with the default options)
    assert fx.recurse(d, 120) == 120
    assert d.deepest == 0


def test_reentrancy_on_java_thread(fx):
    assert fx.recurseOnThread(Down(fx), 120) == 120


def test_reentrancy_1000_levels_with_bigger_stack():
    code = """
import os
from py4jni import JavaGateway
gw = JavaGateway(classpath=os.environ["P4J_FIXTURES_JAR"], jvm_options=["-Xss16m"])
fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures
class Down:
    def down(self, n):
        return 0 if n == 0 else fx.recurse(self, n)
    class Java:
        implements = ["org.py4jni.fixtures.CallbackFixtures$Recurser"]
import sys
sys.setrecursionlimit(10000)
print(fx.recurse(Down(), 1000), fx.recurseOnThread(Down(), 1000))
"""
    r = run_python(code)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == ["1000", "1000"]


@pytest.mark.inproc_only("socket mode: every level runs on a new Java and Python "
                        "thread with its own connections; nothing bounds a runaway depth")
def test_runaway_recursion_is_an_error_not_a_crash(fx):
    class Forever:
        def down(self, n):
            return fx.recurse(self, n + 2)  # never reaches 0

        class Java:
            implements = ["org.py4jni.fixtures.CallbackFixtures$Recurser"]

    with pytest.raises((RecursionError, Py4JJavaError)) as info:
        fx.recurse(Forever(), 5)
    text = str(info.value)
    assert ("RecursionError" in text or "StackOverflowError" in text
            or "recursion" in text)
    # and everything still works
    assert fx.recurse(Down(fx), 10) == 10


@pytest.mark.inproc_only("socket mode: every level runs on a new Java and Python "
                        "thread with its own connections; nothing bounds a runaway depth")
def test_runaway_recursion_caught_in_java(fx):
    class Forever:
        def down(self, n):
            return fx.recurse(self, n + 2)

        def run(self):
            fx.recurse(self, 5)

        class Java:
            implements = ["org.py4jni.fixtures.CallbackFixtures$Recurser", "java.lang.Runnable"]

    msg = fx.catching(Forever())  # Java's catch (Throwable t) around the whole descent
    assert msg.startswith(("org.py4jni.Py4JException", "java.lang.StackOverflowError"))
    assert "StackOverflowError" in msg or "RecursionError" in msg


def test_runaway_recursion_in_subprocess_exits_cleanly():
    code = """
import sys
from py4jni import JavaGateway, Py4JJavaError
import os
gw = JavaGateway(classpath=os.environ["P4J_FIXTURES_JAR"])
fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures
class Forever:
    def down(self, n):
        return fx.recurse(self, n + 2)
    class Java:
        implements = ["org.py4jni.fixtures.CallbackFixtures$Recurser"]
sys.setrecursionlimit(100000)
try:
    fx.recurse(Forever(), 5)
except (RecursionError, Py4JJavaError) as e:
    print("caught", type(e).__name__)
print(fx.recurse(Forever.__new__(Forever), -1))
"""
    r = run_python(code)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "caught" in r.stdout


# ---------------------------------------------------- Object and default methods

@pytest.mark.inproc_only(PY4J_PROXIES + " (equals sees another Java object)")
def test_object_methods_default(gw, fx):
    op = Add()
    assert fx.str(op) == str(op)  # no toString: Python's str()
    assert fx.hash(op) == fx.hash(op)
    assert fx.eq(op, op)
    assert not fx.eq(op, Add())


@pytest.mark.inproc_only(PY4J_PROXIES + " (equals sees another Java object)")
def test_object_methods_python_defined(fx):
    class Named:
        def __init__(self, n):
            self.n = n

        def toString(self):
            return f"Named({self.n})"

        def hashCode(self):
            return self.n

        def equals(self, other):
            return isinstance(other, Named) and other.n == self.n

        class Java:
            implements = ["java.lang.Runnable"]

    a, b = Named(3), Named(3)
    assert fx.str(a) == "Named(3)"
    assert fx.hash(a) == 3
    assert fx.eq(a, b)
    assert not fx.eq(a, Named(4))
    assert not fx.eq(a, "x")


@pytest.mark.inproc_only("socket mode: py4j's Java proxy sends default methods to Python too")
def test_default_interface_method(fx):
    class Plain:
        def name(self):
            return "plain"

        class Java:
            implements = ["org.py4jni.fixtures.CallbackFixtures$Greeter"]

    class Custom(Plain):
        def greet(self):
            return "custom " + self.name()

    assert fx.greet(Plain()) == "hello plain"
    assert fx.greet(Custom()) == "custom plain"


# ------------------------------------------------------------------ lifetime

def _collect_until(pred, fx, timeout=20.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        gc.collect()
        fx.gc()
        if pred():
            return True
    return False


def test_python_object_lives_while_java_holds_it(gw, fx):
    op = Add()
    ref = weakref.ref(op)
    fx.hold(op)
    del op
    gc.collect()
    fx.gc()
    assert ref() is not None  # Java still holds the proxy
    assert fx.applyHeld(2, 2) == 4
    fx.drop()
    assert _collect_until(lambda: ref() is None, fx), "Python object not released"


def test_temporary_proxy_is_released(fx, cb):
    op = Add()
    ref = weakref.ref(op)
    assert cb.apply(op, 1, 1) == 2
    del op
    assert _collect_until(lambda: ref() is None, fx)


@pytest.mark.inproc_only(PY4J_PROXIES)
def test_same_object_twice_is_one_proxy_and_no_leak(gw, fx):
    op = Add()
    assert fx.same(op, op)
    fx.hold(op)
    assert fx.same(op, fx.held())
    before_refs = sys.getrefcount(op)
    before_globals = gw._gateway_client.global_ref_count()
    before_cache = _py4jni.proxy_cache_size()
    for _ in range(2000):
        assert fx.same(op, op)
    assert sys.getrefcount(op) == before_refs
    assert gw._gateway_client.global_ref_count() == before_globals
    assert _py4jni.proxy_cache_size() == before_cache
    fx.drop()


def test_many_proxies_are_all_released(gw, fx, cb):
    refs = []
    for _ in range(300):
        op = Add()
        refs.append(weakref.ref(op))
        cb.apply(op, 1, 2)
    del op
    assert _collect_until(lambda: all(r() is None for r in refs), fx)
    if socket_mode(gw):  # Java's GC sent `g` for each proxy: the pool is empty again
        from py4jni.socket_mode import callbacks as socket_callbacks
        assert _collect_until(lambda: len(socket_callbacks.pool_of(gw)) == 0, fx)
    else:
        assert _collect_until(lambda: _py4jni.proxy_cache_size() == 0, fx)


# --------------------------------------------------------------- bad proxies

def test_interface_that_does_not_exist(cb):
    class Ghost:
        class Java:
            implements = ["com.example.DoesNotExist"]

    # py4jni's message in-process; py4j's server says "Invalid interface name: ..."
    with pytest.raises(Py4JError, match="(com.example.DoesNotExist.*does not exist)|"
                                        "(Invalid interface name: com.example.DoesNotExist)"):
        cb.isOperator(Ghost())


def test_class_that_is_not_an_interface(cb):
    class NotIface:
        class Java:
            implements = ["java.lang.String"]

    with pytest.raises(Py4JError, match="not an interface"):
        cb.isOperator(NotIface())


def test_implements_must_be_names(cb):
    class BadList:
        class Java:
            implements = [42]

    with pytest.raises(Py4JError, match="must list interface names"):
        cb.isOperator(BadList())


def test_implements_as_one_str_or_a_name_with_nul_is_refused(cb):
    # one str is not a list of names (its characters were looked up one by one); a NUL
    # ended the name early in C, so "java.lang.Runnable\0x" made a Runnable
    class OneStr:
        class Java:
            implements = "java.util.function.IntBinaryOperator"

    class WithNul:
        class Java:
            implements = ["java.util.function.IntBinaryOperator\0x"]

    for bad in (OneStr(), WithNul()):
        with pytest.raises(Py4JError):
            cb.isOperator(bad)
            pytest.fail(type(bad).__name__)


def test_empty_implements_is_not_a_proxy(cb):
    class Empty:
        class Java:
            implements = []

    with pytest.raises(Py4JError, match="cannot pass"):
        cb.isOperator(Empty())


@pytest.mark.inproc_only("a second in-process gateway in this process's JVM "
                         "(socket mode: test_socket_callbacks.py)")
def test_callback_after_gateway_shutdown(gw, fx):
    gw2 = JavaGateway(classpath=fixtures_jar())
    op = Add()
    gw2.jvm.org.py4jni.fixtures.CallbackFixtures.hold(op)
    gw2.shutdown()
    try:
        with pytest.raises(Py4JJavaError) as info:
            fx.applyHeld(1, 2)
        assert info.value.java_exception.getClass().getName() == "org.py4jni.Py4JException"
        assert "shut down" in info.value.java_exception.getMessage()
    finally:
        fx.drop()
    assert fx.recurse(Down(fx), 3) == 3  # the process and the main gateway live on


# ------------------------------------------------------ py4j API around callbacks

@pytest.mark.inproc_only("org.py4jni.PythonEntryPoint is py4jni's in-process class (socket "
                         "mode: GatewayServer.getPythonServerEntryPoint, test_socket_callbacks.py)")
def test_python_server_entry_point(gw, fx):
    class Entry:
        def ping(self, s):
            return "pong " + s

    gw2 = JavaGateway(classpath=fixtures_jar(), python_server_entry_point=Entry())
    try:
        assert fx.entryPointSet()
        assert fx.callEntryPoint("x") == "pong x"
        assert fx.callEntryPoint("y") == "pong y"
    finally:
        gw2.shutdown()
    assert not fx.entryPointSet()
    with pytest.raises(Py4JJavaError, match="no Python entry point"):
        fx.callEntryPoint("z")


def test_clientserver_alias(fx):
    from py4jni.clientserver import ClientServer, JavaParameters, PythonParameters

    class Entry:
        def ping(self, s):
            return s * 2

    cs = ClientServer(JavaParameters(auto_convert=True),
                      PythonParameters(propagate_java_exceptions=False),
                      python_server_entry_point=Entry(), classpath=fixtures_jar())
    try:
        assert cs._gateway_client.kind == "inproc"
        assert cs.start_callback_server() is True
        assert cs.jvm.org.py4jni.fixtures.CallbackFixtures.callEntryPoint("ab") == "abab"
        assert cs.jvm.org.py4jni.fixtures.Callbacks.apply(Add(), 1, 1) == 2
    finally:
        cs.shutdown()


def test_callback_server_parameters_accepted():
    from py4jni import CallbackServerParameters
    gw2 = JavaGateway(classpath=fixtures_jar(), start_callback_server=True,
                      callback_server_parameters=CallbackServerParameters(port=0))
    try:
        assert gw2.start_callback_server() is True
        assert gw2.jvm.org.py4jni.fixtures.Callbacks.apply(Add(), 2, 2) == 4
    finally:
        gw2.shutdown()


# A daemon thread in a Java call whose callbacks start failing at exit; its error, once
# noted on stdout, goes on to threading's hook (a traceback on stderr). `LATER` is empty
# or an atexit handler registered before py4jni's, so it runs after py4jni's exit handlers.
_EXIT_THREAD = """
import atexit, os, threading, time
LATER
from py4jni import JavaGateway
gw = JavaGateway(classpath=os.environ["P4J_FIXTURES_JAR"])
fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures
class Add:
    def apply(self, a, b): return a + b
    class Java:
        implements = ["org.py4jni.fixtures.Operator"]
def work():
    try:
        fx.applyOnThreads(Add(), 2, 10**7)
    except Exception as e:
        os.write(1, b"thread ran on: " + type(e).__name__.encode() + b"\\n")
        raise
t = threading.Thread(target=work, daemon=True)
t.start()
time.sleep(0.3)
print("exiting", flush=True)
"""


def test_callbacks_at_interpreter_exit():
    """A Java thread calling back while Python exits gets an exception; no crash."""
    r = run_python(_EXIT_THREAD.replace("LATER", ""))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "exiting" in r.stdout


def test_thread_back_from_java_at_exit_runs_no_python():
    """A thread whose Java call ends while Python exits waits to be stopped with the
    interpreter, instead of running Python (the call's error printed as the exiting
    thread finalises, which CPython 3.14 turns into a fatal error on stderr's lock)."""
    # The later handler lets the GIL go for 0.5 s: time enough for the thread to run on.
    r = run_python(_EXIT_THREAD.replace("LATER", "atexit.register(time.sleep, 0.5)"))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "exiting" in r.stdout
    assert "thread ran on" not in r.stdout, r.stdout


def test_thread_back_from_java_at_exit_can_still_be_joined():
    """The wait is bounded: a later atexit handler that joins the thread gets it back."""
    r = run_python(_EXIT_THREAD.replace("LATER", "atexit.register(lambda: t.join())"))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "thread ran on: Py4JJavaError" in r.stdout, (r.stdout, r.stderr[-3000:])


class _Raiser:
    """A Runnable whose run() raises the exception given."""

    class Java:
        implements = ["java.lang.Runnable"]

    def __init__(self, exc):
        self.exc = exc

    def run(self):
        raise self.exc


@pytest.mark.inproc_only("callbacks run on the calling thread in-process")
def test_keyboard_interrupt_in_callback_reaches_the_caller(gateway):
    fx = gateway.jvm.org.py4jni.fixtures
    with pytest.raises(KeyboardInterrupt):
        fx.Callbacks.run(_Raiser(KeyboardInterrupt()))
    assert gateway.jvm.java.lang.Math.abs(-2) == 2  # nothing left pending


@pytest.mark.inproc_only("callbacks run on the calling thread in-process")
def test_keyboard_interrupt_survives_java_catching_throwable(gateway):
    # FutureTask.run() catches every Throwable and returns normally.
    task = gateway.jvm.java.util.concurrent.FutureTask(_Raiser(KeyboardInterrupt()), None)
    with pytest.raises(KeyboardInterrupt):
        task.run()
    assert task.isDone()  # Java did see an exception, and unwound
    with pytest.raises(KeyboardInterrupt):  # a constructor returning normally too
        gateway.jvm.java.lang.Thread(_Raiser(KeyboardInterrupt())).run()


@pytest.mark.inproc_only("callbacks run on the calling thread in-process")
def test_system_exit_in_callback_keeps_its_code(gateway):
    task = gateway.jvm.java.util.concurrent.FutureTask(_Raiser(SystemExit(7)), None)
    with pytest.raises(SystemExit) as info:
        task.run()
    assert info.value.code == 7


@pytest.mark.inproc_only("callbacks run on the calling thread in-process")
def test_keyboard_interrupt_through_nested_callbacks(gateway):
    fut = gateway.jvm.java.util.concurrent.FutureTask
    after = []

    class Outer:
        class Java:
            implements = ["java.lang.Runnable"]

        def run(self):
            fut(_Raiser(KeyboardInterrupt()), None).run()  # caught by Java inside
            after.append("outer went on")

    with pytest.raises(KeyboardInterrupt):
        fut(Outer(), None).run()
    assert after == []


@pytest.mark.inproc_only("a Java thread has no Python caller to give it to")
def test_keyboard_interrupt_on_a_java_thread_stays_in_java(gateway):
    fx = gateway.jvm.org.py4jni.fixtures
    with pytest.raises(Py4JJavaError, match="KeyboardInterrupt"):
        fx.Callbacks.runOnThread(_Raiser(KeyboardInterrupt()))
    assert gateway.jvm.java.lang.Math.abs(-3) == 3  # nothing kept for this thread


# ------------------------------------------- py4j's exception type, when py4j is there

PY4J_TYPE_CHECK = '''
def check(gw):
    from py4jni import Py4JJavaError, is_instance_of
    cb = gw.jvm.org.py4jni.fixtures.Callbacks
    fx = gw.jvm.org.py4jni.fixtures.CallbackFixtures

    class Raiser:
        def apply(self, a, b):
            raise ValueError("bad %d" % (a + b))

        class Java:
            implements = ["org.py4jni.fixtures.Operator"]

    class Adder:
        def apply(self, a, b):
            return a + b

        class Java:
            implements = ["org.py4jni.fixtures.Operator"]

    seen = {"caught": fx.catchingApply(Raiser(), 3, 4)}
    try:
        cb.apply(Raiser(), 1, 2)
    except Py4JJavaError as exc:
        je = exc.java_exception
        seen.update(cls=je.getClass().getName(), message=je.getMessage(),
                    isinstance=is_instance_of(gw, je, "py4j.Py4JException"))
    seen["after"] = cb.apply(Adder(), 1, 2)  # callbacks keep working after errors
    return seen
'''


def _check_py4j_type(seen):
    prefix = "py4j.Py4JException: " + PY4J_PREFIX + "Traceback (most recent call last)"
    assert seen["caught"].startswith(prefix) and "ValueError: bad 7" in seen["caught"]
    assert seen["cls"] == "py4j.Py4JException" and seen["isinstance"] is True
    assert seen["message"].startswith(PY4J_PREFIX + "Traceback (most recent call last)")
    assert seen["message"].rstrip().endswith("ValueError: bad 3")
    assert seen["after"] == 3


def test_callback_error_is_py4js_exception_when_py4j_is_on_the_classpath(gw):
    # py4j's GatewayServer throws py4j.Py4JException; in-process py4jni does the same when
    # py4j's jar is on the classpath (PySpark: Spark's jars include it)
    if socket_mode(gw):
        namespace = {}
        exec(PY4J_TYPE_CHECK, namespace)
        _check_py4j_type(namespace["check"](gw))
        return
    from conftest import py4j_jar
    jar = py4j_jar()
    if jar is None:
        pytest.skip("py4j's jar is not installed")
    import json
    import os
    out = run_python(PY4J_TYPE_CHECK + (
        "import json\nfrom py4jni import JavaGateway\n"
        f"gw = JavaGateway(classpath={os.pathsep.join([fixtures_jar(), jar])!r})\n"
        "print('SEEN', json.dumps(check(gw)))\n"))
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("SEEN ")]
    assert lines, out.stdout + out.stderr
    _check_py4j_type(json.loads(lines[0][5:]))
