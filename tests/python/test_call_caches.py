"""The per-call fast paths: the GIL kept for allowlisted short calls and released for
every other call, and the caches of resolved members (right overload every time)."""
from __future__ import annotations

import threading

import pytest

from py4jni import Py4JError, Py4JJavaError


@pytest.mark.inproc_only("the GIL handoff of in-process calls")
def test_a_blocking_call_releases_the_gil(gateway):
    """Thread.sleep is no short call: while one thread sleeps in Java, another runs
    Python and sees it sleeping (impossible if the sleeping call kept the GIL)."""
    jvm = gateway.jvm
    box: dict = {}
    started = threading.Event()

    def sleeper():
        box["thread"] = jvm.java.lang.Thread.currentThread()
        started.set()
        try:
            jvm.java.lang.Thread.sleep(20000)
        except Py4JJavaError as exc:
            box["error"] = exc

    worker = threading.Thread(target=sleeper)
    worker.start()
    started.wait()
    seen = False
    while worker.is_alive() and not seen:
        seen = box["thread"].getState().toString() == "TIMED_WAITING"
    box["thread"].interrupt()
    worker.join()
    assert seen
    assert "InterruptedException" in str(box["error"])


def test_short_calls_from_threads_give_their_own_results(gateway):
    """Allowlisted calls (StringBuilder.append, Math, System) run with the GIL kept:
    several threads calling them at once still get exactly their own results."""
    jvm = gateway.jvm
    errors: list = []

    def work(k: int) -> None:
        try:
            sb = jvm.java.lang.StringBuilder()
            for i in range(300):
                assert sb.append(k) == sb  # the same Java object
                sb.append("-")
                assert jvm.java.lang.Math.max(i, k) == max(i, k)
                assert jvm.java.lang.System.currentTimeMillis() > 0
            assert sb.toString() == f"{k}-" * 300
            assert sb.length() == len(f"{k}-") * 300
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_short_call_errors_and_long_strings(gateway):
    sb = gateway.jvm.java.lang.StringBuilder("abc")
    with pytest.raises(Py4JJavaError, match="IndexOutOfBounds"):
        sb.charAt(10)  # an allowlisted call that throws
    big = "x" * 100_000  # past the short-call bound: the same call with the GIL released
    assert sb.append(big).length() == 100_003
    assert gateway.jvm.java.lang.String.valueOf(7) == "7"


def test_wait_on_a_string_builder_is_not_short(gateway):
    """Object.wait is declared by Object, not StringBuilder: it stays a released call
    (here it fails at once: the monitor is not held)."""
    sb = gateway.jvm.java.lang.StringBuilder()
    with pytest.raises(Py4JJavaError, match="IllegalMonitorState"):
        sb.wait(1)
