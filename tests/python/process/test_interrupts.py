"""Signals and the in-process JVM: Ctrl-C (SIGINT) interrupts the main thread's Java
call and raises KeyboardInterrupt promptly; SIGTERM/SIGHUP left at their default action
run Java's shutdown hooks, then end the process by the signal (jni/include/jvm_signals.h).

Every case runs in a child process of its own (a process holds one JVM and this pytest
process has one; signals are process-wide). Children that rely on SIGINT reset it to
Python's default_int_handler first: Python keeps SIGINT ignored when its parent ignored
it (a test run started in the background). Timings are bounds far from the waits
involved (a 60 s sleep interrupted in under 10 s), never fine measurements.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import fixtures_jar

pytestmark = pytest.mark.inproc_only("signals reach the JVM embedded in this process")

PRELUDE = (
    "import os, signal, sys, time\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "from py4jni import JavaGateway, Py4JJavaError\n"
)
GATEWAY = "gw = JavaGateway(classpath=os.environ['P4J_FIXTURES_JAR'], " \
          "check_jni=os.environ.get('P4J_CHECK_JNI') == '1'{opts})\n" \
          "Waits = gw.jvm.org.py4jni.fixtures.Waits\n"


def finish(proc: subprocess.Popen, timeout: float) -> tuple[str, str]:
    """The rest of a child's stdout (with what an earlier readline() buffered: communicate()
    reads the pipe's descriptor and would lose it) and its whole stderr, once it exited;
    the child is killed after `timeout` s."""
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)
    reader.start()
    killer = threading.Timer(timeout, proc.kill)
    killer.start()
    try:
        out = proc.stdout.read()
        reader.join()
        proc.wait()
    finally:
        killer.cancel()
    return out, "".join(err)


def child(body: str, *, opts: str = "", before: str = "", env: dict | None = None,
          sig: int = signal.SIGINT, delay: float = 0.5, timeout: float = 90):
    """Runs PRELUDE + before + the gateway + body in a child; once it prints 'ready',
    sends `sig` after `delay` s (None: no signal). Returns (stdout, stderr, returncode)."""
    code = PRELUDE + before + GATEWAY.format(opts=opts) + body
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, P4J_FIXTURES_JAR=fixtures_jar(),
                                     **(env or {})))
    first = proc.stdout.readline()
    if first.strip() == "ready" and sig is not None:
        time.sleep(delay)
        proc.send_signal(sig)
    out, err = finish(proc, timeout)
    assert "WARNING in native method" not in out + err, out + err  # -Xcheck:jni's reports
    return first + out, err, proc.returncode


def fields(out: str, tag: str) -> list[str]:
    """The words after `tag` on the output line starting with it."""
    for line in out.splitlines():
        if line.startswith(tag + " "):
            return line.split()[1:]
    raise AssertionError(f"no {tag!r} line in:\n{out}")


# What a child prints after its interrupted call: how long the call took, what it
# raised, then the thread's interrupt status and a normal 200 ms sleep afterwards.
REPORT = (
    "def report(what, t0):\n"
    "    print('took', round(time.monotonic() - t0, 2), what, flush=True)\n"
    "    print('after', Waits.interruptStatus(), Waits.sleepRecording(200), flush=True)\n"
    "print('ready', flush=True)\n"
    "t0 = time.monotonic()\n"
)


@pytest.mark.parametrize("call", ["gw.jvm.java.lang.Thread.sleep(60000)",
                                  "Waits.waitForever()",
                                  "Waits(60000)"])  # a constructor
def test_sigint_during_a_java_wait_raises_keyboard_interrupt_promptly(call):
    out, err, rc = child(REPORT +
                         "try:\n"
                         f"    {call}\n"
                         "    report('returned', t0)\n"
                         "except KeyboardInterrupt:\n"
                         "    report('KeyboardInterrupt', t0)\n")
    took, what = fields(out, "took")
    assert what == "KeyboardInterrupt", out + err
    assert 0.3 < float(took) < 10, out  # the wait was 60 s (or endless)
    # the interrupt was consumed by the wait, and none is left for the next call
    assert fields(out, "after") == ["False", "slept"], out + err
    assert rc == 0, err


def test_a_java_call_that_swallows_the_interrupt_runs_on_then_keyboard_interrupt():
    # Java catches InterruptedException and sleeps on: the call runs to its end (3 s),
    # then Python's handler runs and raises; the call's result is lost with it
    out, err, rc = child(REPORT +
                         "try:\n"
                         "    n = Waits.sleepSwallowing(3000)\n"
                         "    report(f'returned-{n}', t0)\n"
                         "except KeyboardInterrupt:\n"
                         "    report('KeyboardInterrupt', t0)\n"
                         "print('swallowed', Waits.swallowed)\n")
    took, what = fields(out, "took")
    assert what == "KeyboardInterrupt", out + err
    assert 2.5 < float(took) < 30, out
    assert fields(out, "swallowed") == ["1"], out + err  # the interrupt reached Java
    assert fields(out, "after") == ["False", "slept"], out + err
    assert rc == 0, err


@pytest.mark.parametrize("how", ["keyword", "environment"])
def test_opted_out_gateway_is_not_interrupted(how):
    # interrupt_java=False: the Java call is left alone; KeyboardInterrupt once it returns
    out, err, rc = child(REPORT +
                         "try:\n"
                         "    r = Waits.sleepRecording(3000)\n"
                         "    report('returned-' + r, t0)\n"
                         "except KeyboardInterrupt:\n"
                         "    report('KeyboardInterrupt', t0)\n"
                         "print('java saw an interrupt:', Waits.lastInterrupted)\n",
                         opts=", interrupt_java=False" if how == "keyword" else "",
                         env={"PY4JNI_INTERRUPT_JAVA": "0"} if how == "environment" else None)
    took, what = fields(out, "took")
    assert what == "KeyboardInterrupt", out + err
    assert float(took) > 2.5, out
    assert "java saw an interrupt: False" in out, out + err
    assert fields(out, "after") == ["False", "slept"], out + err
    assert rc == 0, err


HANDLER = (
    "calls = []\n"
    "def handler(signum, frame):\n"
    "    calls.append(signum)\n"
    "    if RAISE:\n"
    "        raise RuntimeError('from the handler')\n"
)


@pytest.mark.parametrize("when", ["before", "after"])
def test_programs_own_sigint_handler_runs_and_the_java_call_is_interrupted(when):
    # a handler that returns: the Java call was interrupted, so it fails with Java's
    # InterruptedException (Py4JJavaError); the handler ran once, promptly
    install = "signal.signal(signal.SIGINT, handler)\n"
    out, err, rc = child(("" if when == "before" else install) + REPORT +
                         "try:\n"
                         "    gw.jvm.java.lang.Thread.sleep(60000)\n"
                         "    report('returned', t0)\n"
                         "except Py4JJavaError as e:\n"
                         "    report(e.java_exception.getClass().getName(), t0)\n"
                         "print('handler calls', len(calls))\n",
                         before="RAISE = False\n" + HANDLER + (install if when == "before" else ""))
    took, what = fields(out, "took")
    assert what == "java.lang.InterruptedException", out + err
    assert float(took) < 10, out
    assert fields(out, "handler") == ["calls", "1"], out + err
    assert fields(out, "after") == ["False", "slept"], out + err
    assert rc == 0, err


def test_exception_raised_by_the_programs_handler_replaces_javas():
    out, err, rc = child("signal.signal(signal.SIGINT, handler)\n" + REPORT +
                         "try:\n"
                         "    gw.jvm.java.lang.Thread.sleep(60000)\n"
                         "    report('returned', t0)\n"
                         "except RuntimeError as e:\n"
                         "    report(type(e).__name__ + ':' + str(e).replace(' ', '_'), t0)\n",
                         before="RAISE = True\n" + HANDLER)
    took, what = fields(out, "took")
    assert what == "RuntimeError:from_the_handler", out + err
    assert float(took) < 10, out
    assert rc == 0, err


def test_ignored_sigint_leaves_the_java_call_alone():
    out, err, rc = child("signal.signal(signal.SIGINT, signal.SIG_IGN)\n" + REPORT +
                         "r = Waits.sleepRecording(2000)\n"
                         "report('returned-' + r, t0)\n")
    took, what = fields(out, "took")
    assert what == "returned-slept", out + err
    assert float(took) >= 1.9, out
    assert rc == 0, err


def test_every_sigint_raises_once_and_never_interrupts_a_later_call():
    # SIGINTs at random moments of a loop of short Java sleeps and Python work (before,
    # during and just after calls): each one raises one KeyboardInterrupt (the next is
    # sent once the child reported it), and no call ever returns interrupted without
    # one (an interrupt landing in the wrong call)
    n = 15
    code = (PRELUDE + GATEWAY.format(opts="") +
            "kis = spurious = calls = 0\n"
            "print('ready', flush=True)\n"
            f"while kis < {n}:\n"
            "    try:\n"
            "        r = Waits.sleepRecording(2)\n"
            "        calls += 1\n"
            "        if r != 'slept':\n"
            "            spurious += 1\n"
            "        sum(range(2000))\n"
            "    except KeyboardInterrupt:\n"
            "        kis += 1\n"
            "        print('ki', kis, flush=True)\n"
            "print('counts', kis, spurious, calls > 50, Waits.interruptStatus(), flush=True)\n"
            "print('interrupted calls', Waits.interruptedCalls)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, P4J_FIXTURES_JAR=fixtures_jar()))
    import random
    watchdog = threading.Timer(120, proc.kill)  # a lost KeyboardInterrupt fails, not hangs
    watchdog.start()
    try:
        assert proc.stdout.readline().strip() == "ready"
        rnd = random.Random(22)
        for i in range(1, n + 1):
            time.sleep(rnd.uniform(0.02, 0.1))
            proc.send_signal(signal.SIGINT)
            assert proc.stdout.readline().split() == ["ki", str(i)], finish(proc, 60)
        out, err = finish(proc, 60)
    finally:
        watchdog.cancel()
    assert "WARNING in native method" not in out + err, out + err
    assert fields(out, "counts") == [str(n), "0", "True", "False"], out + err
    # most SIGINTs came during a sleep (the loop is mostly in Java) and interrupted it
    assert int(fields(out, "interrupted")[1]) >= 3, out
    assert proc.returncode == 0, err


# ---------------------------------------------------------------- SIGTERM, SIGHUP

EXIT_CHILD = (
    "import atexit\n"
    "Waits.hookCreatingFile(os.environ['HOOK_FILE'])\n"
    "f = gw.jvm.java.io.File(os.environ['DELETE_FILE'])\n"
    "f.createNewFile()\n"
    "f.deleteOnExit()\n"
    "atexit.register(lambda: open(os.environ['ATEXIT_FILE'], 'w').close())\n"
    "print('ready', flush=True)\n"
)


def exit_child(tmp_path, sig, wait: str, before: str = "", after: str = ""):
    files = {k: str(tmp_path / k.lower()) for k in ("HOOK_FILE", "DELETE_FILE", "ATEXIT_FILE")}
    waits = {"java": "gw.jvm.java.lang.Thread.sleep(60000)\n", "python": "time.sleep(60)\n"}
    out, err, rc = child(after + EXIT_CHILD + waits[wait] + "print('not reached')\n",
                         before="signal.signal(signal.SIGTERM, signal.SIG_DFL)\n"
                                "signal.signal(signal.SIGHUP, signal.SIG_DFL)\n" + before,
                         env=files, sig=sig)
    return out, err, rc, {k: os.path.exists(v) for k, v in files.items()}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
@pytest.mark.parametrize("wait", ["java", "python"])
def test_sigterm_runs_javas_shutdown_hooks_and_ends_by_the_signal(tmp_path, sig, wait):
    out, err, rc, exists = exit_child(tmp_path, sig, wait)
    assert rc == -sig, out + err  # ended by the signal itself, as Python's default
    assert exists["HOOK_FILE"], "Java's shutdown hook did not run:\n" + out + err
    assert not exists["DELETE_FILE"], "File.deleteOnExit did not run"
    assert not exists["ATEXIT_FILE"], "Python's atexit ran (a signal skips it, as in Python)"
    assert "not reached" not in out


def test_sigint_set_to_default_runs_the_hooks_too(tmp_path):
    out, err, rc, exists = exit_child(tmp_path, signal.SIGINT, "java",
                                      before="signal.signal(signal.SIGINT, signal.SIG_DFL)\n")
    assert rc == -signal.SIGINT, out + err
    assert exists["HOOK_FILE"] and not exists["ATEXIT_FILE"], out + err


def test_keep_signals_leaves_ctrl_c_to_the_jvm():
    # the JVM's own SIGINT handler: Java's shutdown (py4jni's hook runs Python's atexit
    # handlers), then exit status 130
    out, err, rc = child("import atexit\n"
                         "atexit.register(lambda: print('atexit ran', flush=True))\n"
                         "print('ready', flush=True)\n"
                         "gw.jvm.java.lang.Thread.sleep(60000)\n", opts=", keep_signals=True")
    assert rc == 130, out + err
    assert "atexit ran" in out, out + err


SLOW_HOOK = (
    "started, done = os.environ['STARTED_FILE'], os.environ['DONE_FILE']\n"
    "Waits.slowHook(started, 1500, done)\n"
    "print('ready', flush=True)\n"
)


def test_program_exiting_while_the_hooks_run_still_ends_by_the_signal(tmp_path):
    files = {"STARTED_FILE": str(tmp_path / "started"), "DONE_FILE": str(tmp_path / "done")}
    out, err, rc = child(SLOW_HOOK +
                         "while not os.path.exists(started):\n"
                         "    time.sleep(0.02)\n"
                         "sys.exit(3)  # while Java's hooks run for SIGTERM\n",
                         before="signal.signal(signal.SIGTERM, signal.SIG_DFL)\n",
                         env=files, sig=signal.SIGTERM, delay=0.2)
    assert rc == -signal.SIGTERM, out + err  # the exit waited for the hooks and the signal
    assert os.path.exists(files["DONE_FILE"]), out + err


def test_sigterm_during_an_exit_under_way_changes_nothing(tmp_path):
    files = {"STARTED_FILE": str(tmp_path / "started"), "DONE_FILE": str(tmp_path / "done")}
    code = (PRELUDE + "signal.signal(signal.SIGTERM, signal.SIG_DFL)\n" +
            GATEWAY.format(opts="") + SLOW_HOOK + "sys.exit(5)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, P4J_FIXTURES_JAR=fixtures_jar(), **files))
    assert proc.stdout.readline().strip() == "ready"
    deadline = time.monotonic() + 30
    while not os.path.exists(files["STARTED_FILE"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)  # while the interpreter's exit runs Java's hooks
    out, err = finish(proc, 60)
    assert "WARNING in native method" not in out + err, out + err
    assert proc.returncode == 5, out + err
    assert os.path.exists(files["DONE_FILE"]), out + err


def test_sigterm_reset_to_default_after_start_still_runs_the_hooks(tmp_path):
    out, err, rc, exists = exit_child(
        tmp_path, signal.SIGTERM, "python",
        after="signal.signal(signal.SIGTERM, lambda s, f: None)\n"
              "signal.signal(signal.SIGTERM, signal.SIG_DFL)\n")
    assert rc == -signal.SIGTERM, out + err
    assert exists["HOOK_FILE"], out + err


@pytest.mark.parametrize("when", ["before", "after"])
def test_programs_own_sigterm_handler_wins(tmp_path, when):
    # the program's handler exits normally: Python's atexit and Java's hooks run at
    # that exit (py4jni's atexit handler), with the program's status
    install = "signal.signal(signal.SIGTERM, lambda s, f: sys.exit(7))\n"
    out, err, rc, exists = exit_child(tmp_path, signal.SIGTERM, "python",
                                      before=install if when == "before" else "",
                                      after=install if when == "after" else "")
    assert rc == 7, out + err
    assert exists["HOOK_FILE"] and exists["ATEXIT_FILE"], out + err
    assert not exists["DELETE_FILE"]


def test_sigterm_to_a_forked_child_does_not_reach_the_parents_jvm(tmp_path):
    hook = tmp_path / "hook"
    out, err, rc = child(
        "Waits.hookCreatingFile(os.environ['HOOK_FILE'])\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
        "time.sleep(0.3)\n"
        "os.kill(pid, signal.SIGTERM)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "time.sleep(0.5)\n"
        "print('child', os.waitstatus_to_exitcode(status), 'hook ran', "
        "os.path.exists(os.environ['HOOK_FILE']), 'parent', gw.jvm.java.lang.Math.abs(-3))\n",
        before="signal.signal(signal.SIGTERM, signal.SIG_DFL)\n",
        env={"HOOK_FILE": str(hook)}, sig=None)
    assert fields(out, "child") == [str(-signal.SIGTERM), "hook", "ran", "False",
                                    "parent", "3"], out + err
    assert rc == 0 and hook.exists(), err  # the parent's hooks ran at its own exit


# ---------------------------------------------------------------- PySpark

SPARK_DRIVER = r'''
import json, os, signal, sys, threading, time
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
TMP = sys.argv[1]
import py4jni.pyspark
py4jni.pyspark.enable()
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[2]")
         .config("spark.ui.enabled", "false")
         .config("spark.local.dir", TMP)
         .config("spark.driver.extraJavaOptions",
                 f"-Djava.io.tmpdir={TMP} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
         .getOrCreate())
sc = spark.sparkContext
tracker = sc.statusTracker()
sent = {}

def ctrl_c():  # Ctrl-C once the job has run 3 s
    while not tracker.getActiveJobsIds():
        time.sleep(0.05)
    time.sleep(3)
    sent["job"] = tracker.getActiveJobsIds()[0]
    sent["at"] = time.monotonic()
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=ctrl_c, daemon=True).start()
started = time.monotonic()
try:
    n = spark.range(10 ** 11).count()  # minutes of work on two cores
    outcome = f"returned {n}"
except KeyboardInterrupt:
    outcome = "KeyboardInterrupt"
raised = time.monotonic()
while tracker.getActiveJobsIds() and time.monotonic() < raised + 30:
    time.sleep(0.05)
ended = time.monotonic()
info = tracker.getJobInfo(sent["job"])
print("RESULT " + json.dumps({
    "outcome": outcome, "job_seconds": round(raised - started, 2),
    "sigint_to_raise": round(raised - sent["at"], 2),
    "sigint_to_job_end": round(ended - sent["at"], 2),
    "job_status": info.status if info else None,
    "active_after": list(tracker.getActiveJobsIds()),
    "count_after": spark.range(1000).count(),
    "spark_dirs": sorted(d for d in os.listdir(TMP) if d.startswith(("spark-", "blockmgr-")))}),
    flush=True)
print("ready", flush=True)
sc._jvm.java.lang.Thread.sleep(120000)  # SIGTERM comes during a Java call
print("not reached", flush=True)
'''


@pytest.fixture(scope="module")
def spark_run(tmp_path_factory):
    """One in-process PySpark driver: a long job Ctrl-C'ed 3 s in, then SIGTERM while it
    waits in a Java call. Returns its RESULT, return code, what SIGTERM left, wall time."""
    pytest.importorskip("pyspark", reason="pyspark is not installed "
                        "(pip install -r tests/requirements-pyspark.txt)")
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("the sanitizer run leaves PySpark's drivers out (tests/ci/run_sanitizers.sh): "
                    "Spark's JVM and workers would inherit the preloaded ASan runtime")
    tmp = str(tmp_path_factory.mktemp("spark-signals"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    env.update(TMPDIR=tmp, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    began = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", SPARK_DRIVER, tmp], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.strip() == "ready":
            time.sleep(0.5)
            proc.send_signal(signal.SIGTERM)
            break
    out, err = finish(proc, 180)
    out = "".join(lines) + out
    result = [ln for ln in out.splitlines() if ln.startswith("RESULT ")]
    assert result, f"no result, rc={proc.returncode}:\n{out[-3000:]}\n{err[-5000:]}"
    import json
    return {"result": json.loads(result[0][len("RESULT "):]), "rc": proc.returncode,
            "out": out, "err": err, "wall": time.monotonic() - began,
            "left": sorted(d for d in os.listdir(tmp) if d.startswith(("spark-", "blockmgr-")))}


def test_pyspark_ctrl_c_raises_promptly_and_cancels_the_job(spark_run):
    r = spark_run["result"]
    assert r["outcome"] == "KeyboardInterrupt", spark_run["err"][-3000:]
    assert r["sigint_to_raise"] < 10, r  # the job alone would run for minutes
    # PySpark's own SIGINT handler ran cancelAllJobs() (the main thread was free to):
    # the job ended (FAILED is how the status tracker reports a cancelled job)
    assert r["active_after"] == [] and r["job_status"] == "FAILED", r
    assert r["sigint_to_job_end"] < 20, r
    assert r["count_after"] == 1000, r  # the session goes on working


def test_pyspark_sigterm_leaves_no_spark_temp_directories(spark_run):
    assert spark_run["result"]["spark_dirs"], "Spark made no temp directory to check"
    assert spark_run["rc"] == -signal.SIGTERM, spark_run["err"][-3000:]
    assert "not reached" not in spark_run["out"]
    assert spark_run["left"] == [], spark_run["left"]  # Spark's shutdown hooks ran
