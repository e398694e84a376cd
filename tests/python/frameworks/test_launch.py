"""A program's own ``java`` launch taken over in-process (py4jni/_launch.py), against the
same program run with a real child.

tests/python/frameworks/launch_program.py is a py4j program as they are written on PyPI: it
Popens ``java -cp <py4j>:<fixture>:<flavour> org.py4jni.fixtures.launch.LaunchMain 0``,
reads the port from the child's stdout and retries ``JavaGateway(GatewayParameters(
port=P, eager_load=True), java_process=proc)`` on Py4JNetworkError. It runs twice under
``python -m py4jni run``: with ``PY4JNI_LAUNCH=child`` (every launch a real child, the
gateways socket mode) and with the rule (its launches taken over), and each scenario's
observations (poll/wait/returncode, stdout and stderr lines, System.exit from main and
from a call, kill/terminate/os.kill, an exception out of main, main returning while its
server runs on, two launches with different class paths at once, os.posix_spawn with
os.waitpid, a tool run by subprocess, a port nothing serves) must be the same, and what
stock py4j gives.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import fixtures_jar, py4j_jar

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD_TESTS = os.path.dirname(fixtures_jar())
FIXTURE = os.path.join(BUILD_TESTS, "py4jni-launch-fixture.jar")
FLAVOURS = [os.path.join(BUILD_TESTS, f"py4jni-launch-flavour{i}.jar") for i in (1, 2)]
SCENARIOS = ["calls", "exits", "signals", "throws", "leaves", "two", "spawn", "tool",
             "unserved"]

pytestmark = pytest.mark.skipif(py4j_jar() is None or not os.path.exists(FIXTURE),
                                reason="py4j's jar was not found at configure time")


def run(launch: str, *scenarios: str) -> tuple[dict[str, list[str]], str]:
    """launch_program.py's observations (name -> values in order) and its stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    env["PY4JNI_LAUNCH"] = launch
    out = subprocess.run([sys.executable, "-m", "py4jni", "run",
                          os.path.join(HERE, "launch_program.py"),
                          os.pathsep.join([py4j_jar() or "", FIXTURE]), *FLAVOURS,
                          *scenarios], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    seen: dict[str, list[str]] = {}
    for line in out.stdout.splitlines():
        name, _, value = line.partition(" ")
        seen.setdefault(name, []).append(value)
    return seen, out.stderr


@pytest.fixture(scope="module")
def both() -> tuple[dict[str, list[str]], dict[str, list[str]], str]:
    """(real children, taken over, the taken-over run's stderr): one run each."""
    child, _ = run("child", *SCENARIOS)
    taken, err = run("auto", *SCENARIOS)
    return child, taken, err


def same(both: tuple[dict[str, list[str]], dict[str, list[str]], str], *names: str) -> dict[str, list[str]]:
    child, taken, _ = both
    for name in names:
        assert taken.get(name) == child.get(name), (name, child.get(name), taken.get(name))
    return taken


def test_the_launch_runs_in_this_process_and_a_real_child_elsewhere(both):
    child, taken, err = both
    assert child["where"] == ["child"] and taken["where"] == ["this-process"]
    assert taken["pid-is-python"] == ["False"]  # pid is the placeholder's, never ours
    assert "socket mode" not in err  # no gateway of the taken-over run went by socket


def test_calls_stdout_stdin_and_the_end_of_main(both):
    seen = same(both, "isinstance", "stderr", "add", "flavour", "args", "next", "property",
                "java_process", "poll", "stdout", "wait", "rest", "returncode")
    assert seen["add"] == ["42"] and seen["flavour"] == ["one"] and seen["args"] == ["0 a b"]
    assert seen["next"] == ["[1, 2]"] and seen["property"] == ["p1"]
    assert seen["isinstance"] == ["True"] and seen["java_process"] == ["True"]
    assert seen["stderr"] == ["STARTED"]
    # a line a call printed, then one main printed for a stdin command
    assert seen["stdout"] == ["printed by a call", "hello"]
    assert seen["poll"] == ["None"] and seen["wait"] == ["0"] and seen["returncode"] == ["0"]
    assert seen["rest"] == ["['HOOK']"]  # the shutdown hook ran at the program's end


def test_system_exit_from_main_and_from_a_call_ends_the_program(both):
    seen = same(both, "exit-wait", "exit-rest", "exit-call", "exit-call-wait")
    assert seen["exit-wait"] == ["3"] and seen["exit-rest"] == ["['HOOK']"]
    assert seen["exit-call"] == ["Py4JError"] and seen["exit-call-wait"] == ["4"]


def test_kill_terminate_and_os_kill_end_the_program(both):
    seen = same(both, "kill-wait", "kill-rest", "terminate-wait", "terminate-rest",
                "os-kill-wait")
    assert seen["kill-wait"] == ["-9"] and seen["kill-rest"] == ["[]"]  # no hook on SIGKILL
    assert seen["terminate-wait"] == ["143"] and seen["terminate-rest"] == ["['HOOK']"]
    assert seen["os-kill-wait"] == ["-9"]


def test_a_program_runs_on_after_main_returns_while_its_server_runs(both):
    # main's thread is not a daemon, so neither is its server's: the program ends when
    # the server is shut down, not when main returns
    seen = same(both, "main-daemon", "leave-stdout", "leave-running", "leave-add",
                "leave-wait", "leave-rest")
    assert seen["main-daemon"] == ["false"] and seen["leave-stdout"] == ["LEFT"]
    assert seen["leave-running"] == ["True"] and seen["leave-add"] == ["5"]
    assert seen["leave-wait"] == ["0"] and seen["leave-rest"] == ["['HOOK']"]


def test_an_exception_out_of_main_is_status_1_and_printed(both):
    seen = same(both, "throw-returncode", "throw-stderr")
    assert seen["throw-returncode"] == ["1"]
    assert "thrown by main" in seen["throw-stderr"][0]


def test_two_launches_with_different_class_paths_are_apart(both):
    seen = same(both, "two-flavours", "two-next", "two-ports-differ", "two-wait")
    assert seen["two-flavours"] == ["['one', 'two']"]
    assert seen["two-next"] == ["[1, 2, 1]"]  # each program its own static counter
    assert seen["two-wait"] == ["[0, 0]"]


def test_posix_spawn_and_waitpid(both):
    seen = same(both, "spawn-add", "spawn-pid-is-python", "spawn-waitpid")
    assert seen["spawn-add"] == ["3"] and seen["spawn-waitpid"] == ["7"]


def test_a_java_tool_without_a_py4j_server_stays_a_real_child(both):
    seen = same(both, "tool-returncode", "tool-in-this-process")
    assert seen["tool-returncode"] == ["5"] and seen["tool-in-this-process"] == ["False"]


def test_a_port_nothing_serves_raises_py4js_error(both):
    seen = same(both, "unserved")
    assert seen["unserved"] == ["An error occurred while trying to connect to the Java server"]


def test_the_override_names_a_program_to_run_as_a_child():
    seen, _ = run("child:org.py4jni.fixtures.launch.LaunchMain", "calls")
    assert seen["where"] == ["child"] and seen["wait"] == ["0"]


def _command_lines() -> list[str]:
    """The command lines of the live processes (from /proc)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    found.append(fh.read().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                continue
    return found


def test_no_process_is_left(both):
    # py4jni's class-data-sharing archive writer (py4jni/_cds.py) for the taken-over
    # launch's class path is detached on purpose and ends on its own
    left = [c for c in _command_lines() if FIXTURE in c and "_cds.py create" not in c
            and "-Xshare:dump" not in c]
    assert left == []


DEFAULT_PORT_SERVED = """
from py4jni import _switch
from py4jni.java_gateway import JavaGateway
embedded = JavaGateway(mode="inproc")
marker = embedded.jvm.java.util.ArrayList()
marker.add("served")
def open_(params):
    return embedded._gateway_client, marker
_switch.register_in_process_server(25333, _switch.InProcessServer("test", open_, lambda: None))
from py4j.java_gateway import JavaGateway as Py4JGateway
gw = Py4JGateway()  # py4j's defaults: the server on 25333
print("served", gw.entry_point.get(0), "_served_by" in gw.__dict__)
"""


def test_py4js_default_gateway_reaches_a_program_serving_the_default_port(tmp_path):
    # a program's own server on py4j's default port (py4j's first example: java -cp app
    # App, then JavaGateway()): the default gateway is in-process over it
    app = tmp_path / "app.py"
    app.write_text(DEFAULT_PORT_SERVED)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    out = subprocess.run([sys.executable, "-m", "py4jni", "run", str(app)],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["served", "served", "True"], out.stdout + out.stderr
