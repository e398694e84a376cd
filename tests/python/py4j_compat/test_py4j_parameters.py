"""What py4j's parameters do, in py4jni as in py4j: ``GatewayParameters(eager_load=)``
(a first call at construction, py4j's Py4JNetworkError and text when no server is
there), ``JavaGateway(java_process=)`` (kept as the gateway's attribute, left alone at
shutdown). Under the py4j switch: tests/python/frameworks/test_launcher_rule.py."""
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


# -- the version module ----------------------------------------------------------------

def test_version_module_is_py4js_release():
    import py4j.version as theirs

    import py4jni.version
    assert py4jni.version.__version__ == theirs.__version__ == "0.10.9.9"


def test_version_under_the_switch(tmp_path):
    script = tmp_path / "version_program.py"
    script.write_text("import py4j, py4j.java_gateway\n"
                      "from py4j.version import __version__\n"
                      "from py4j import version\n"
                      "print(py4j.__version__, __version__, version.__version__,\n"
                      "      py4j.java_gateway.__name__, py4j.java_gateway is\n"
                      "      __import__('py4jni.java_gateway').java_gateway)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    out = subprocess.run([sys.executable, "-m", "py4jni", "run", str(script)],
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0.10.9.9"] * 3 + ["py4jni.java_gateway", "True"]


# -- collections, signals, compat --------------------------------------------------------

def test_java_list_pop_key_and_extend_other_list(gateway):
    lst = gateway.jvm.java.util.ArrayList()
    lst.extend(other_list=[0, 1, 2, 3, 4])
    lst.extend(other_list=gateway.jvm.java.util.Collections.nCopies(1, 5))
    assert list(lst) == [0, 1, 2, 3, 4, 5]
    assert lst.pop() == 5                 # py4j: key=None is the last element
    assert lst.pop(key=None) == 4
    assert lst.pop(key=0) == 0
    assert lst.pop(-1) == 3
    assert list(lst) == [1, 2]
    with pytest.raises(IndexError):
        lst.pop(key=2)


def test_make_id_and_strtobyte_as_py4js():
    from py4j import compat as their_compat
    from py4j import signals as their_signals

    from py4jni import compat, signals

    class Receiver:
        def method(self) -> None:
            pass

    r = Receiver()
    for func in (r.method, Receiver.method, print, [].append, None, 3):
        assert signals.make_id(func=func) == their_signals.make_id(func=func), func
    assert compat.strtobyte(s="a1=") == their_compat.strtobyte(s="a1=") == b"a1="


def test_python_proxy_pool_put_object():
    from py4jni.java_gateway import PythonProxyPool
    pool = PythonProxyPool()
    thing = object()
    pid = pool.put(object=thing)
    assert pool[pid] is thing
    assert pool.put(object=thing, force_id="t") == "t" and pool["t"] is thing


def test_accept_timeout_default_is_py4js():
    from py4j.clientserver import PythonParameters as TheirPython
    from py4j.java_gateway import CallbackServerParameters as TheirCallback

    from py4jni.clientserver import PythonParameters
    from py4jni.java_gateway import CallbackServerParameters
    assert CallbackServerParameters().accept_timeout == TheirCallback().accept_timeout == 5
    assert PythonParameters().accept_timeout == TheirPython().accept_timeout == 5
    assert CallbackServerParameters(accept_timeout=0.5).accept_timeout == 0.5


# -- constructors as py4j's own code and programs use them ------------------------------

def test_jvm_views_as_py4j_makes_them(gateway):
    from py4jni import java_import
    from py4jni.java_gateway import JavaPackage, JVMView
    from py4jni.protocol import DEFAULT_JVM_ID, DEFAULT_JVM_NAME, Py4JError
    client = gateway._gateway_client
    default = JVMView(client, jvm_name=DEFAULT_JVM_NAME, id=DEFAULT_JVM_ID)  # set_gateway_client
    assert default.java.lang.Math.max(1, 2) == 2 and default._id == "rj"
    made = gateway.new_jvm_view("mine")
    again = JVMView(gateway_client=client, jvm_name="mine", jvm_object=made._jvm_object)
    java_import(again, "java.util.concurrent.*")
    assert again.ConcurrentLinkedQueue().size() == 0
    assert again._id == "r" + made._jvm_object._target_id and again._jvm_name == "mine"
    # the default view does not see the other view's import: an unknown name is a package
    assert isinstance(default.ConcurrentLinkedQueue, JavaPackage)
    with pytest.raises(Py4JError, match="needs the id of a view or its jvm_object"):
        JVMView(client, "nothing")
    if gateway._mode == "socket":  # a view named by its id (the server's object id)
        by_id = JVMView(client, "mine", id=again._id)
        assert by_id.ConcurrentLinkedQueue().size() == 0


def test_java_package_as_py4j_makes_it(gateway):
    from py4jni.java_gateway import JavaPackage
    client = gateway._gateway_client
    util = JavaPackage("java.util", client)
    assert util.ArrayList().size() == 0
    assert JavaPackage("java", client, jvm_id="rj")._jvm_id == "rj"
    assert JavaPackage("java", gateway_client=client).util.concurrent._jvm_id is None


def test_java_member_object_and_class_as_py4j_makes_them(gateway):
    from py4jni import JavaClass, JavaMember, JavaObject
    client = gateway._gateway_client
    sb = gateway.jvm.java.lang.StringBuilder("a")
    append = JavaMember("append", sb, sb._target_id, client)  # py4j's get_method
    append("b")
    assert str(sb) == "ab" and append.name == "append" and append.container is sb
    math = JavaClass(fqn="java.lang.Math", gateway_client=client)
    assert JavaMember(name="max", container=math, target_id="z:java.lang.Math",
                      gateway_client=client)(3, 4) == 4
    assert JavaMember("abs", None, "z:java.lang.Math", client)(-2) == 2
    if gateway._mode == "socket":  # objects named by their id
        same = JavaObject(target_id=sb._target_id, gateway_client=client)
        assert JavaMember("length", None, sb._target_id, client)() == 2 == same.length()


@pytest.mark.socket_only("py4j's callback connections are sockets")
def test_callback_connection_as_py4js_callback_server_makes_it(gateway):
    import socket

    from py4jni.java_gateway import (CallbackConnection, CallbackServer,
                                     CallbackServerParameters, PythonProxyPool)
    pool, params = PythonProxyPool(), CallbackServerParameters(port=0)
    client = gateway._gateway_client
    server = CallbackServer(pool, client, callback_server_parameters=params)
    ours, java = socket.socketpair()
    conn = CallbackConnection(pool, None, ours, client, params, server)
    assert (conn.pool, conn.input, conn.socket, conn.gateway_client,
            conn.callback_server_parameters, conn.callback_server) == \
        (pool, None, ours, client, params, server)
    pid = pool.put(object())
    conn.start()
    java.sendall(f"g\n{pid}\ne\n".encode())  # Java released its proxy
    assert java.makefile("rb").readline() == b"!y\n" and pid not in pool
    java.close()
    conn.thread.join(timeout=30)
    assert not conn.thread.is_alive() and conn.socket is None


# -- enable_memory_management ----------------------------------------------------------

@needs_py4j
@pytest.mark.parametrize("managed", [True, False])
def test_enable_memory_management_socket(managed, py4j_server):
    # py4j: False leaves a dropped object in the server (its id still names it)
    import gc

    from py4jni import JavaObject, Py4JError
    gw = JavaGateway(gateway_parameters=GatewayParameters(
        port=py4j_server, enable_memory_management=managed))
    try:
        sb = gw.jvm.java.lang.StringBuilder("kept")
        target = sb._target_id
        del sb
        gc.collect()
        again = JavaObject(target, gw._gateway_client)
        if managed:
            with pytest.raises(Py4JError):
                again.toString()
        else:
            assert again.toString() == "kept"
    finally:
        gw.close()


@pytest.mark.parametrize("managed", [True, False])
def test_enable_memory_management_in_process(managed, inproc_gateway):
    gw = JavaGateway(gateway_parameters=GatewayParameters(enable_memory_management=managed),
                     mode="inproc", classpath=fixtures_jar(), check_jni=CHECK_JNI)
    client = gw._gateway_client
    new_sb = gw.jvm.java.lang.StringBuilder
    new_sb("warm-up")  # the class and its constructor's references, made once
    before = client.global_ref_count()
    for _ in range(10):
        new_sb("dropped")
    assert client.global_ref_count() - before == (0 if managed else 10)
    gw.close()
