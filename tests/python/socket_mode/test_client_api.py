"""py4j's public client methods on ``gateway._gateway_client``: send_command,
garbage_collect_object, shutdown_gateway, close, in both transports; socket mode is
compared with py4j's own GatewayClient on the same GatewayServer. (Pinned-thread mode:
tests/python/socket_mode/test_clientserver_socket.py.)"""
from __future__ import annotations

import os
import re

import pytest

from conftest import fixtures_jar, py4j_jar
from py4jni import JavaGateway, JavaObject, Py4JError, Py4JNetworkError
from py4jni.java_gateway import GatewayClient, GatewayParameters
from py4jni.protocol import get_return_value

MAX = "c\nz:java.lang.Math\nmax\ni3\ni7\ne\n"  # py4j's text of Math.max(3, 7)


def test_send_command_returns_py4js_answer_text(gateway):
    client = gateway._gateway_client
    if gateway._mode == "inproc":
        with pytest.raises(Py4JError, match="no py4j wire protocol"):
            client.send_command(MAX)
        return
    answer = client.send_command(MAX)
    assert answer == "yi7"
    assert get_return_value(answer, client, "z:java.lang.Math", "max") == 7
    # an object id in the answer names a server object, as py4j's
    answer = client.send_command("i\njava.lang.StringBuilder\nsab\ne\n")
    sb = get_return_value(answer, client)
    assert isinstance(sb, JavaObject) and sb.toString() == "ab"
    # an error answer is returned, not raised (the caller decodes it)
    assert client.send_command("c\nz:java.lang.Math\nnoSuchMethod\ne\n").startswith("x")


def test_send_command_matches_py4js_client(gateway):
    if gateway._mode == "inproc":
        pytest.skip("py4j's client needs a socket")
    from py4j.java_gateway import GatewayClient as Py4jClient
    from py4j.java_gateway import GatewayParameters as Py4jParameters
    theirs = Py4jClient(gateway_parameters=Py4jParameters(
        port=gateway.gateway_parameters.port))
    try:
        for command in [MAX, "c\nz:java.lang.Integer\nparseInt\ns12\ne\n",
                        "c\nz:java.lang.Integer\nparseInt\nsx\ne\n",
                        "c\nz:java.lang.Math\nnoSuchMethod\ne\n",
                        "c\nz:java.lang.String\nvalueOf\nd1.5\ne\n"]:
            ours, expected = gateway._gateway_client.send_command(command), \
                theirs.send_command(command)
            # object ids (of a thrown exception) differ: compare the rest
            assert re.sub(r"ro\d+", "ro#", ours) == re.sub(r"ro\d+", "ro#", expected), \
                command
    finally:
        theirs.close()


def test_garbage_collect_object_releases_on_the_java_side(gateway):
    client = gateway._gateway_client
    sb = gateway.jvm.java.lang.StringBuilder("kept")
    client.garbage_collect_object("t")  # py4j's fixed ids are never released
    client.garbage_collect_object("GATEWAY_SERVER")
    if gateway._mode == "inproc":
        with pytest.raises(Py4JError, match="released by id in-process"):
            client.garbage_collect_object(sb._target_id)
        assert sb.toString() == "kept"
        return
    target = sb._target_id
    assert JavaObject(target, client).toString() == "kept"
    client.garbage_collect_object(target)
    with pytest.raises(Py4JError):
        JavaObject(target, client).toString()
    assert gateway.jvm.java.lang.Math.max(1, 2) == 2  # the client goes on


def _new_gateway(gateway):
    """A gateway of its own in `gateway`'s mode (the shared one must stay open)."""
    if gateway._mode == "inproc":
        return JavaGateway(classpath=fixtures_jar())
    return JavaGateway(gateway_client=GatewayClient(
        gateway_parameters=GatewayParameters(port=gateway.gateway_parameters.port)))


def test_close(gateway):
    own = _new_gateway(gateway)
    client = own._gateway_client
    assert own.jvm.java.lang.Math.max(1, 5) == 5
    client.close()
    if gateway._mode == "inproc":  # gateway.close()'s effect: the client shuts down
        assert client.closed and not client.is_connected
        with pytest.raises(Py4JError):
            own.jvm.java.lang.Math.max(1, 5)
    else:  # py4j: connections close; the next call opens a new one
        assert not client.closed and client.is_connected
        assert own.jvm.java.lang.Math.max(1, 6) == 6
        client.close()
    assert gateway.jvm.java.lang.Math.max(2, 3) == 3  # the shared gateway is untouched


def _refuses_connections(port: int) -> bool:
    """Waits (up to a minute) until nothing accepts connections on `port`."""
    import socket
    import time
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        except OSError:
            return True
        time.sleep(0.1)
    return False


def test_shutdown_gateway_stops_the_server():
    if py4j_jar() is None:
        pytest.skip("py4j's jar is not installed")
    from py4j.java_gateway import launch_gateway
    port, proc = launch_gateway(classpath=os.pathsep.join([py4j_jar(), fixtures_jar()]),
                                die_on_exit=True, return_proc=True)
    try:
        client = GatewayClient(gateway_parameters=GatewayParameters(port=port))
        assert client.send_command(MAX) == "yi7"
        client.shutdown_gateway()  # asks the GatewayServer to stop
        assert _refuses_connections(port)
        assert client.closed and not client.is_connected
        with pytest.raises(Py4JNetworkError, match="not connected"):
            client.send_command(MAX)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_shutdown_gateway_inproc(inproc_gateway):
    own = JavaGateway(classpath=fixtures_jar())
    own._gateway_client.shutdown_gateway()  # as gateway.shutdown(): the JVM stays up
    assert own._gateway_client.closed
    with pytest.raises(Py4JError):
        own.jvm.java.lang.Math.max(1, 2)
    assert inproc_gateway.jvm.java.lang.Math.max(1, 2) == 2


def test_thread_connection_outside_pinned_mode(gateway):
    client = gateway._gateway_client
    assert client.get_thread_connection() is None
    with pytest.raises(Py4JError, match="pinned-thread"):
        client.set_thread_connection(object())


def test_stream_goes_through_send_command_binary(gateway):
    if gateway._mode == "inproc":
        pytest.skip("py4j's binary stream is a socket protocol")
    client = gateway._gateway_client
    answer, guard = client.send_command(MAX, binary=True)
    with guard:
        assert answer == "yi7"
    assert guard._connection.is_connected is False  # the guard closed its connection


def test_send_command_without_a_server_raises_as_py4j():
    from py4j.java_gateway import GatewayClient as Py4jClient
    from py4j.java_gateway import GatewayParameters as Py4jParameters
    from py4j.protocol import Py4JNetworkError as Py4jNetworkError

    from conftest import free_port
    port = free_port()  # nothing listens there
    with pytest.raises(Py4jNetworkError):
        Py4jClient(gateway_parameters=Py4jParameters(port=port)).send_command(MAX)
    with pytest.raises(Py4JNetworkError):
        GatewayClient(gateway_parameters=GatewayParameters(port=port)).send_command(MAX)
