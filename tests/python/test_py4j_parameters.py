"""What py4j's parameters do, in py4jni as in py4j: ``GatewayParameters(eager_load=)``
(a first call at construction, py4j's Py4JNetworkError and text when no server is
there), ``JavaGateway(java_process=)`` (kept as the gateway's attribute, left alone at
shutdown). Under the py4j switch: tests/python/test_launcher_rule.py."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import fixtures_jar, free_port, py4j_jar
from py4jni import GatewayParameters, JavaGateway, Py4JNetworkError

PY4J_TEXT = "An error occurred while trying to connect to the Java server (127.0.0.1:{})"
CHECK_JNI = os.environ.get("P4J_CHECK_JNI") == "1"  # as the session's JVM (conftest)
needs_py4j = pytest.mark.skipif(py4j_jar() is None, reason="py4j's jar is not installed")


@pytest.mark.parametrize("eager", [True, False])
def test_no_server_raises_py4js_error_at_construction_with_eager_load(eager):
    port = free_port()
    if eager:
        with pytest.raises(Py4JNetworkError) as info:
            JavaGateway(gateway_parameters=GatewayParameters(port=port, eager_load=True))
    else:
        gw = JavaGateway(gateway_parameters=GatewayParameters(port=port))
        with pytest.raises(Py4JNetworkError) as info:
            gw.jvm.java.lang.System.currentTimeMillis()
        gw.close()
    assert str(info.value) == PY4J_TEXT.format(port)
    assert isinstance(info.value.cause, ConnectionRefusedError)  # py4j's cause


@needs_py4j
@pytest.mark.parametrize("eager", [True, False])
def test_eager_load_to_a_listening_server(eager, py4j_server):
    gw = JavaGateway(gateway_parameters=GatewayParameters(port=py4j_server, eager_load=eager))
    try:
        assert gw.jvm.java.lang.Math.max(2, 3) == 3
    finally:
        gw.close()


def test_eager_load_in_process(inproc_gateway):
    # the JVM is in this process: the first call of eager_load is made and answered
    gw = JavaGateway(gateway_parameters=GatewayParameters(eager_load=True), mode="inproc",
                     classpath=fixtures_jar(), check_jni=CHECK_JNI)
    assert gw.jvm.java.lang.Math.max(2, 3) == 3
    gw.close()


def _sleeper() -> subprocess.Popen[bytes]:
    """A child that stands for a program's java process (py4j never touches it)."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


@needs_py4j
def test_java_process_is_kept_and_left_alone_at_shutdown():
    from py4jni import launch_gateway
    port, server = launch_gateway(classpath=fixtures_jar(), return_proc=True)
    proc = _sleeper()
    try:
        gw = JavaGateway(gateway_parameters=GatewayParameters(port=port), java_process=proc)
        assert gw.java_process is proc
        assert gw.jvm.java.lang.Math.max(2, 3) == 3
        gw.shutdown()  # py4j: asks the server to stop, leaves java_process as it is
        assert gw.java_process is proc and proc.poll() is None
        assert server.wait(timeout=30) is not None  # the server did stop
    finally:
        proc.kill()
        proc.wait()
        server.kill()
        server.wait()


def test_java_process_positionally_and_by_default(inproc_gateway):
    proc = object()
    gw = JavaGateway(None, False, 25334, False, False, False, None, None, None, proc,
                     mode="inproc", classpath=fixtures_jar(), check_jni=CHECK_JNI)
    assert gw.java_process is proc
    assert inproc_gateway.java_process is None
