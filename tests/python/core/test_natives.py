"""Python-implemented Java `native` methods: gateway.register_natives.

Fixtures: org.py4jni.fixtures.NativeCodec and NativeShutdown (tests/java). Bindings
last for the process, so every test registers what it calls (re-registering replaces).
"""
from __future__ import annotations

import gc
import threading
import weakref

import pytest

from conftest import fixtures_jar
from py4jni import JavaGateway, Py4JError, Py4JJavaError

CODEC = "org.py4jni.fixtures.NativeCodec"


@pytest.fixture
def gw(inproc_gateway):
    return inproc_gateway


@pytest.fixture
def nc(gw):
    return gw.jvm.org.py4jni.fixtures.NativeCodec


def test_every_primitive_type(gw, nc):
    gw.register_natives(CODEC, {
        "notZ": lambda b: not b,
        "incB": lambda b: b + 1,
        "upC": lambda c: c.upper(),
        "negS": lambda s: -s,
        "twice": lambda x: 2 * x,
        "addJ": lambda a, b: a + b,
        "halfF": lambda f: f / 2,
        "mulD": lambda a, b: a * b,
    })
    assert nc.notZ(True) is False and nc.notZ(False) is True
    assert nc.incB(-128) == -127 and nc.incB(126) == 127
    assert nc.upC("x") == "X"
    assert nc.negS(-32767) == 32767
    assert nc.twice(-21) == -42 and nc.twice(2**30 - 1) == 2**31 - 2
    assert nc.addJ(2**62, 2**61) == 2**62 + 2**61
    assert nc.halfF(0.5) == 0.25
    assert nc.mulD(1.5, -2.0) == -3.0


def test_arguments_arrive_with_python_types(gw, nc):
    seen = []

    def mixed(a, b, c, d, e, f, g, h, i):
        seen.append((a, b, c, d, e, f, g, h, i))
        return "|".join(type(x).__name__ for x in (a, b, c, d, e, f, g, h, i))

    gw.register_natives(CODEC, {"mixed": mixed})
    assert nc.mixed(1, 2**40, 0.5, "s", True, "c", 0.1, 3, 4) == \
        "int|int|float|str|bool|str|float|int|int"
    assert seen == [(1, 2**40, 0.5, "s", True, "c", 0.1, 3, 4)]  # 0.1f reads as 0.1


def test_strings_bytes_and_objects(gw, nc):
    gw.register_natives(CODEC, {
        "greet": lambda s: None if s is None else "hi " + s,
        "reverse": lambda b: None if b is None else bytes(reversed(b)),
        "echo": lambda o: o,
    })
    text = "wörld \U0001F600 \x00 end"
    assert nc.greet(text) == "hi " + text
    assert nc.greet(None) is None
    assert nc.reverse(b"\x00\x01\xfe") == b"\xfe\x01\x00"
    assert nc.reverse(bytes(100000)) == bytes(100000)
    assert nc.reverse(None) is None
    sb = gw.jvm.java.lang.StringBuilder("q")
    assert nc.echo(sb).toString() == "q"
    assert nc.echo(7) == 7 and nc.echo("s") == "s" and nc.echo(None) is None


def test_arrays(gw, nc):
    def squares(arr):
        n = nc.length(arr)
        out = nc.newInts(n)
        for i in range(n):
            nc.setInt(out, i, nc.getInt(arr, i) ** 2)
        return out

    gw.register_natives(CODEC, {"squares": squares})
    assert nc.sumSquares(nc.range(5)) == 0 + 1 + 4 + 9 + 16


def test_instance_native_receives_the_object(gw, nc):
    def describe(this, x):
        return f"{this.getClass().getSimpleName()}({this.base()}) {x}"

    gw.register_natives(CODEC, {"describe": describe})
    assert nc.describeWith(5, 7) == "NativeCodec(5) 7"
    assert nc(9).describe(1) == "NativeCodec(9) 1"


def test_void_native(gw, nc):
    sunk = []
    gw.register_natives(CODEC, {"sink": lambda x: sunk.append(x)})
    nc.sink(3)
    nc.sink(4)
    assert sunk == [3, 4]


def test_java_loop_and_threads(gw, nc):
    gw.register_natives(CODEC, {"twice": lambda x: 2 * x})
    assert nc.loop(100000) == 2 * sum(range(100000))
    assert nc.twiceOnThread(21) == 42
    results = []

    def worker():
        results.append(nc.loop(1000))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [2 * sum(range(1000))] * 4


def test_overloads_need_a_signature(gw, nc):
    with pytest.raises(Py4JError, match=r"overloaded.*encode\(I\)I.*encode\(Ljava/lang/String;\)I"):
        gw.register_natives(CODEC, {"encode": lambda x: 0})
    gw.register_natives(CODEC, {"encode(I)I": lambda x: x + 1,
                                "encode(Ljava/lang/String;)I": lambda s: len(s)})
    assert nc.encode(41) == 42
    assert nc.encode("abc") == 3


def test_unknown_name_and_bad_arity(gw):
    with pytest.raises(Py4JError, match="declares no native method 'nope'.*twice"):
        gw.register_natives(CODEC, {"nope": lambda: 0})
    with pytest.raises(Py4JError, match="must accept 1 positional argument"):
        gw.register_natives(CODEC, {"twice": lambda a, b: 0})
    with pytest.raises(Py4JError, match="receiver comes first.*must accept 2 positional arguments"):
        gw.register_natives(CODEC, {"describe": lambda x: ""})
    with pytest.raises(TypeError, match="must be callable"):
        gw.register_natives(CODEC, {"twice": 42})
    with pytest.raises(Py4JError, match="declares no native methods"):
        gw.register_natives("org.py4jni.fixtures.Counter", {"size": lambda: 0})
    with pytest.raises(Py4JError, match="not found"):
        gw.register_natives("com.example.Missing", {"x": lambda: 0})
    # *args callables accept any arity
    gw.register_natives(CODEC, {"twice": lambda *a: 2 * a[0]})


def test_callable_raising(gw, nc):
    def bad(x):
        raise KeyError(f"no {x}")

    gw.register_natives(CODEC, {"twice": bad})
    msg = nc.catchingTwice(5)
    assert msg.startswith("org.py4jni.Py4JException: An exception was raised by the "
                          "Python Proxy. Return Message: Traceback")
    assert "KeyError: 'no 5'" in msg
    with pytest.raises(Py4JJavaError, match="KeyError"):
        nc.twice(1)


def test_wrong_results(gw, nc):
    gw.register_natives(CODEC, {"twice": lambda x: None, "incB": lambda b: 300,
                                "greet": lambda s: 5, "upC": lambda c: ""})
    assert "None cannot be returned as Java int" in nc.catchingTwice(1)
    with pytest.raises(Py4JJavaError, match="out of range for Java byte"):
        nc.incB(1)
    with pytest.raises(Py4JJavaError, match="cannot convert an int.*java.lang.String"):
        nc.greet("x")
    with pytest.raises(Py4JJavaError, match="cannot be a Java char"):
        nc.upC("x")


def test_unregistered_native_is_java_error(nc):
    with pytest.raises(Py4JJavaError, match="UnsatisfiedLinkError"):
        nc.unregistered()


def test_native_after_gateway_shutdown(gw):
    gw2 = JavaGateway(classpath=fixtures_jar())
    gw2.register_natives("org.py4jni.fixtures.NativeShutdown", {"value": lambda: 7})
    ns = gw.jvm.org.py4jni.fixtures.NativeShutdown
    assert ns.value() == 7
    gw2.shutdown()
    msg = ns.catching()
    assert msg.startswith("org.py4jni.Py4JException") and "shut down" in msg
    # a live gateway can bind it again
    gw.register_natives("org.py4jni.fixtures.NativeShutdown", {"value": lambda: 8})
    assert ns.value() == 8


def test_register_with_a_javaclass(gw, nc):
    gw.register_natives(nc, {"twice": lambda x: x * 2})
    assert nc.twice(4) == 8


def test_natives_nest_with_callbacks(gw, nc):
    """A native calling back into Java that calls the native again."""
    depth = []

    def twice(x):
        depth.append(x)
        return 2 * x if x <= 0 else nc.twice(x - 1) + 2

    gw.register_natives(CODEC, {"twice": twice})
    assert nc.twice(50) == 100
    assert len(depth) == 51


def test_replaced_implementation_is_freed(gw, nc):
    class Impl:
        def __init__(self, k):
            self.k = k

        def __call__(self, x):
            return self.k * x

    first = Impl(3)
    gone = weakref.ref(first)
    gw.register_natives(CODEC, {"twice": first})
    assert nc.twice(5) == 15
    del first
    gw.register_natives(CODEC, {"twice": Impl(4)})
    gc.collect()
    assert gone() is None
    assert nc.twice(5) == 20


def test_rebinding_inside_its_own_call(gw, nc):
    """The running implementation is replaced under its feet: it finishes, then goes."""
    refs = []

    def first(x):
        gw.register_natives(CODEC, {"twice": lambda y: 100 * y})
        return x + 1

    refs.append(weakref.ref(first))
    gw.register_natives(CODEC, {"twice": first})
    del first
    assert nc.twice(1) == 2
    gc.collect()
    assert refs[0]() is None
    assert nc.twice(1) == 100


@pytest.mark.parametrize("cls", ["java.lang.Thread", "java.sql.Timestamp",
                                 "org.py4jni.PythonProxyHandler"])
def test_jdk_and_helper_classes_are_refused(gw, cls):
    with pytest.raises(Py4JError, match="register_natives refuses " + cls):
        gw.register_natives(cls, {"currentThread": lambda: None})
    # Class lookups still work afterwards.
    assert gw.jvm.java.lang.Thread.currentThread() is not None


def test_keyboard_interrupt_in_a_native_reaches_the_caller(gw, nc):
    def interrupted(*_):
        raise KeyboardInterrupt

    gw.register_natives(CODEC, {"twice": interrupted})
    with pytest.raises(KeyboardInterrupt):
        nc.twice(1)
    gw.register_natives("org.py4jni.fixtures.NativeShutdown", {"value": interrupted})
    with pytest.raises(KeyboardInterrupt):  # NativeShutdown.catching() catches Throwable
        gw.jvm.org.py4jni.fixtures.NativeShutdown.catching()
    gw.register_natives(CODEC, {"twice": lambda x: 2 * x})
    assert nc.twice(4) == 8
