"""The launcher rule of the py4j switch (py4jni/_switch.py ``mode_for``): under
``python -m py4jni run`` in in-process mode, a program that starts a JVM of its own with
a py4j server and connects to it by port is connected to that JVM in socket mode, with
one line on stderr saying so; no second JVM is embedded. A port nothing listens on
keeps the embedded JVM."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import clientserver_jar, free_port, py4j_jar

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

# No server on the port: the gateway is the embedded JVM, and nothing is printed.
NOTHING_LISTENS = """
import os, sys
from py4j.java_gateway import JavaGateway, GatewayParameters
gw = JavaGateway(gateway_parameters=GatewayParameters(port=int(sys.argv[1])))
print("mode", gw._mode, "this-process",
      gw.jvm.java.lang.ProcessHandle.current().pid() == os.getpid())
"""


def _run(tmp_path, program: str, *args: str) -> subprocess.CompletedProcess[str]:
    app = tmp_path / "app.py"
    app.write_text(program)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    return subprocess.run([sys.executable, "-m", "py4jni", "run", str(app), *args],
                          capture_output=True, text=True, timeout=120, env=env)


def _rule_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("py4jni: ")]


def test_a_gateway_to_the_programs_own_jvm_is_socket_mode_said_in_one_line(tmp_path):
    cp = os.pathsep.join([py4j_jar(), clientserver_jar()])
    out = _run(tmp_path, OWN_JVM, cp)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split() == ["mode", "socket", "own-jvm", "True", "this-process",
                                  "False", "sum", "42", "child-exit", "0"], out.stdout
    lines = _rule_lines(out.stderr)
    assert len(lines) == 1, out.stderr
    assert "socket mode" in lines[0] and "instead of embedding" in lines[0], lines


def test_a_clientserver_to_the_programs_own_jvm_is_socket_mode(tmp_path):
    cp = os.pathsep.join([py4j_jar(), clientserver_jar()])
    out = _run(tmp_path, OWN_CLIENTSERVER, cp, str(free_port()))
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split() == ["mode", "socket", "hello", "hello", "own",
                                  "this-process", "False", "child-exit", "0"], out.stdout
    assert len(_rule_lines(out.stderr)) == 1, out.stderr


def test_a_port_nothing_listens_on_keeps_the_embedded_jvm(tmp_path):
    out = _run(tmp_path, NOTHING_LISTENS, str(free_port()))
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split() == ["mode", "inproc", "this-process", "True"], out.stdout
    assert _rule_lines(out.stderr) == [], out.stderr
