"""Process-level behaviour of the embedded JVM, each in a fresh interpreter:
start-up errors, fork, Ctrl-C, JVM options (docs/guide.md)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import fixtures_jar, run_python

pytestmark = pytest.mark.inproc_only("the embedded JVM's process behaviour")


def test_libjvm_not_found_names_what_was_tried():
    r = run_python(
        "import os\n"
        "os.environ['JAVA_HOME'] = '/nonexistent-jdk'\n"
        "os.environ['PATH'] = '/nonexistent-bin'\n"
        "from py4jni import JavaGateway, Py4JError\n"
        "try:\n"
        "    JavaGateway()\n"
        "except Py4JError as e:\n"
        "    print('ERR', e)\n")
    assert "ERR libjvm.so not found" in r.stdout, r.stderr
    assert "/nonexistent-jdk/lib/server/libjvm.so" in r.stdout


def test_explicit_libjvm_path_is_checked():
    r = run_python(
        "from py4jni import JavaGateway, Py4JError\n"
        "try:\n"
        "    JavaGateway(libjvm='/no/such/libjvm.so')\n"
        "except Py4JError as e:\n"
        "    print('ERR', e)\n")
    assert "ERR libjvm not found at the given path /no/such/libjvm.so" in r.stdout, r.stderr


def test_bad_jvm_option_is_an_error_not_a_crash():
    r = run_python(
        "from py4jni import JavaGateway, Py4JError\n"
        "try:\n"
        "    JavaGateway(jvm_options=['-Xnonsense-option'])\n"
        "except Py4JError as e:\n"
        "    print('ERR', e)\n")
    assert "ERR JNI_CreateJavaVM failed (code -1): Unrecognized option: -Xnonsense-option" \
        in r.stdout, r.stdout + r.stderr


START_TWICE = (
    "import atexit, sys\n"
    "from py4jni import JavaGateway, Py4JError\n"
    "atexit.register(lambda: print('atexit ran', flush=True))\n"
    "try:\n"
    "    JavaGateway(jvm_options=[sys.argv[1]])\n"
    "except Py4JError as e:\n"
    "    print('ERR1', str(e).replace(chr(10), ' | '))\n"
    "try:\n"
    "    JavaGateway()\n"
    "except Py4JError as e:\n"
    "    print('ERR2', str(e).replace(chr(10), ' | '))\n")


@pytest.mark.parametrize("option, said", [
    ("-Xmx1k", "Too small maximum heap"),
    ("-agentlib:py4jni-no-such-agent", "Could not find agent library py4jni-no-such-agent"),
    ("-Djava.system.class.loader=no.Such", "java.lang.Error: no.Such"),  # Java was running
])
def test_jvm_start_that_hotspot_would_exit_for_raises(option, said):
    """HotSpot calls exit(1) for these; its abort hook ends only the creating thread."""
    r = subprocess.run([sys.executable, "-c", START_TWICE, option], capture_output=True,
                       text=True, timeout=120)
    # HotSpot still prints its message (on stdout) besides the exception.
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith(("ERR", "atexit"))]
    assert r.returncode == 0, r.stdout + r.stderr
    assert lines[0].startswith("ERR1 the JVM could not start: "), r.stdout + r.stderr
    assert "Error occurred during initialization of VM" in lines[0] and said in lines[0]
    assert lines[1].startswith("ERR2 py4jni: the JVM failed to start in this process and "
                               "cannot be started again"), r.stdout
    assert said in lines[1]
    assert lines[2] == "atexit ran"


def test_java_home_without_a_jvm_is_an_error_naming_it(tmp_path):
    r = run_python(
        "import os\n"
        f"os.environ['JAVA_HOME'] = {str(tmp_path)!r}\n"  # java stays on PATH
        "from py4jni import JavaGateway, Py4JError\n"
        "try:\n"
        "    JavaGateway()\n"
        "    print('started')\n"
        "except Py4JError as e:\n"
        "    print('ERR', e)\n")
    assert f"ERR libjvm.so not found: JAVA_HOME is set to {tmp_path}, which holds no JVM" \
        in r.stdout, r.stdout + r.stderr


def test_jvm_options_apply():
    r = run_python(
        "from py4jni import JavaGateway\n"
        "gw = JavaGateway(jvm_options=['-Xmx256m', '-Dpy4jni.test=yes'])\n"
        "rt = gw.jvm.java.lang.Runtime.getRuntime()\n"
        "print(rt.maxMemory() <= 256 * 1024 * 1024, gw.jvm.System.getProperty('py4jni.test'))\n")
    assert r.stdout.strip() == "True yes", r.stderr


def test_fork_child_gets_a_clear_error():
    r = run_python(
        "import os, sys\n"
        "from py4jni import JavaGateway, Py4JError\n"
        "gw = JavaGateway()\n"
        "m = gw.jvm.java.lang.Math\n"
        "m.abs(-1)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    try:\n"
        "        m.abs(-2)\n"
        "        os._exit(3)\n"
        "    except Py4JError as e:\n"
        "        os._exit(0 if 'forked' in str(e) else 4)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "print('child', os.waitstatus_to_exitcode(status), 'parent', m.abs(-5))\n")
    assert r.stdout.strip() == "child 0 parent 5", r.stdout + r.stderr


# A Python started from a terminal has Python's SIGINT handler; one started with SIGINT
# ignored (nohup, `&` in a non-interactive shell, some CI runners) keeps it ignored, and so
# does every Python it starts. The Ctrl-C tests give their child the terminal's handler
# themselves, and run once from each starting state, so that they pass however the test
# run was started.
TERMINAL_SIGINT = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
# Execs the Python of argv[1:] with SIGINT at the disposition of argv[0] ("default" or
# "ignored"), which exec keeps.
EXEC_WITH_SIGINT = ("import os, signal, sys\n"
                    "signal.signal(signal.SIGINT, {'default': signal.SIG_DFL,"
                    " 'ignored': signal.SIG_IGN}[sys.argv[1]])\n"
                    "os.execv(sys.executable, [sys.executable] + sys.argv[2:])\n")
SIGINT_STATES = ["sigint-default", "sigint-ignored"]


def start_python(code: str, sigint: str) -> subprocess.Popen[str]:
    """A fresh interpreter running `code`, started with SIGINT at `sigint` (one of
    SIGINT_STATES), its stdout and stderr piped."""
    return subprocess.Popen(
        [sys.executable, "-c", EXEC_WITH_SIGINT, sigint.removeprefix("sigint-"), "-c", code],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, P4J_FIXTURES_JAR=fixtures_jar()))


@pytest.mark.parametrize("sigint", SIGINT_STATES)
def test_ctrl_c_during_java_call_raises_keyboard_interrupt(sigint: str) -> None:
    code = TERMINAL_SIGINT + (
        "from py4jni import JavaGateway\n"
        "gw = JavaGateway()\n"
        "print('ready', flush=True)\n"
        "try:\n"
        "    for _ in range(200):\n"
        "        gw.jvm.java.lang.Thread.sleep(50)\n"
        "    print('not interrupted')\n"
        "except KeyboardInterrupt:\n"
        "    print('KeyboardInterrupt', flush=True)\n")
    proc = start_python(code, sigint)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert "KeyboardInterrupt" in out, err
    assert proc.returncode == 0


@pytest.mark.parametrize("sigint", SIGINT_STATES)
def test_ctrl_c_during_callback_reaches_the_caller_though_java_catches_it(sigint: str) -> None:
    code = TERMINAL_SIGINT + (
        "import time\n"
        "from py4jni import JavaGateway\n"
        "gw = JavaGateway()\n"
        "class Slow:\n"
        "    class Java:\n"
        "        implements = ['java.lang.Runnable']\n"
        "    def run(self):\n"
        "        print('ready', flush=True)\n"
        "        time.sleep(60)\n"
        "task = gw.jvm.java.util.concurrent.FutureTask(Slow(), None)  # catches Throwable\n"
        "try:\n"
        "    task.run()\n"
        "    print('lost')\n"
        "except KeyboardInterrupt:\n"
        "    print('KeyboardInterrupt', task.isDone(), flush=True)\n")
    proc = start_python(code, sigint)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert out.strip() == "KeyboardInterrupt True", out + err
    assert proc.returncode == 0


def test_sigint_ignored_by_the_parent_stays_ignored_with_the_jvm() -> None:
    """A program started with SIGINT ignored (nohup) ignores it with the JVM embedded as
    it would without: the JVM (-Xrs) installs no handler of its own over it."""
    code = (
        "import signal\n"
        "from py4jni import JavaGateway\n"
        "gw = JavaGateway()\n"
        "print('ready', signal.getsignal(signal.SIGINT) is signal.SIG_IGN, flush=True)\n"
        "for _ in range(20):\n"
        "    gw.jvm.java.lang.Thread.sleep(50)\n"
        "print('finished', signal.getsignal(signal.SIGINT) is signal.SIG_IGN, flush=True)\n")
    proc = start_python(code, "sigint-ignored")
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready True"
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert out.strip() == "finished True", out + err
    assert proc.returncode == 0


def test_check_jni_mode_runs_clean() -> None:
    r = run_python(
        "from py4jni import JavaGateway\n"
        "import os\n"
        "gw = JavaGateway(classpath=os.environ['P4J_FIXTURES_JAR'], check_jni=True)\n"
        "fx = gw.jvm.org.py4jni.fixtures\n"
        "sb = gw.jvm.java.lang.StringBuilder('a')\n"
        "sb.append(1).append('x').append(2.5).append(True)\n"
        "assert fx.Strings.echo('h\\u00e9\\U0001f600') == 'h\\u00e9\\U0001f600'\n"
        "assert fx.Bytes.echo(b'abc') == b'abc'\n"
        "try:\n"
        "    fx.Thrower.npe()\n"
        "except Exception as e:\n"
        "    str(e)\n"
        "print('done', str(sb))\n")
    assert r.stdout.strip() == "done a1x2.5true", r.stdout + r.stderr
    assert "WARNING" not in r.stdout + r.stderr, r.stdout + r.stderr


def test_second_gateway_with_other_jvm_options_is_refused():
    r = run_python(
        "from py4jni import JavaGateway, Py4JError\n"
        "gw = JavaGateway(jvm_options=['-Xmx300m'])\n"
        "same = JavaGateway(jvm_options=['-Xmx300m'])\n"
        "joined = JavaGateway()\n"
        "try:\n"
        "    JavaGateway(jvm_options=['-Xmx400m'])\n"
        "except Py4JError as e:\n"
        "    print('ERR', e)\n")
    # (between -Xrs and the user's options: the class-data-sharing ones, if an archive
    # is in the cache, an AOT cache from JDK 25; py4jni/_cds.py; after them the main
    # thread's -Xss, py4jni/inproc_mode/transport.py)
    assert re.search(r"ERR py4jni: the JVM of this process is already running with options "
                     r"\[-Xrs (-XX:SharedArchiveFile=\S+ -Xshare:auto -Xlog:cds=off "
                     r"-Xlog:cds\+dynamic=off |-XX:AOTCache=\S+ -Xlog:aot\*=off "
                     r"-Xlog:cds\*=off )?-Xmx300m( -Xss\d+k)?\]", r.stdout), r.stdout + r.stderr


EXIT_SCRIPT = (
    "import atexit, sys, time\n"
    "from py4jni import JavaGateway\n"
    "jvm = JavaGateway().jvm\n"
    "f = jvm.java.io.File.createTempFile('py4jni-exit-test', '.tmp')\n"
    "f.deleteOnExit()\n"
    "print('file', f.getPath(), flush=True)\n"
    "class Hook:\n"
    "    class Java:\n"
    "        implements = ['java.lang.Runnable']\n"
    "    def run(self):\n"
    "        print('java shutdown hook ran', flush=True)\n"
    "jvm.java.lang.Runtime.getRuntime().addShutdownHook(jvm.java.lang.Thread(Hook()))\n"
    "timer = jvm.java.util.Timer(False)  # a non-daemon Java thread that never ends\n"
    "atexit.register(lambda: print('python atexit ran'))\n"
    "print('unflushed', end='')\n"
    "class Exiter:\n"
    "    class Java:\n"
    "        implements = ['java.lang.Runnable']\n"
    "    def run(self):\n"
    "        jvm.java.lang.System.exit(4)\n"
    "how = sys.argv[1]\n"
    "if how == 'python':\n"
    "    sys.exit(5)\n"
    "if how == 'java':\n"
    "    jvm.java.lang.System.exit(3)\n"
    "if how == 'java-thread':\n"
    "    jvm.java.lang.Thread(Exiter()).start()\n"
    "    time.sleep(60)\n"
    "print('not reached')\n")


@pytest.mark.parametrize("how, status", [("python", 5), ("java", 3), ("java-thread", 4)])
def test_exit_runs_both_sides_handlers(how, status):
    """Python exiting runs Java's shutdown hooks and File.deleteOnExit (a non-daemon Java
    thread does not hold the exit up); System.exit, on any thread, runs Python's atexit
    handlers and flushes stdout first. The exit status is the one asked for."""
    r = subprocess.run([sys.executable, "-c", EXIT_SCRIPT, how], capture_output=True,
                       text=True, timeout=60)
    path = r.stdout.splitlines()[0].split(" ", 1)[1]
    assert r.returncode == status, r.stdout + r.stderr
    assert "unflushed" in r.stdout and "python atexit ran" in r.stdout, r.stdout + r.stderr
    assert "java shutdown hook ran" in r.stdout, r.stdout + r.stderr
    assert "not reached" not in r.stdout
    assert not os.path.exists(path), "File.deleteOnExit did not run"
    assert "Exception" not in r.stderr, r.stderr


CHAIN_SCRIPT = (
    "import os, sys, tempfile\n"
    "from py4jni import JavaGateway\n"
    "jvm = JavaGateway(classpath=sys.argv[1]).jvm\n"
    "fd, path = tempfile.mkstemp(prefix='py4jni-chain-'); os.close(fd)\n"
    "print(path, flush=True)\n"
    "jvm.org.py4jni.fixtures.Waits.deleteAfterChain(path, int(sys.argv[2]), int(sys.argv[3]),\n"
    "                                               sys.argv[4] == 'keep')\n")


@pytest.mark.parametrize("keep", ["keep", "alone"])
def test_exit_waits_while_java_threads_keep_ending(keep: str) -> None:
    """Python's exit waits for the non-daemon threads Java code started while they keep
    ending (an asynchronous close: here ten threads of 50 ms one after the other, the
    last deleting a file; each change well within the 300 ms the wait allows, the whole
    chain longer than that), also beside a thread that never ends."""
    r = subprocess.run([sys.executable, "-c", CHAIN_SCRIPT, fixtures_jar(), "10", "50", keep],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    path = r.stdout.splitlines()[0]
    exists = os.path.exists(path)
    if exists:
        os.unlink(path)
    assert not exists, "the exit did not wait for the Java threads"


def test_exit_does_not_wait_for_a_thread_that_takes_long() -> None:
    """The wait is bounded: a non-daemon thread still sleeping (60 s) when nothing else
    has changed for a while does not hold the exit up; its work is not done."""
    r = subprocess.run([sys.executable, "-c", CHAIN_SCRIPT, fixtures_jar(), "1", "60000",
                        "keep"], capture_output=True, text=True, timeout=40)
    assert r.returncode == 0, r.stdout + r.stderr
    path = r.stdout.splitlines()[0]
    assert os.path.exists(path), "the thread's work ran before the exit"
    os.unlink(path)
