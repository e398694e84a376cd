"""The per-call fast paths: the GIL kept for allowlisted short calls and released for
every other call, and the caches of resolved members (right overload every time)."""
from __future__ import annotations

import sysconfig
import threading

import pytest

from conftest import run_threads
from py4jni import Py4JError, Py4JJavaError


@pytest.mark.inproc_only("the GIL handoff of in-process calls")
def test_a_blocking_call_releases_the_gil(gateway):
    """Thread.sleep is no short call: while one thread sleeps in Java, another runs
    Python and sees it sleeping (impossible if the sleeping call kept the GIL)."""
    jvm = gateway.jvm
    box: dict = {}
    started = threading.Event()

    def sleeper():
        box["thread"] = jvm.java.lang.Thread.currentThread()
        started.set()
        try:
            jvm.java.lang.Thread.sleep(20000)
        except Py4JJavaError as exc:
            box["error"] = exc

    worker = threading.Thread(target=sleeper)
    worker.start()
    started.wait()
    seen = False
    while worker.is_alive() and not seen:
        seen = box["thread"].getState().toString() == "TIMED_WAITING"
    box["thread"].interrupt()
    worker.join()
    assert seen
    assert "InterruptedException" in str(box["error"])


def test_short_calls_from_threads_give_their_own_results(gateway):
    """Allowlisted calls (StringBuilder.append, Math, System) run with the GIL kept:
    several threads calling them at once still get exactly their own results."""
    jvm = gateway.jvm
    errors: list = []

    def work(k: int) -> None:
        try:
            sb = jvm.java.lang.StringBuilder()
            for i in range(300):
                assert sb.append(k) == sb  # the same Java object
                sb.append("-")
                assert jvm.java.lang.Math.max(i, k) == max(i, k)
                assert jvm.java.lang.System.currentTimeMillis() > 0
            assert sb.toString() == f"{k}-" * 300
            assert sb.length() == len(f"{k}-") * 300
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    run_threads(work, [(k,) for k in range(6)])
    assert errors == []


def test_objects_methods_given_values_and_objects(gateway):
    """java.util.Objects' methods with Object parameters keep the GIL only for JDK values
    (str, int, float, bool, None); given a Java object (whose methods may be user code)
    the same names release it. Both give Java's answers, from several threads at once."""
    objects = gateway.jvm.java.util.Objects
    errors: list = []

    def java_hash(text: str) -> int:  # String.hashCode of an ASCII text
        h = 0
        for ch in text:
            h = (31 * h + ord(ch)) & 0xFFFFFFFF
        return h - (1 << 32) if h >= 1 << 31 else h

    def work(k: int) -> None:
        try:
            sb = gateway.jvm.java.lang.StringBuilder(f"sb{k}")
            for i in range(200):
                text = f"t{k}-{i}"
                assert objects.hashCode(text) == java_hash(text)
                assert objects.hashCode(None) == 0
                assert objects.hashCode(i) == i  # Integer.hashCode
                assert objects.equals(text, text) and not objects.equals(text, i)
                assert objects.toString(2.5) == "2.5" and objects.isNull(None)
                assert objects.hashCode(sb) == sb.hashCode()  # not short: a Java object
                assert objects.toString(sb) == f"sb{k}"
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    run_threads(work, [(k,) for k in range(4)])
    assert errors == []


def test_short_call_errors_and_long_strings(gateway):
    sb = gateway.jvm.java.lang.StringBuilder("abc")
    with pytest.raises(Py4JJavaError, match="IndexOutOfBounds"):
        sb.charAt(10)  # an allowlisted call that throws
    big = "x" * 100_000  # past the short-call bound: the same call with the GIL released
    assert sb.append(big).length() == 100_003
    assert gateway.jvm.java.lang.String.valueOf(7) == "7"


def test_wait_on_a_string_builder_is_not_short(gateway):
    """Object.wait is declared by Object, not StringBuilder: it stays a released call
    (here it fails at once: the monitor is not held)."""
    sb = gateway.jvm.java.lang.StringBuilder()
    with pytest.raises(Py4JJavaError, match="IllegalMonitorState"):
        sb.wait(1)


@pytest.fixture
def fx(gateway):
    return gateway.jvm.org.py4jni.fixtures


def test_bound_member_picks_the_overload_of_each_call(gateway, fx):
    """One JavaMember (one call site) called with other argument types resolves the
    overload for each: its cached method applies only to the types it was resolved for."""
    ov = fx.Overloads()
    sb = gateway.jvm.java.lang.StringBuilder("q")
    lst = gateway.jvm.java.util.ArrayList()
    obj = ov.obj
    args = ["s", sb, lst, 1, "t", sb, None, lst, 2.5, "u"]
    fresh = [ov.obj(a) for a in args]  # a new JavaMember per call
    assert fresh[:4] == ["String", "CharSequence", "Object", "Object"]
    assert [obj(a) for a in args] == fresh
    assert [obj(a) for a in reversed(args)] == list(reversed(fresh))
    ref = ov.ref  # same letter, other classes: the class of the argument decides
    base, derived, more = fx.Base(), fx.Derived(), fx.MoreDerived()
    assert [ref(base), ref(derived), ref(more), ref(base)] == ["Base", "Derived", "Derived", "Base"]
    int_long = ov.intLong
    assert [int_long(1), int_long(2**40), int_long(3)] == ["int", "long", "int"]
    null_prim = ov.nulPrim
    assert [null_prim(1), null_prim("x"), null_prim(None), null_prim(2)] == [
        ov.nulPrim(1), ov.nulPrim("x"), ov.nulPrim(None), ov.nulPrim(2)]


def test_methods_of_one_object_in_turn(gateway, fx):
    """obj.method(...) starts from the object's last call site: each call still runs the
    method of its own name and overload."""
    sb = gateway.jvm.java.lang.StringBuilder()
    ov = fx.Overloads()
    for i in range(5):
        assert sb.append(i) == sb
        assert sb.length() == 2 * i + 1
        assert sb.append("-") == sb
        assert sb.indexOf("-") == 1
        assert (ov.obj("s"), ov.intOnly(i), ov.obj(sb), ov.intLong(i)) == (
            "String", "int", "CharSequence", "int")
    assert sb.toString() == "0-1-2-3-4-"
    system, math = gateway.jvm.java.lang.System, gateway.jvm.java.lang.Math
    for _ in range(3):
        assert (system.currentTimeMillis() > 0, system.nanoTime() != 0) == (True, True)
        assert (math.max(1, 2), math.min(1, 2), math.abs(-3)) == (2, 1, 3)


def test_same_name_on_other_classes(gateway, fx):
    """Members of one name on different classes never share a resolved method."""
    base, derived = fx.Base(), fx.Derived()
    fb, fd = base.overridden, derived.overridden
    for _ in range(3):
        assert (fb(), fd()) == (base.overridden(), derived.overridden())
    assert fb() != fd()
    jvm = gateway.jvm
    assert jvm.java.lang.Math.max(2, 3) == 3
    assert jvm.java.lang.Integer.max(2, 3) == 3
    assert jvm.java.lang.Math.max(2.5, 1.0) == 2.5
    sb, lst = jvm.java.lang.StringBuilder("ab"), jvm.java.util.ArrayList()
    lst.add("x")
    assert (sb.toString(), lst.toString()) == ("ab", "[x]")
    assert (sb.length(), lst.size()) == (2, 1)


def test_bound_member_shared_by_threads_with_other_types(fx):
    ov = fx.Overloads()
    obj = ov.obj
    sb = fx.Overloads()  # an Object argument
    wrong: list = []

    def work(arg, want):
        for _ in range(300):
            got = obj(arg)
            if got != want:
                wrong.append((arg, got))

    run_threads(work, [("s", "String"), (sb, "Object"), (7, "Object"), ("t", "String")])
    assert wrong == []


def test_cached_member_of_a_detached_object_raises(gateway):
    sb = gateway.jvm.java.lang.StringBuilder()
    append = sb.append
    append(1)
    gateway.detach(sb)
    with pytest.raises(Py4JError, match="detached"):
        append(2)
    with pytest.raises(Py4JError, match="detached"):
        sb.append(3)



def test_namespace_reads_its_dict_unless_the_class_shadows_it():
    """Namespaces (JVMView, JavaPackage) read cached names from __dict__ first; a data
    descriptor added to the class later still wins, as in any Python object."""
    from py4jni import _py4jni

    class NS(_py4jni.Namespace):
        def _resolve(self, name):
            self.__dict__[name] = name.upper()
            return name.upper()

    ns = NS()
    assert ns.abc == "ABC"  # resolved
    assert ns.abc == "ABC"  # from __dict__
    NS.abc = property(lambda self: "property")
    assert ns.abc == "property"
    del NS.abc
    assert ns.abc == "ABC"
    NS.abc = lambda self: "method"  # not a data descriptor: the instance __dict__ wins
    assert ns.abc == "ABC"
    with pytest.raises(AttributeError):
        ns.__no_such_dunder__


def test_whole_name_chain_is_cached(gateway):
    jvm = gateway.jvm
    assert jvm.java.lang.System is jvm.java.lang.System
    assert jvm.java.lang is jvm.java.lang
    assert jvm.java.lang.System.currentTimeMillis() > 0


def test_remembered_names_are_read_first_until_assigned_or_forgotten():
    """Namespace._remember: the name's later reads give the value (through a slot cache
    keyed by the name); an assignment, a data descriptor added to the class, or
    _forget_names end it."""
    from py4jni import _py4jni

    calls: list = []

    class NS(_py4jni.Namespace):
        def _resolve(self, name):
            calls.append(name)
            self._remember(name, name.upper())
            return name.upper()

    ns = NS()
    assert [ns.abc, ns.abc, ns.abc] == ["ABC"] * 3 and calls == ["abc"]
    assert getattr(ns, "ab" + "c") == "ABC"  # a str that is not the interned one
    assert ns._remembered() == {"abc": "ABC"}
    ns.abc = "mine"  # an assignment wins from now on
    assert ns.abc == "mine" and ns._remembered() == {}
    del ns.abc
    assert ns.abc == "ABC" and calls == ["abc", "abc"]
    NS.abc = property(lambda self: "property")  # a class change is seen at once
    assert ns.abc == "property"
    del NS.abc
    assert ns.abc == "ABC"
    for i in range(40):  # more names than slots: each still reads its own value
        assert getattr(ns, f"n{i}") == f"N{i}"
    assert [getattr(ns, f"n{i}") for i in range(40)] == [f"N{i}" for i in range(40)]
    ns._forget_names()
    assert ns.abc == "ABC" and calls.count("abc") == 3


def test_forgotten_imports_resolve_again(gateway):
    """java_import/remove_imports drop the view's remembered names (slots included)."""
    from py4jni import java_import
    from py4jni.java_gateway import remove_imports

    view = gateway.new_jvm_view()
    assert type(view.ArrayList).__name__ == "JavaPackage"  # not imported yet
    java_import(view, "java.util.ArrayList")
    assert view.ArrayList._fqn == "java.util.ArrayList"
    assert view.ArrayList().size() == 0
    remove_imports(view, "java.util.ArrayList")
    assert type(view.ArrayList).__name__ == "JavaPackage"


def test_a_static_method_is_one_member(gateway):
    """System.currentTimeMillis is made once per class and kept (its call site stays
    resolved); a class dropped with its members is collected (they make a cycle).
    Free-threaded builds give each read a JavaMember of its own, its site copied from the
    kept one: threads calling through one shared object would contend on its count."""
    import gc
    import weakref

    from py4jni import _py4jni

    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    system = gateway.jvm.java.lang.System
    assert (system.currentTimeMillis is system.currentTimeMillis) is not free_threaded
    assert system.currentTimeMillis() > 0
    assert system.nanoTime is not system.currentTimeMillis
    assert system.currentTimeMillis.name == "currentTimeMillis"
    assert system.currentTimeMillis.container is system
    cls = _py4jni.JavaClass("java.lang.Math", gateway._gateway_client)
    assert cls.max(2, 3) == 3 and cls.abs(-4) == 4
    assert (cls.max is cls.max) is not free_threaded
    ref = weakref.ref(cls)
    del cls
    gc.collect()
    assert ref() is None


def test_repeated_int_results_are_right_values(gateway):
    """Int results are shared while they repeat (a small cache by value): values that
    fall on the same cache entry still each come back as themselves."""
    math = gateway.jvm.java.lang.Math
    values = [v * 64 + 1000 for v in range(300)] + [2**40 + v for v in range(64)]
    values += [-v for v in values] + [2**63 - 1, -2**63, 2**31 - 1, -2**31]
    for _ in range(2):
        assert [math.addExact(v, 0) for v in values] == values
        assert [math.max(v, v) for v in values] == values
    big = 10**12 + 7
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        return  # no such cache where threads run at once (docs/architecture.md)
    assert math.addExact(big, 0) is math.addExact(big, 0)


def test_constructors_from_threads(gateway):
    """StringBuilder's constructors keep the GIL (allowlisted, like its methods): threads
    constructing at once get their own objects."""
    jvm = gateway.jvm
    errors: list = []

    def work(k: int) -> None:
        try:
            for i in range(200):
                assert jvm.java.lang.StringBuilder(f"{k}:{i}").toString() == f"{k}:{i}"
                assert jvm.java.lang.StringBuilder(i).capacity() == i
                assert jvm.java.lang.StringBuilder().length() == 0
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    run_threads(work, [(k,) for k in range(4)])
    assert errors == []


@pytest.mark.inproc_only("the GIL handoff of in-process calls")
def test_a_blocking_constructor_releases_the_gil(gateway, tmp_path):
    """A constructor that blocks in Java (a FileInputStream on a FIFO with no writer yet)
    releases the GIL: the Python thread that opens the writer runs meanwhile."""
    import os

    jvm = gateway.jvm
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)

    def writer() -> None:
        with open(fifo, "wb") as fh:
            fh.write(b"x")

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    stream = jvm.java.io.FileInputStream(fifo)  # returns once the writer opened it
    assert stream.read() == ord("x")
    stream.close()
    t.join(60)
    assert not t.is_alive()


def test_byte_buffer_accessors(gateway):
    """ByteBuffer.array() and the Buffer accessors (allowlisted short calls) answer as
    Java does, exceptions included."""
    bb = gateway.jvm.java.nio.ByteBuffer.allocate(16)
    bb.put(3, 7)
    assert bb.array()[3] == 7 and len(bb.array()) == 16
    assert (bb.capacity(), bb.position(), bb.limit(), bb.remaining()) == (16, 0, 16, 16)
    assert (bb.hasArray(), bb.isDirect(), bb.isReadOnly(), bb.arrayOffset()) == (
        True, False, False, 0)
    with pytest.raises(Py4JJavaError, match="ReadOnlyBuffer"):
        bb.asReadOnlyBuffer().array()
    with pytest.raises(Py4JJavaError, match="UnsupportedOperation"):
        gateway.jvm.java.nio.ByteBuffer.allocateDirect(8).array()


def test_bytes_results_read_on_each_calling_thread(gateway):
    """A byte[] result is read on the thread that made the call (in-process it is that
    thread's JNI local reference), declared byte[] or Object: four threads, small results
    and ones read without the GIL (64 KiB and over), each gets its own content."""
    fixture = gateway.jvm.org.py4jni.fixtures.Bytes
    make, make_object = fixture.make, fixture.makeObject  # byte[], and Object
    expected = {n: bytes(i & 0xFF for i in range(n)) for n in (0, 1, 1000, 70_000)}
    errors: list = []

    def work(sizes):
        try:
            for _ in range(50):
                for n in sizes:
                    for f in (make, make_object):
                        got = f(n)
                        if got != expected[n]:
                            errors.append((n, len(got)))
        except Exception as exc:  # reported below, not lost on the thread
            errors.append(exc)

    run_threads(work, [((0, 1000),), ((70_000, 1),), ((1000, 70_000),), ((1, 0),)])
    assert errors == []
