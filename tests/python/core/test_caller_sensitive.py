"""Caller-sensitive JDK methods called from Python in-process see a Java caller.

Methods marked @CallerSensitive in the JDK ask the JVM which class called them. A JNI
call from a thread with no Java frame has none, so in-process they failed (NPE,
IllegalCallerException, the boot loader) where py4j's server, which calls through
Method.invoke from its own classes, succeeds. py4jni calls exactly these methods through
org.py4jni.CallerFrame (a class of its helper jar on the application class loader):
one test per caller-sensitive call that py4j's server answers, then the paths a call can take (static,
instance, primitive results, exceptions, cached call sites, other Python threads, a Java
thread calling back into Python) and that other methods keep the direct JNI call.
tests/python/py4j_compat/test_library_differential.py compares a wider corpus with py4j's server.
"""
from __future__ import annotations

import threading
from typing import Any

import pytest

from py4jni.protocol import Py4JJavaError

FRAME = "org.py4jni.CallerFrame"
PROBE = "org.py4jni.fixtures.CallerProbe"


@pytest.fixture
def jvm(inproc_gateway: Any) -> Any:
    return inproc_gateway.jvm


def _cls(jvm: Any, fqn: str) -> Any:
    obj = jvm
    for part in fqn.split("."):
        obj = getattr(obj, part)
    return obj


def _no_classes(g: Any) -> Any:
    return g.new_array(g.jvm.java.lang.Class, 0)


def _java_class(jvm: Any, name: str) -> Any:
    return jvm.java.lang.Class.forName(name)


def _system_loader(jvm: Any) -> Any:
    return jvm.java.lang.ClassLoader.getSystemClassLoader()


# --- the calls of the table ------------------------------------------------------

def test_logger_get_logger(jvm):
    log = jvm.java.util.logging.Logger.getLogger("py4jni.cs.test")
    assert log.getName() == "py4jni.cs.test"
    assert log.getClass().getName() == "java.util.logging.Logger"


def test_resource_bundle_get_bundle(jvm):
    b = jvm.java.util.ResourceBundle.getBundle(PROBE + "$Messages")
    assert b.getString("greeting") == "hello from the fixtures"  # found on the app loader
    with pytest.raises(Py4JJavaError) as e:
        jvm.java.util.ResourceBundle.getBundle("no.such.Bundle")
    assert e.value.java_exception.getClass().getName() == "java.util.MissingResourceException"


def test_service_loader_load(jvm):
    spi = _java_class(jvm, "java.nio.file.spi.FileSystemProvider")
    it = jvm.java.util.ServiceLoader.load(spi).iterator()
    found = []
    while it.hasNext():
        found.append(it.next().getScheme())
    assert "jar" in found  # jdk.zipfs's provider, as under py4j


def test_system_get_logger(jvm):
    log = jvm.java.lang.System.getLogger("py4jni.cs.system")
    assert log.getName() == "py4jni.cs.system"


def test_set_accessible_and_try_set_accessible(inproc_gateway, jvm):
    m = _java_class(jvm, PROBE).getMethod("depth", _no_classes(inproc_gateway))
    assert m.setAccessible(True) is None
    assert m.trySetAccessible() is True
    f = _java_class(jvm, PROBE).getField("answer")
    f.setAccessible(False)
    assert f.canAccess(None) is True
    # a JDK-internal member needs the same --add-opens as under py4j
    internal = _java_class(jvm, "java.lang.String").getDeclaredField("value")
    assert internal.trySetAccessible() is False
    with pytest.raises(Py4JJavaError) as e:
        internal.setAccessible(True)
    assert (e.value.java_exception.getClass().getName()
            == "java.lang.reflect.InaccessibleObjectException")


def test_method_handles_lookup(jvm):
    lookup = jvm.java.lang.invoke.MethodHandles.lookup()
    assert lookup.lookupClass().getName() == FRAME
    assert lookup.lookupClass().getClassLoader().equals(_system_loader(jvm))
    mt = jvm.java.lang.invoke.MethodType.methodType(_java_class(jvm, "java.lang.String"))
    mh = lookup.findVirtual(_java_class(jvm, "java.lang.Object"), "toString", mt)
    assert mh.type().toString() == "(Object)String"


def test_stack_walker_get_caller_class(jvm):
    sw = jvm.java.lang.StackWalker.getInstance(
        jvm.java.lang.StackWalker.Option.RETAIN_CLASS_REFERENCE)
    caller = sw.getCallerClass()
    assert caller.getName() == FRAME
    assert caller.getClassLoader().equals(_system_loader(jvm))


# --- more caller-sensitive methods and result kinds -----------------------------------------

def test_class_for_name_uses_the_application_loader(jvm):
    c = jvm.java.lang.Class.forName(PROBE)  # boot loader without a caller: not found
    assert c.getName() == PROBE
    with pytest.raises(Py4JJavaError) as e:
        jvm.java.lang.Class.forName("no.such.Clazz")
    assert e.value.java_exception.getClass().getName() == "java.lang.ClassNotFoundException"
    c2 = jvm.java.lang.Class.forName(PROBE, False, _system_loader(jvm))
    assert c2.equals(c)


def test_get_resource(jvm):
    c = _java_class(jvm, PROBE)
    assert c.getResource("CallerProbe.class").toString().endswith(
        "org/py4jni/fixtures/CallerProbe.class")
    assert c.getResource("no-such-resource") is None
    s = c.getResourceAsStream("CallerProbe.class")
    assert s.read() == 0xCA
    s.close()


def test_field_get_primitive_results_and_method_invoke(inproc_gateway, jvm):
    f = _java_class(jvm, PROBE).getField("answer")
    assert f.getInt(None) == 42                      # int result through invokeI
    assert f.getLong(None) == 42                     # long
    assert f.getDouble(None) == 42.0                 # double
    assert f.get(None) == 42                         # Object (an Integer)
    f.setInt(None, 43)                               # void, a primitive argument boxed
    assert f.getInt(None) == 43
    f.set(None, 42)
    m = _java_class(jvm, PROBE).getMethod("depth", _no_classes(inproc_gateway))
    args = inproc_gateway.new_array(jvm.java.lang.Object, 0)
    assert m.invoke(None, args) >= 1


def test_java_exception_is_rethrown_as_itself(inproc_gateway, jvm):
    m = _java_class(jvm, "java.lang.Integer").getMethod(
        "parseInt", _array_of(inproc_gateway, jvm.java.lang.Class,
                              [_java_class(jvm, "java.lang.String")]))
    args = _array_of(inproc_gateway, jvm.java.lang.Object, ["x"])
    with pytest.raises(Py4JJavaError) as e:
        m.invoke(None, args)  # Method.invoke itself is caller-sensitive
    assert (e.value.java_exception.getClass().getName()
            == "java.lang.reflect.InvocationTargetException")
    assert "NumberFormatException" in str(e.value)


def _array_of(g: Any, cls: Any, values: list) -> Any:
    a = g.new_array(cls, len(values))
    for i, v in enumerate(values):
        a[i] = v
    return a


# --- the paths a call takes ---------------------------------------------------------------

def test_cached_call_site_and_repeated_calls(jvm):
    get_logger = jvm.java.util.logging.Logger.getLogger  # one JavaMember, its site cached
    names = [get_logger(f"py4jni.cs.site{i % 2}").getName() for i in range(6)]
    assert names == ["py4jni.cs.site0", "py4jni.cs.site1"] * 3
    sw = jvm.java.lang.StackWalker.getInstance(
        jvm.java.lang.StackWalker.Option.RETAIN_CLASS_REFERENCE)
    caller = sw.getCallerClass
    assert {caller().getName() for _ in range(5)} == {FRAME}


def test_other_python_threads(jvm):
    out: list = []
    errors: list = []

    def work(i: int) -> None:
        try:
            out.append(jvm.java.util.logging.Logger.getLogger(f"py4jni.cs.t{i}").getName())
            out.append(jvm.java.lang.Class.forName(PROBE).getName())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sorted(out) == sorted([f"py4jni.cs.t{i}" for i in range(4)] + [PROBE] * 4)


class _CallsJava:
    """A java.util.function.Supplier whose get() calls caller-sensitive methods."""

    def __init__(self, jvm: Any) -> None:
        self.jvm = jvm

    def get(self) -> Any:
        jvm = self.jvm
        sw = jvm.java.lang.StackWalker.getInstance(
            jvm.java.lang.StackWalker.Option.RETAIN_CLASS_REFERENCE)
        return "|".join([jvm.java.util.logging.Logger.getLogger("py4jni.cs.cb").getName(),
                         jvm.java.lang.Class.forName(PROBE).getName(),
                         jvm.java.lang.invoke.MethodHandles.lookup().lookupClass().getName(),
                         sw.getCallerClass().getName()])

    class Java:
        implements = ["java.util.function.Supplier"]


def test_java_thread_calling_back_into_python(jvm):
    got = _cls(jvm, PROBE).onThread(_CallsJava(jvm))
    assert got == "|".join(["py4jni.cs.cb", PROBE, FRAME, FRAME])


def test_callback_on_the_calling_thread(jvm):
    sup = _CallsJava(jvm)
    assert sup.get() == _cls(jvm, PROBE).onThread(sup)


def test_ordinary_methods_keep_the_direct_call(inproc_gateway, jvm):
    # CallerProbe.depth() counts the Java frames on the stack: called by JNI straight
    # from Python it is the only one (no CallerFrame, no reflection frames).
    assert _cls(jvm, PROBE).depth() == 1
    m = _java_class(jvm, PROBE).getMethod("depth", _no_classes(inproc_gateway))
    via_reflection = m.invoke(None, inproc_gateway.new_array(jvm.java.lang.Object, 0))
    assert via_reflection > 1  # Method.invoke is caller-sensitive: through CallerFrame


def test_jdk_internal_implementation_goes_through_its_public_declaration(jvm):
    # JDK 22+: MemorySegment.reinterpret is caller-sensitive (a restricted method); the
    # object's class, jdk.internal.foreign.NativeMemorySegmentImpl, is not exported, so
    # CallerFrame invokes the public interface method, which dispatches to it. The JDK
    # names the caller in its first restricted-method warning of the process: a fresh
    # interpreter sees it.
    if jvm.java.lang.Runtime.version().feature() < 22:
        pytest.skip("java.lang.foreign's restricted methods are JDK 22+")
    from conftest import run_python
    done = run_python(
        "from py4jni import JavaGateway\n"
        "g = JavaGateway()\n"
        "seg = g.jvm.java.lang.foreign.MemorySegment.NULL.reinterpret(8)\n"
        "print(seg.byteSize(), seg.getClass().getName())\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["8", "jdk.internal.foreign.NativeMemorySegmentImpl"]
    assert "reinterpret has been called by org.py4jni.CallerFrame" in done.stderr
