"""Process-level behaviour of the embedded JVM, each in a fresh interpreter:
start-up errors, fork, Ctrl-C, JVM options (jni-pitfalls 1, 2, 4)."""
from __future__ import annotations

import os
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
    assert "ERR JNI_CreateJavaVM failed" in r.stdout, r.stdout + r.stderr


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


def test_ctrl_c_during_java_call_raises_keyboard_interrupt():
    code = (
        "import signal, sys, time\n"
        # Python keeps SIGINT ignored when its parent ignored it (a test run started in
        # the background); a Python started from a terminal has this handler.
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from py4jni import JavaGateway\n"
        "gw = JavaGateway()\n"
        "print('ready', flush=True)\n"
        "try:\n"
        "    for _ in range(200):\n"
        "        gw.jvm.java.lang.Thread.sleep(50)\n"
        "    print('not interrupted')\n"
        "except KeyboardInterrupt:\n"
        "    print('KeyboardInterrupt', flush=True)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, P4J_FIXTURES_JAR=fixtures_jar()))
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert "KeyboardInterrupt" in out, err
    assert proc.returncode == 0


def test_check_jni_mode_runs_clean():
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
    assert "ERR py4jni: the JVM of this process is already running with options [-Xrs -Xmx300m]" \
        in r.stdout, r.stdout + r.stderr
