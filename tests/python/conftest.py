"""Shared fixtures: one JVM per pytest process (a process holds one JVM).

``gateway`` is parametrized over the transports: "inproc" (the JVM in this process)
and "socket" (py4j's own GatewayServer started for the session, reached through
py4jni's socket mode). A test that applies to one mode only says why with
``pytest.mark.inproc_only(reason)`` or ``socket_only(reason)``.

tests/run_all.sh runs pytest with ``-p no:faulthandler`` (docs/guide.md, "faulthandler and
pytest": not needed since HotSpot's handlers are chained; a hang's traceback comes from
the tests' own time-outs), and tests/python/process/test_fault_signals.py checks the orders
pytest's plugin uses.

The run owns what it starts: py4jni's class-data-sharing archives (XDG_CACHE_HOME) and
pytest's tmp_path go to a temporary directory of this run, not the user's cache or
/tmp/pytest-of-<user>, and every process a test starts inherits
``P4J_TEST_RUN=<this run's id>``; at the end of the session the processes still carrying
it (the archives' background dumps above all, which outlive the process whose exit
started them) are stopped, the attach sockets and perf data files that JVMs of killed
processes left in /tmp are removed, and so is the directory. The summary lists the
skipped tests grouped by reason, also under -q.
"""
from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Iterator

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_threads(work, arg_tuples) -> None:
    """Runs work(*args) on one thread per tuple, all at once, and waits for them."""
    import threading
    threads = [threading.Thread(target=work, args=args) for args in arg_tuples]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def fixtures_jar() -> str:
    """The compiled Java fixtures (tests/java), built by CMake."""
    jar = os.environ.get("P4J_FIXTURES_JAR")
    if not jar:
        found = glob.glob(os.path.join(ROOT, "build", "**", "py4jni-test-fixtures.jar"),
                          recursive=True)
        jar = found[0] if found else ""
    if not jar or not os.path.exists(jar):
        pytest.exit("fixtures jar not found: build with tests/run_all.sh or set "
                    "P4J_FIXTURES_JAR", returncode=3)
    return jar


def py4j_jar() -> str | None:
    """py4j's own jar from its wheel (the GatewayServer for socket mode)."""
    found = glob.glob(os.path.join(sys.prefix, "share", "py4j", "py4j*.jar"))
    return found[0] if found else None


def pyflink_python() -> str | None:
    """PyFlink's venv interpreter (P4J_PYFLINK_PYTHON, .venv-pyflink: apache-flink pins
    py4j 0.10.9.7) when it can import this build's extension (the same Python version)."""
    return venv_python("P4J_PYFLINK_PYTHON")


def venv_python(variable: str) -> str | None:
    """The interpreter the environment variable names (a framework's own venv) when it
    can import this build's extension (the same Python version)."""
    python = os.environ.get(variable)
    if not python or not os.path.exists(python):
        return None
    version = subprocess.run([python, "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True).stdout.strip()
    return python if version == str(tuple(sys.version_info[:2])) else None


SUMMARY: list[str] = []  # lines tests add with summary_line(), printed after the run

# What this run owns (set at import, before any test starts a process or a JVM): one
# directory for py4jni's archives (cache/) and pytest's tmp_path (tmp/), removed at the end.
RUN_MARK = "P4J_TEST_RUN"
RUN_ID = f"{os.getpid()}-{time.time_ns()}"
RUN_STARTED = time.time()
RUN_DIR = tempfile.mkdtemp(prefix="py4jni-test-run-")
CACHE_DIR = os.path.join(RUN_DIR, "cache")
os.mkdir(CACHE_DIR)
os.environ["XDG_CACHE_HOME"] = CACHE_DIR
os.environ[RUN_MARK] = RUN_ID
# Where HotSpot puts a JVM's attach socket (.java_pid<pid>: started with the JVM, since
# -Xrs leaves no SIGQUIT to start it later) and its perf data (hsperfdata_<user>/<pid>):
# both are removed by the JVM's exit, and left behind by a process that was killed or
# ended through os._exit or by a signal, as many tests' children are.
JVM_TMP = "/tmp"


def processes_of_run(run_id: str) -> list[int]:
    """The live processes (not this one) whose environment says ``P4J_TEST_RUN=run_id``:
    what a test run with that id started, directly or not."""
    mark = f"{RUN_MARK}={run_id}".encode() + b"\0"
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                if (b"\0" + fh.read()).find(b"\0" + mark) >= 0 and _alive(int(name)):
                    found.append(int(name))
        except OSError:  # gone, or another user's
            pass
    return found


def _alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def command_line(pid: int) -> str:
    """The command line of ``pid`` ("" when gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def stop_processes_of_run(run_id: str, grace_s: float = 5.0) -> list[str]:
    """Ends every process of ``processes_of_run(run_id)``: SIGTERM (and SIGCONT, for a
    stopped one), SIGKILL for those still alive after ``grace_s``; returns their
    command lines."""
    pids = processes_of_run(run_id)
    stopped = [f"{pid}: {command_line(pid)[:200]}" for pid in pids]
    for sig in (signal.SIGTERM, signal.SIGCONT):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
    deadline = time.monotonic() + grace_s
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in pids:
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    while any(_alive(p) for p in pids) and time.monotonic() < deadline + 5:
        time.sleep(0.05)
    return stopped


def stale_jvm_files(since: float, tmp: str = JVM_TMP) -> list[str]:
    """The attach sockets and perf data files under ``tmp`` made since ``since`` (a
    time.time()) by JVMs whose process is gone."""
    found = []
    candidates = [(name[len(".java_pid"):], os.path.join(tmp, name))
                  for name in _listdir(tmp) if name.startswith(".java_pid")]
    for perf in glob.glob(os.path.join(tmp, "hsperfdata_*")):
        candidates += [(name, os.path.join(perf, name)) for name in _listdir(perf)]
    for pid, path in candidates:
        try:
            if pid.isdigit() and os.lstat(path).st_mtime >= since and not _alive(int(pid)):
                found.append(path)
        except OSError:
            pass
    return found


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def remove_stale_jvm_files(since: float) -> int:
    """Removes what ``stale_jvm_files(since)`` finds; returns how many it removed."""
    removed = 0
    for path in stale_jvm_files(since):
        try:
            os.unlink(path)
            removed += 1
        except OSError:
            pass
    return removed


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The run's tmp_path lives in the run's directory (unless --basetemp says where)."""
    if config.option.basetemp is None:
        config.option.basetemp = os.path.join(RUN_DIR, "tmp")
    config.addinivalue_line("markers", "inproc_only(reason): applies to in-process mode only")
    config.addinivalue_line("markers", "socket_only(reason): applies to socket mode only")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stops what the run left running, removes the JVM files its dead processes left in
    /tmp, and removes the run's directory (archives and tmp_path)."""
    stopped = stop_processes_of_run(RUN_ID)
    if stopped:
        summary_line(f"stopped {len(stopped)} process(es) the tests left running "
                     "(class-data-sharing dumps run on after the process that started them):")
        for line in stopped:
            summary_line(f"  {line}")
    remove_stale_jvm_files(RUN_STARTED)
    shutil.rmtree(RUN_DIR, ignore_errors=True)


def summary_line(text: str) -> None:
    """Adds a line to the "summary" section printed at the end of the pytest run (counts of
    the differential tests), which -q and output capture would otherwise hide."""
    SUMMARY.append(text)


def skip_reasons(reports: list[pytest.TestReport]) -> list[tuple[int, str]]:
    """The skipped tests' reasons with their counts, most frequent first."""
    counts: dict[str, int] = {}
    for rep in reports:
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        reason = reason.removeprefix("Skipped: ")
        counts[reason] = counts.get(reason, 0) + 1
    return sorted(((n, r) for r, n in counts.items()), key=lambda nr: (-nr[0], nr[1]))


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if SUMMARY:
        terminalreporter.section("summary")
        for line in SUMMARY:
            terminalreporter.write_line(line)
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if r.when != "teardown"]
    if skipped:
        terminalreporter.section(f"skipped: {len(skipped)} tests, by reason")
        for n, reason in skip_reasons(skipped):
            terminalreporter.write_line(f"{n:5d}  {reason}")


@pytest.fixture(autouse=True)
def _no_jni_warnings(capfd: pytest.CaptureFixture[str]) -> Iterator[None]:
    """Fails a test during which -Xcheck:jni (P4J_CHECK_JNI=1) reported a JNI misuse;
    HotSpot writes those reports straight to the process's stdout."""
    yield
    out, err = capfd.readouterr()
    sys.stdout.write(out)  # keep the test's output visible in reports
    sys.stderr.write(err)
    assert "WARNING in native method" not in out + err, "-Xcheck:jni reported:\n" + out + err


_inproc_gateway = None


def _get_inproc():
    global _inproc_gateway
    if _inproc_gateway is None:
        from py4jni import JavaGateway
        _inproc_gateway = JavaGateway(classpath=fixtures_jar(),
                                      check_jni=os.environ.get("P4J_CHECK_JNI") == "1")
    return _inproc_gateway


@pytest.fixture(scope="session")
def py4j_server() -> Iterator[int]:
    """A py4j GatewayServer (py4j's jar + fixtures) on an ephemeral port; yields it."""
    jar = py4j_jar()
    if jar is None:
        pytest.skip("py4j's jar is not installed (pip install py4j)")
    from py4j.java_gateway import launch_gateway
    proc_port = launch_gateway(classpath=os.pathsep.join([jar, fixtures_jar()]),
                               die_on_exit=True, return_proc=True)
    port, proc = proc_port
    yield port
    proc.kill()
    proc.wait()


def clientserver_jar() -> str | None:
    """The py4j ClientServer fixture (tests/java/org/py4jni/fixtures/clientserver/),
    built beside the fixtures jar when py4j's jar was found at configure time."""
    jar = os.path.join(os.path.dirname(fixtures_jar()), "py4jni-clientserver-fixtures.jar")
    return jar if os.path.exists(jar) else None


def free_port() -> int:
    """A TCP port of 127.0.0.1 free at the time of the call."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_java_clientserver(python_port: int, auth_token: str | None = None
                            ) -> tuple[subprocess.Popen, int]:
    """Starts a Java py4j ClientServer (org.py4jni.fixtures.clientserver.ClientServerMain:
    its JavaServer on a free port, its Python client pointed at ``python_port``) in a
    child JVM; returns (process, Java port). The JVM ends when Python shuts it down."""
    jar, cs_jar = py4j_jar(), clientserver_jar()
    if jar is None or cs_jar is None:
        pytest.skip("py4j's jar or the ClientServer fixture is not built")
    cp = os.pathsep.join([jar, fixtures_jar(), cs_jar])
    cmd = ["java", "-cp", cp, "org.py4jni.fixtures.clientserver.ClientServerMain", "0",
           str(python_port)] + ([auth_token] if auth_token else [])
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"the ClientServer fixture did not start: {line!r}")
    return proc, int(line.split()[1])


_socket_gateway = None


@pytest.fixture(params=["inproc", "socket"])
def gateway(request: pytest.FixtureRequest):
    """A live gateway in each transport (shared across tests of that mode)."""
    global _socket_gateway
    mode = request.param
    for marker in request.node.iter_markers():
        if marker.name == "inproc_only" and mode != "inproc":
            pytest.skip(f"in-process only: {marker.args[0] if marker.args else ''}")
        if marker.name == "socket_only" and mode != "socket":
            pytest.skip(f"socket only: {marker.args[0] if marker.args else ''}")
    if mode == "inproc":
        return _get_inproc()
    from py4jni import _py4jni
    if not hasattr(_py4jni, "socket_client"):
        pytest.skip("socket mode not built yet")
    if _socket_gateway is None:
        from py4jni import CallbackServerParameters, GatewayParameters, JavaGateway
        port = request.getfixturevalue("py4j_server")
        # callbacks: a callback server on an ephemeral port (the GatewayServer is told)
        _socket_gateway = JavaGateway(gateway_parameters=GatewayParameters(port=port),
                                      callback_server_parameters=CallbackServerParameters(port=0))
    return _socket_gateway


@pytest.fixture
def inproc_gateway():
    """The in-process gateway only (for tests of in-process-only behaviour)."""
    return _get_inproc()


def run_python(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter (for one-JVM-per-process behaviour)."""
    env = dict(os.environ)
    env["P4J_FIXTURES_JAR"] = fixtures_jar()
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, env=env)
