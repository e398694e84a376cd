"""The py4j API surface of the gateway: views, packages, classes, members, fields,
entry points, help/dir, detach, shutdown."""
from __future__ import annotations

import pytest

from py4jni import (JavaClass, JavaGateway, JavaMember, JavaObject, JavaPackage, JVMView,
                    Py4JError, get_field, get_java_class, get_method, is_instance_of,
                    java_import, set_field)
from py4jni.java_gateway import remove_imports

FX = "org.py4jni.fixtures"


def test_static_call_and_constructor(gateway):
    t = gateway.jvm.java.lang.System.currentTimeMillis()
    assert isinstance(t, int) and t > 1_600_000_000_000
    sb = gateway.jvm.java.lang.StringBuilder("a")
    sb.append(42).append("b")
    assert str(sb) == "a42b"


def test_names_resolve_to_packages_and_classes(gateway):
    assert isinstance(gateway.jvm, JVMView)
    assert isinstance(gateway.jvm.java, JavaPackage)
    assert isinstance(gateway.jvm.java.util, JavaPackage)
    assert isinstance(gateway.jvm.java.util.ArrayList, JavaClass)
    assert isinstance(gateway.jvm.no.such.pkg, JavaPackage)
    with pytest.raises(TypeError):
        gateway.jvm.no.such.pkg()


def test_java_lang_is_imported_by_default(gateway):
    assert gateway.jvm.Math.max(3, 9) == 9
    assert gateway.jvm.String.valueOf(12) == "12"


def test_java_import_single_and_star(gateway):
    view = gateway.new_jvm_view("imports")
    assert isinstance(view.ArrayList, JavaPackage)  # not imported yet
    java_import(view, "java.util.ArrayList")
    assert isinstance(view.ArrayList, JavaClass)
    java_import(view, "java.util.concurrent.*")
    assert isinstance(view.ConcurrentHashMap, JavaClass)
    remove_imports(view, "java.util.ArrayList")
    assert isinstance(view.ArrayList, JavaPackage)


def test_views_are_independent(gateway):
    a = gateway.new_jvm_view("a")
    b = gateway.new_jvm_view("b")
    java_import(a, "java.util.LinkedList")
    assert isinstance(a.LinkedList, JavaClass)
    assert isinstance(b.LinkedList, JavaPackage)


def test_nested_class_and_static_fields(gateway):
    counter = gateway.jvm.org.py4jni.fixtures.Counter
    inner_cls = getattr(gateway.jvm.org.py4jni.fixtures, "Counter$Inner")
    assert isinstance(inner_cls, JavaClass)
    assert inner_cls().name() == "Counter.Inner"
    assert counter.Inner.KIND == "inner"
    assert gateway.jvm.org.py4jni.fixtures.Fields.CONSTANT == 42


def test_static_fields_are_read_on_every_access(gateway):
    fields = gateway.jvm.org.py4jni.fixtures.Fields
    fields.resetStatics()
    assert fields.si == 13
    set_field(fields, "si", 99)
    assert fields.si == 99
    fields.resetStatics()
    assert fields.si == 13


def test_unknown_static_member(gateway):
    with pytest.raises(Py4JError, match="nosuch"):
        gateway.jvm.java.lang.System.nosuch


def test_instance_fields(gateway):
    f = gateway.jvm.org.py4jni.fixtures.Fields()
    assert get_field(f, "i") == 3
    assert get_field(f, "str") == "hello"
    assert get_field(f, "c") == "c"
    assert get_field(f, "f") == 0.5
    set_field(f, "i", 77)
    set_field(f, "str", "world")
    set_field(f, "obj", f)
    assert get_field(f, "i") == 77 and get_field(f, "str") == "world"
    assert get_field(f, "obj") == f
    with pytest.raises(Py4JError):
        get_field(f, "missing")
    with pytest.raises(Py4JError):
        set_field(f, "i", "not an int")


@pytest.mark.inproc_only("py4j's server assigns final fields through reflection errors differently")
def test_final_field_cannot_be_set(gateway):
    f = gateway.jvm.org.py4jni.fixtures.Fields()
    with pytest.raises(Py4JError, match="final"):
        set_field(f, "finalInt", 1)


def test_members_are_java_members(gateway):
    sb = gateway.jvm.java.lang.StringBuilder()
    m = sb.append
    assert isinstance(m, JavaMember)
    m("xy")
    assert sb.toString() == "xy"
    assert get_method(sb, "length")() == 2
    with pytest.raises(AttributeError):
        sb.__nosuchdunder__


def test_object_protocol(gateway):
    counter_cls = gateway.jvm.org.py4jni.fixtures.Counter
    a, b, c = counter_cls(5), counter_cls(5), counter_cls(6)
    assert a == b and a != c          # equals
    assert hash(a) == hash(b)         # hashCode
    assert str(a) == "Counter(5)"     # toString
    assert repr(a).startswith("JavaObject id=")
    assert bool(a) is True
    with pytest.raises(TypeError):
        a()
    assert "increment" in dir(a)


def test_is_instance_of_and_get_java_class(gateway):
    lst = gateway.jvm.java.util.ArrayList()
    assert is_instance_of(gateway, lst, "java.util.List")
    assert is_instance_of(gateway, lst, gateway.jvm.java.util.Collection)
    assert not is_instance_of(gateway, lst, "java.util.Map")
    cls = get_java_class(gateway.jvm.java.util.ArrayList)
    assert isinstance(cls, JavaObject)
    assert cls.getName() == "java.util.ArrayList"
    assert is_instance_of(gateway, lst, cls)
    # py4j: any other JavaObject stands for its class
    assert is_instance_of(gateway, lst, gateway.jvm.java.util.ArrayList())
    assert not is_instance_of(gateway, lst, gateway.jvm.java.util.HashMap())
    assert is_instance_of(gateway, gateway.jvm.java.util.LinkedList(), "java.util.AbstractList")
    with pytest.raises(Py4JError, match="java_class must be"):
        is_instance_of(gateway, lst, 42)


def test_help_and_dir(gateway):
    sb = gateway.jvm.java.lang.StringBuilder()
    page = gateway.help(sb, display=False)
    assert "StringBuilder" in page and "append" in page
    page = gateway.help(sb, pattern="rev*", display=False)
    assert "reverse" in page and "append" not in page
    names = dir(gateway.jvm.java.lang.Integer)
    assert "MAX_VALUE" in names and "parseInt" in names


def test_detach_releases_early(gateway):
    sb = gateway.jvm.java.lang.StringBuilder()
    gateway.detach(sb)
    with pytest.raises(Py4JError, match="detached"):
        sb.toString()


def test_second_gateway_shares_the_jvm(inproc_gateway):
    from conftest import fixtures_jar
    gw2 = JavaGateway(classpath=fixtures_jar(), entry_point=f"{FX}.EntryPoint")
    try:
        assert gw2.entry_point.hello("py") == "hello py"
        assert gw2.add(2, 3) == 5  # unknown gateway attributes go to the entry point
        assert gw2.jvm.java.lang.Math.abs(-4) == 4
    finally:
        gw2.shutdown()
    with pytest.raises(Py4JError, match="shut down"):
        gw2.jvm.java.lang.Math.abs(-4)
    # the first gateway is unaffected
    assert inproc_gateway.jvm.java.lang.Math.abs(-4) == 4


def test_second_gateway_with_other_classpath_is_refused(inproc_gateway):
    with pytest.raises(Py4JError, match="already running"):
        JavaGateway(classpath="/nonexistent.jar")


def test_objects_after_shutdown_raise(inproc_gateway):
    from conftest import fixtures_jar
    gw2 = JavaGateway(classpath=fixtures_jar())
    sb = gw2.jvm.java.lang.StringBuilder("x")
    cls = gw2.jvm.java.lang.Integer
    gw2.shutdown()
    with pytest.raises(Py4JError):
        sb.toString()
    with pytest.raises(Py4JError):
        cls.valueOf(3)
    with pytest.raises(Py4JError):
        gw2.jvm.java.util.HashMap
    del sb  # releasing after shutdown must not crash


def test_transport_capabilities_drive_the_binding(gateway):
    """The binding asks the client's caps (bridge/client.h), never its mode: each transport
    advertises what it has, and the gateway holds the matching Python-side transport."""
    from py4jni import _py4jni
    client = gateway._gateway_client
    inproc_only = (_py4jni.CAP_SHARED_REFS | _py4jni.CAP_CLASS_ARG | _py4jni.CAP_CALLBACKS |
                   _py4jni.CAP_NATIVES | _py4jni.CAP_BUFFERS | _py4jni.CAP_LOCK_HELD)
    assert gateway._transport.mode == client.kind
    if client.kind == "inproc":
        assert client.caps == inproc_only and client.bulk
        assert gateway.java_gateway_server is None
    else:
        assert client.caps == _py4jni.CAP_TEXT_PROXIES and not client.bulk
        assert gateway.java_gateway_server is not None
    # an object id names the object through the transport's own spelling
    sb = gateway.jvm.java.lang.StringBuilder()
    assert sb._target_id.startswith("o")


def test_java_lang_class_is_a_class_object_usable_as_an_argument(gateway):
    # PyFlink's typeinfo: getClass().isAssignableFrom(JavaClass._java_lang_class); in
    # socket mode py4j's server names classes by fqn, so the Class object is asked for
    jlc = gateway.jvm.java.util.ArrayList._java_lang_class
    assert jlc.getName() == "java.util.ArrayList"
    assert gateway.jvm.java.util.List._java_lang_class.isAssignableFrom(jlc)
    assert not jlc.isAssignableFrom(gateway.jvm.java.util.List._java_lang_class)
    assert gateway.jvm.java.util.ArrayList().getClass().equals(jlc)
