"""Socket mode against py4j's own GatewayServer: launching, auth, faults, big payloads."""
from __future__ import annotations

import os
import socket
import time

import pytest

from conftest import fixtures_jar, free_port, py4j_jar
from py4jni import (GatewayParameters, JavaGateway, Py4JAuthenticationError, Py4JError,
                    Py4JNetworkError, launch_gateway)

pytestmark = pytest.mark.skipif(py4j_jar() is None, reason="py4j's jar is not installed")


def test_launch_gateway_returns_port_and_token():
    port, token, proc = launch_gateway(classpath=fixtures_jar(), enable_auth=True,
                                       die_on_exit=True, return_proc=True)
    try:
        assert port > 0 and token
        gw = JavaGateway(gateway_parameters=GatewayParameters(port=port, auth_token=token))
        assert gw.jvm.java.lang.Math.max(1, 2) == 2
        gw.close()
    finally:
        proc.kill()
        proc.wait()



def test_server_not_running_is_a_quick_network_error():
    port = free_port()
    gw = JavaGateway(gateway_parameters=GatewayParameters(port=port))
    t0 = time.monotonic()
    with pytest.raises(Py4JNetworkError) as info:
        gw.jvm.java.lang.Math.abs(-1)
    assert time.monotonic() - t0 < 5
    assert str(port) in str(info.value) and "127.0.0.1" in str(info.value)


def test_wrong_auth_token():
    port, token, proc = launch_gateway(enable_auth=True, die_on_exit=True, return_proc=True)
    try:
        gw = JavaGateway(gateway_parameters=GatewayParameters(port=port, auth_token="wrong"))
        with pytest.raises(Py4JAuthenticationError):
            gw.jvm.java.lang.Math.abs(-1)
        gw2 = JavaGateway(gateway_parameters=GatewayParameters(port=port))
        with pytest.raises(Py4JAuthenticationError):
            gw2.jvm.java.lang.Math.abs(-1)
    finally:
        proc.kill()
        proc.wait()


def test_server_killed_mid_session():
    port, proc = launch_gateway(classpath=fixtures_jar(), die_on_exit=True, return_proc=True)
    gw = JavaGateway(gateway_parameters=GatewayParameters(port=port, read_timeout=10))
    assert gw.jvm.java.lang.Math.abs(-3) == 3
    proc.kill()
    proc.wait()
    with pytest.raises(Py4JNetworkError):
        gw.jvm.java.lang.Math.abs(-3)
    with pytest.raises(Py4JNetworkError):  # and again: fails clearly, no hang
        gw.jvm.java.lang.Math.abs(-3)


def test_read_timeout_is_honoured():
    port, proc = launch_gateway(die_on_exit=True, return_proc=True)
    try:
        gw = JavaGateway(gateway_parameters=GatewayParameters(port=port, read_timeout=0.5))
        t0 = time.monotonic()
        with pytest.raises(Py4JNetworkError, match="timed out"):
            gw.jvm.java.lang.Thread.sleep(60000)
        assert time.monotonic() - t0 < 30  # ended by the time-out, not by the call's end
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.socket_only("multi-megabyte byte[] through base64 on the wire")
def test_multi_megabyte_bytes_both_ways(gateway):
    data = os.urandom(3 * 1024 * 1024)
    assert gateway.jvm.org.py4jni.fixtures.Bytes.echo(data) == data
    assert gateway.jvm.org.py4jni.fixtures.Bytes.echo(b"") == b""
    assert len(gateway.jvm.java.nio.ByteBuffer.allocate(16384).array()) == 16384


@pytest.mark.socket_only("escaping of the text protocol")
def test_strings_with_protocol_characters(gateway):
    for s in ["\n", "\r\n", "\\n", "\\", "e\n", "!x", "a\nb\rc\\d", "\x00", "\U0001f600\n"]:
        assert gateway.jvm.org.py4jni.fixtures.Strings.echo(s) == s


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="mode"):
        JavaGateway(mode="carrier-pigeon")


def test_javagateway_launch_gateway_and_shutdown_stops_the_server():
    gw = JavaGateway.launch_gateway(classpath=fixtures_jar())  # die_on_exit: test_py4j_parity
    proc = gw.java_process
    assert gw.jvm.org.py4jni.fixtures.Strings.echo("hi") == "hi"
    gw.shutdown()
    assert proc.poll() is not None  # shutdown() stopped (or killed) the server process
    with pytest.raises(Py4JError):
        gw.jvm.java.lang.Math.abs(-1)


def test_invalid_utf8_in_answer_is_py4jerror():
    """A peer answering a string that is not UTF-8 gives Py4JError, not UnicodeDecodeError."""
    import threading
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def serve():
        conn, _ = srv.accept()
        with conn, conn.makefile("rb") as f:
            while True:
                lines = []
                while (line := f.readline()) not in (b"e\n", b""):
                    lines.append(line.rstrip(b"\n"))
                if not line:
                    return
                if lines[:2] == [b"r", b"u"]:  # class resolution: java, java.lang, ...
                    name = lines[2]
                    conn.sendall(b"!yc" + name + b"\n" if name == b"java.lang.String"
                                 else b"!yp\n")
                else:  # the call: a string answer that is not UTF-8
                    conn.sendall(b"!ysab\xff\xfecd\n")

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    gw = JavaGateway(gateway_parameters=GatewayParameters(port=srv.getsockname()[1],
                                                          read_timeout=10))
    try:
        with pytest.raises(Py4JError, match="not valid UTF-8"):
            gw.jvm.java.lang.String.valueOf(1)
    finally:
        gw.close()
        srv.close()
        t.join(10)


def test_shutdown_stops_a_gateway_server_close_does_not():
    """py4j's rule: shutdown() stops the GatewayServer (even one this gateway did not
    launch), close() only closes this gateway's connections."""
    port, proc = launch_gateway(classpath=fixtures_jar(), die_on_exit=True, return_proc=True)
    try:
        first = JavaGateway(gateway_parameters=GatewayParameters(port=port))
        assert first.jvm.java.lang.Math.max(1, 2) == 2
        first.close()
        with pytest.raises(Py4JError):
            first.jvm.java.lang.Math.max(1, 2)
        second = JavaGateway(gateway_parameters=GatewayParameters(port=port))
        assert second.jvm.java.lang.Math.max(3, 2) == 3  # the server survived close()
        second.shutdown()
        deadline = time.monotonic() + 30  # the server stops listening once it has answered
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
            except OSError:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the GatewayServer still accepts connections after shutdown()")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_launched_process_stays_readable_after_shutdown():
    gw = JavaGateway.launch_gateway(classpath=fixtures_jar())
    gw.shutdown()
    assert gw.java_process is not None and gw.java_process.poll() is not None
