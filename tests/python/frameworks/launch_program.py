"""A py4j program that launches its own JVM, as programs on PyPI do (tests/python/
test_launch.py runs it): ``subprocess.Popen(["java", "-cp", ..., LaunchMain, "0"])``,
the port read from the child's stdout, then a retry loop of
``JavaGateway(gateway_parameters=GatewayParameters(port=P, eager_load=True),
java_process=process)`` on Py4JNetworkError. Each scenario prints what a user sees
(one ``name value`` line per observation); ``where`` lines say where the JVM ran.

Arguments: the class path of py4j's jar and the fixture jar, the two flavour jars,
then the scenarios to run.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from py4j.java_gateway import GatewayParameters, JavaGateway
from py4j.protocol import Py4JError, Py4JNetworkError

BASE, FLAVOUR1, FLAVOUR2 = sys.argv[1:4]
MAIN = "org.py4jni.fixtures.launch.LaunchMain"


def say(name: str, value: object) -> None:
    print(name, value, flush=True)


def launch(flavour: str, *args: str, text: bool = True, **kw: object) -> subprocess.Popen:
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") \
        if os.environ.get("JAVA_HOME") else "java"
    return subprocess.Popen([java, "-cp", os.pathsep.join([BASE, flavour]), "-Dlaunch.prop=p1",
                             MAIN, "0", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=text, **kw)


def connect(proc: subprocess.Popen, port: int | None = None) -> tuple[JavaGateway, int]:
    if port is None:
        port = int(proc.stdout.readline().split()[1])
    for attempt in range(50):
        try:
            gw = JavaGateway(gateway_parameters=GatewayParameters(port=port, eager_load=True),
                             java_process=proc)
            return gw, port
        except Py4JNetworkError:
            time.sleep(0.05 * (attempt + 1))
    raise SystemExit("no gateway")


def where(gw: JavaGateway, proc: subprocess.Popen) -> None:
    jvm_pid = gw.entry_point.pid()
    say("where", "this-process" if jvm_pid == os.getpid() else
        "child" if jvm_pid == proc.pid else "elsewhere")
    say("pid-is-python", proc.pid == os.getpid())


def calls() -> None:
    proc = launch(FLAVOUR1, "a b")
    gw, port = connect(proc)
    where(gw, proc)
    say("isinstance", isinstance(proc, subprocess.Popen))
    say("stderr", proc.stderr.readline().strip())
    say("add", gw.entry_point.add(40, 2))
    say("flavour", gw.entry_point.flavour())
    say("args", gw.entry_point.args())
    say("next", [gw.entry_point.next(), gw.entry_point.next()])
    say("property", gw.entry_point.property("launch.prop"))
    say("java_process", gw.java_process is proc)
    say("poll", proc.poll())
    gw.entry_point.print("printed by a call")
    say("stdout", proc.stdout.readline().strip())
    proc.stdin.write("echo hello\n")
    proc.stdin.flush()
    say("stdout", proc.stdout.readline().strip())
    gw.close()
    proc.stdin.write("return\n")
    proc.stdin.flush()
    say("wait", proc.wait(timeout=60))
    say("rest", proc.stdout.read().split())
    say("returncode", proc.returncode)


def exits() -> None:
    proc = launch(FLAVOUR1)
    gw, port = connect(proc)
    proc.stdin.write("exit 3\n")
    proc.stdin.flush()
    say("exit-wait", proc.wait(timeout=60))
    say("exit-rest", proc.stdout.read().split())
    proc = launch(FLAVOUR1)
    gw, port = connect(proc)
    try:
        gw.entry_point.exit(4)
        say("exit-call", "returned")
    except Py4JError:
        say("exit-call", "Py4JError")
    say("exit-call-wait", proc.wait(timeout=60))


def signals() -> None:
    proc = launch(FLAVOUR1)
    gw, port = connect(proc)
    proc.kill()
    say("kill-wait", proc.wait(timeout=60))
    say("kill-rest", proc.stdout.read().split())
    proc = launch(FLAVOUR1)
    gw, port = connect(proc)
    proc.terminate()
    say("terminate-wait", proc.wait(timeout=60))
    say("terminate-rest", proc.stdout.read().split())
    proc = launch(FLAVOUR1)
    gw, port = connect(proc)
    os.kill(proc.pid, signal.SIGKILL)  # as programs do with proc.pid
    say("os-kill-wait", proc.wait(timeout=60))


def throws() -> None:
    proc = launch(FLAVOUR1, text=False)
    gw, port = connect(proc)
    proc.stdin.write(b"throw\n")
    proc.stdin.flush()
    out, err = proc.communicate(timeout=60)
    say("throw-returncode", proc.returncode)
    say("throw-stderr", [line for line in err.decode().splitlines()
                         if line.startswith("Exception in thread")])


def two() -> None:
    one = launch(FLAVOUR1)
    other = launch(FLAVOUR2)
    gw1, port1 = connect(one)
    gw2, port2 = connect(other)
    say("two-flavours", [gw1.entry_point.flavour(), gw2.entry_point.flavour()])
    say("two-next", [gw1.entry_point.next(), gw1.entry_point.next(), gw2.entry_point.next()])
    say("two-ports-differ", port1 != port2)
    for proc in (one, other):
        proc.stdin.write("return\n")
        proc.stdin.flush()
    say("two-wait", [one.wait(timeout=60), other.wait(timeout=60)])


def leaves() -> None:
    proc = launch(FLAVOUR1)
    gw, port = connect(proc)
    proc.stdin.write("daemon\n")
    proc.stdin.flush()
    say("main-daemon", proc.stdout.readline().split()[1])
    gw.close()
    proc.stdin.write("leave\n")  # main returns; the server's thread runs on
    proc.stdin.flush()
    say("leave-stdout", proc.stdout.readline().strip())
    try:
        proc.wait(timeout=1.0)
        say("leave-running", False)
    except subprocess.TimeoutExpired:
        say("leave-running", True)
    gw, _ = connect(proc, port)
    say("leave-add", gw.entry_point.add(2, 3))
    gw.shutdown()  # py4j's shutdown command: the server, its last thread, ends
    say("leave-wait", proc.wait(timeout=60))
    say("leave-rest", proc.stdout.read().split())


def spawn() -> None:
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") \
        if os.environ.get("JAVA_HOME") else "java"
    out_r, out_w = os.pipe()
    in_r, in_w = os.pipe()
    pid = os.posix_spawnp(java, [java, "-cp", os.pathsep.join([BASE, FLAVOUR1]), MAIN, "0"],
                          dict(os.environ), file_actions=[
                              (os.POSIX_SPAWN_DUP2, in_r, 0), (os.POSIX_SPAWN_DUP2, out_w, 1)])
    os.close(out_w)
    os.close(in_r)
    out = os.fdopen(out_r)
    port = int(out.readline().split()[1])
    gw = JavaGateway(gateway_parameters=GatewayParameters(port=port))
    say("spawn-add", gw.entry_point.add(1, 2))
    say("spawn-pid-is-python", pid == os.getpid())
    os.write(in_w, b"exit 7\n")
    _, status = os.waitpid(pid, 0)
    say("spawn-waitpid", os.waitstatus_to_exitcode(status))
    out.close()
    os.close(in_w)


def tool() -> None:
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") \
        if os.environ.get("JAVA_HOME") else "java"
    done = subprocess.run([java, "-cp", BASE, "org.py4jni.fixtures.launch.ToolMain"],
                          capture_output=True, text=True)
    say("tool-returncode", done.returncode)
    say("tool-in-this-process", done.stdout.split()[1] == str(os.getpid()))


def unserved() -> None:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    try:
        JavaGateway(gateway_parameters=GatewayParameters(port=port, eager_load=True))
        say("unserved", "connected")
    except Py4JNetworkError as exc:
        say("unserved", str(exc).split(" (")[0])


for scenario in sys.argv[4:]:
    globals()[scenario]()
