"""Object lifetime: dropping the last Python reference releases the Java object."""
from __future__ import annotations

import ctypes
import gc
import time

import pytest

from py4jni import Py4JError


@pytest.mark.inproc_only("counts JNI global references of this process")
def test_dropped_objects_release_global_refs(gateway):
    client = gateway._gateway_client
    cls = gateway.jvm.java.lang.StringBuilder
    cls()  # warm the caches (class entries hold their own global refs)
    gc.collect()
    before = client.global_ref_count()
    for _ in range(100_000):
        sb = cls("x")
        sb.append(1)
    del sb
    gc.collect()
    # no growth: the loop may also see earlier tests' Python proxies released, once
    # Java's GC (which its allocations run) collects the Java objects holding them
    assert client.global_ref_count() <= before


@pytest.mark.inproc_only("counts JNI global references of this process")
def test_exceptions_and_results_release_refs(gateway):
    client = gateway._gateway_client
    lst = gateway.jvm.java.util.ArrayList()
    fx = gateway.jvm.org.py4jni.fixtures

    def round_trip():
        try:
            lst.get(5)
        except Py4JError as exc:
            str(exc)  # fetches the stack trace
        fx.Bytes.make(10)
        fx.Conversions.bigInteger()

    round_trip()  # warm: class and method caches hold global refs of their own
    gc.collect()
    round_trip()  # releases that earlier tests left queued are made by the next call
    gc.collect()
    before = client.global_ref_count()
    for _ in range(1000):
        round_trip()
    gc.collect()
    # A leak grows the count by >= 1000; releases of other tests' objects that still
    # arrive (a finalizer of an earlier test's proxy) may only lower it.
    assert client.global_ref_count() <= before


def test_detach_then_drop(gateway):
    sb = gateway.jvm.java.lang.StringBuilder("x")
    gateway.detach(sb)
    gateway.detach(sb)  # twice is harmless
    del sb


def test_every_use_of_a_detached_object_says_so(gateway):
    # each operation reads the object's handle pinned, and a cleared one as "detached"
    # (help() once reached Java with no target: "the target object is null")
    from py4jni.java_gateway import get_field, set_field
    jvm = gateway.jvm
    point = jvm.java.awt.Point(1, 2)
    gateway.detach(point)
    sb = jvm.java.lang.StringBuilder("x")
    gateway.detach(sb)
    arr = jvm.java.util.Arrays.copyOf(gateway.new_array(jvm.int, 2), 2)
    gateway.detach(arr)
    uses = {
        "call": lambda: sb.toString(),
        "dir": lambda: dir(sb),
        "help": lambda: gateway.help(sb, display=False),
        "get_field": lambda: get_field(point, "x"),
        "set_field": lambda: set_field(point, "x", 3),
        "argument": lambda: jvm.java.util.Objects.toString(sb),
        "array": lambda: arr[0],
        "array length": lambda: len(arr),
    }
    for name, use in uses.items():
        with pytest.raises(Py4JError, match="detached"):
            use()
            pytest.fail(name)


def test_results_outlive_their_member(gateway):
    append = gateway.jvm.java.lang.StringBuilder("a").append
    assert str(append("b")) == "ab"  # the member keeps its object alive


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks "
                "keepcost".split()]


def _malloc_in_use() -> int:
    """Bytes the C heap has handed out (glibc mallinfo2): unlike RSS, not moved by the
    Java heap growing."""
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = _MallInfo2
    info = libc.mallinfo2()
    return info.uordblks + info.hblkhd


@pytest.mark.inproc_only("register_natives and JNI global references are in-process")
def test_natives_and_callbacks_in_a_loop_do_not_grow(gateway):
    """Registering natives and making/dropping proxies again and again keeps memory flat
    (each registration once kept its method entries and closures forever)."""
    client = gateway._gateway_client
    codec = "org.py4jni.fixtures.NativeCodec"
    nc = gateway.jvm.org.py4jni.fixtures.NativeCodec
    coll = gateway.jvm.java.util.Collections
    lst = gateway.jvm.java.util.ArrayList()
    lst.add(2)
    lst.add(1)

    class Cmp:
        class Java:
            implements = ["java.util.Comparator"]

        def compare(self, a, b):
            return a - b

    def round_trip(i):
        gateway.register_natives(codec, {"greet": lambda s: s + str(i),
                                         "twice": lambda x: x * i})
        assert nc.greet("a") == "a" + str(i) and nc.twice(2) == 2 * i
        coll.sort(lst, Cmp())

    def settle():
        """Collects until the count holds still: the Cleaner gives dropped proxies back
        on its own thread, and queued releases are made by the next call."""
        last = -1
        for _ in range(50):
            gc.collect()
            gateway.jvm.java.lang.System.gc()
            time.sleep(0.02)
            now = client.global_ref_count()
            if now == last:
                return
            last = now

    for i in range(3000):  # warm: caches, the JIT compilers' arenas
        round_trip(i)
    settle()
    refs, heap = client.global_ref_count(), _malloc_in_use()
    for i in range(6000):
        round_trip(i)
    settle()
    # A leak grows the count by >= 6000; a release of an earlier round that the first
    # settle did not yet see may only lower it.
    assert client.global_ref_count() <= refs
    # 6000 rounds once kept ~110 MB of C heap; the JVM's own C heap (JIT arenas) moves
    # by up to ~15 MB between measurements.
    assert _malloc_in_use() - heap < 32 * 2**20
