"""py4j's extension points in both transports: the get_return_value error hook,
input converters, JavaObject/JavaClass built by user code, and the GatewayClient-like
``gateway._gateway_client``."""
from __future__ import annotations

import datetime

import pytest

from py4jni import JavaClass, JavaObject, Py4JError, Py4JJavaError, java_gateway, protocol


class AnalysisError(Exception):
    """What a library (PySpark) turns a Java exception into."""

    def __init__(self, message: str, java_class: str) -> None:
        super().__init__(message)
        self.java_class = java_class


def capture(original):
    """PySpark's shape of handler: call the original, catch Py4JJavaError, inspect
    e.java_exception, raise the library's own exception."""
    seen = []

    def deco(*a, **kw):
        seen.append(a)
        try:
            return original(*a, **kw)
        except Py4JJavaError as e:
            name = e.java_exception.getClass().getName()
            raise AnalysisError(e.java_exception.getMessage(), name) from None

    return deco, seen


@pytest.fixture
def patched_hook():
    original = protocol.get_return_value
    deco, seen = capture(original)
    java_gateway.get_return_value = deco  # what PySpark's install_exception_handler does
    yield seen
    java_gateway.get_return_value = original


def test_replaced_get_return_value_sees_every_java_error(gateway, patched_hook):
    thrower = gateway.jvm.org.py4jni.fixtures.Thrower
    with pytest.raises(AnalysisError) as info:
        thrower.unchecked("boom")
    assert info.value.java_class == "java.lang.IllegalStateException"
    assert str(info.value) == "unchecked: boom"
    answer, client, target_id, name = patched_hook[-1]
    assert answer.startswith("xr") and client is gateway._gateway_client
    assert (target_id, name) == ("z:org.py4jni.fixtures.Thrower", "unchecked")
    with pytest.raises(AnalysisError):  # constructors too (py4j: target None)
        gateway.jvm.java.io.FileInputStream("/nonexistent/py4jni")
    assert patched_hook[-1][2:] == (None, "java.io.FileInputStream")
    assert gateway.jvm.java.lang.Math.max(1, 2) == 2  # success does not call the hook
    assert len(patched_hook) == 2


def test_hook_replaced_in_protocol_only(gateway):
    original = protocol.get_return_value
    deco, seen = capture(original)
    protocol.get_return_value = deco
    try:
        with pytest.raises(AnalysisError):
            gateway.jvm.org.py4jni.fixtures.Thrower.checked("io")
    finally:
        protocol.get_return_value = original
    assert len(seen) == 1


def test_hook_returning_a_value_is_the_call_result(gateway):
    original = java_gateway.get_return_value
    java_gateway.get_return_value = lambda *a, **kw: "swallowed"
    try:
        assert gateway.jvm.org.py4jni.fixtures.Thrower.unchecked("x") == "swallowed"
    finally:
        java_gateway.get_return_value = original


def test_default_hook_keeps_py4j_error(gateway):
    with pytest.raises(Py4JJavaError) as info:
        gateway.jvm.org.py4jni.fixtures.Thrower.unchecked("plain")
    assert info.value.java_exception.getMessage() == "unchecked: plain"
    assert str(info.value).startswith(
        "An error occurred while calling z:org.py4jni.fixtures.Thrower.unchecked.\n")


def test_java_class_and_object_built_by_user_code(gateway):
    client = gateway._gateway_client
    date_class = JavaClass("java.sql.Date", client)
    assert str(date_class.valueOf("2024-02-29")) == "2024-02-29"
    with pytest.raises(Py4JError, match="not a Java class"):
        JavaClass("no.such.Clazz", client)
    with pytest.raises(TypeError, match="gateway client"):
        JavaObject("o1", object())


@pytest.mark.socket_only("py4j's GatewayServer names its objects by id")
def test_java_object_from_socket_id(gateway):
    server = JavaObject("GATEWAY_SERVER", gateway._gateway_client)
    assert server.getListeningPort() == gateway._gateway_client.port


@pytest.mark.inproc_only("in-process ids are addresses")
def test_java_object_from_unknown_inproc_id(gateway):
    with pytest.raises(Py4JError, match="can be named in-process"):
        JavaObject("o1", gateway._gateway_client)


class DateConverter:
    """PySpark's converter: datetime.date -> java.sql.Date."""

    def can_convert(self, obj):
        return isinstance(obj, datetime.date)

    def convert(self, obj, gateway_client):
        Date = JavaClass("java.sql.Date", gateway_client)
        return Date.valueOf(obj.strftime("%Y-%m-%d"))


def test_registered_input_converter_is_applied(gateway):
    conv = DateConverter()
    protocol.register_input_converter(conv, prepend=True)
    old = gateway._auto_convert
    gateway._auto_convert = True
    try:
        sb = gateway.jvm.java.lang.StringBuilder()
        sb.append(datetime.date(2020, 1, 31))
        assert sb.toString() == "2020-01-31"
    finally:
        gateway._auto_convert = old
        protocol.INPUT_CONVERTER.remove(conv)


def test_gateway_client_looks_like_py4js(gateway):
    client = gateway._gateway_client
    assert isinstance(client, java_gateway.GatewayClient)
    assert client.address == gateway.gateway_parameters.address
    assert client.port == gateway.gateway_parameters.port
    assert isinstance(client.gateway_property, java_gateway.GatewayProperty)
    assert gateway.gateway_property is client.gateway_property
    assert len(client.gateway_property.pool) >= 0
    assert client.converters is (protocol.INPUT_CONVERTER if gateway._auto_convert else None)


def test_gateway_help_of_a_member(gateway):
    sb = gateway.jvm.java.lang.StringBuilder()
    page = java_gateway.gateway_help(gateway._gateway_client, sb.append, display=False)
    assert "append" in page and "reverse" not in page


def test_proxy_pool_bookkeeping_and_release_on_java_gc(gateway):
    # py4j: the pool holds each Python object Java holds, until Java's GC releases it.
    # In-process Java holds it through a JNI reference instead (documented deviation:
    # the pool stays empty); in both modes the object is released once Java drops it.
    import gc
    import time
    import weakref

    class Op:
        class Java:
            implements = ["org.py4jni.fixtures.Operator"]

        def apply(self, a, b):
            return a * b

    pool = gateway.gateway_property.pool
    holder = gateway.jvm.java.util.ArrayList()
    op = Op()
    ref = weakref.ref(op)
    holder.add(op)
    # The entry of this object by identity: Java's GC may release other tests' proxies
    # at any time, so the pool's size says nothing about this one.
    held = [pid for pid, obj in list(pool.dict.items()) if obj is op]
    del op
    gc.collect()
    assert ref() is not None  # Java holds it
    socket = gateway._gateway_client.kind == "socket"
    if socket:
        assert len(held) == 1
    else:
        assert held == [] and len(pool) == 0
    holder.clear()
    deadline = time.time() + 20
    while ref() is not None and time.time() < deadline:
        gateway.jvm.java.lang.System.gc()
        time.sleep(0.02)
        gc.collect()
    assert ref() is None, "Java dropped the proxy but the Python object lives on"
    assert all(pid not in pool for pid in held)
    if not socket:
        assert len(pool) == 0


@pytest.mark.socket_only("py4j's binary protocol is a socket feature")
def test_member_stream_reads_the_returned_channel(gateway):
    data = gateway.jvm.java.io.ByteArrayInputStream(b"py4j stream")
    with gateway.jvm.java.nio.channels.Channels.newChannel.stream(data) as guard:
        assert guard.read(11) == b"py4j stream"


@pytest.mark.inproc_only("in-process there is no binary protocol")
def test_member_stream_in_process_is_refused(gateway):
    with pytest.raises(Py4JError, match="stream"):
        gateway.jvm.java.lang.Math.abs.stream(1)


@pytest.mark.socket_only("raw py4j commands go to a GatewayServer")
def test_gateway_connection_and_client_speak_py4j(gateway):
    client = gateway._gateway_client
    conn = java_gateway.GatewayConnection(client.gateway_parameters)
    conn.start()
    try:
        command = "c\nz:java.lang.Math\nmax\n" + protocol.get_command_part(1) + \
            protocol.get_command_part(2) + protocol.END_COMMAND_PART
        answer = conn.send_command(command)
        assert answer == "yi2"
        assert protocol.get_return_value(answer, client) == 2
    finally:
        conn.close()
    own = java_gateway.GatewayClient(port=client.port)
    assert isinstance(own, java_gateway.GatewayClient)
    gw = java_gateway.JavaGateway(gateway_client=own)
    try:
        assert gw._mode == "socket" and gw.jvm.java.lang.Math.min(4, 3) == 3
        assert gw._gateway_client.port == client.port  # the client's own parameters
    finally:
        gw.close()
