"""Any Python thread may call Java; the GIL is released while Java runs."""
from __future__ import annotations

import threading
import time

import pytest


def test_many_threads_call(gateway):
    jlist = gateway.jvm.java.util.Collections.synchronizedList(gateway.jvm.java.util.ArrayList())
    errors: list[BaseException] = []

    def work():
        try:
            for i in range(500):
                jlist.add(i)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert jlist.size() == 16 * 500


@pytest.mark.inproc_only("measures GIL release around an in-process call")
def test_gil_released_during_java_call(gateway):
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        gateway.jvm.java.lang.Thread.sleep(300)  # Python thread must keep running
    finally:
        stop.set()
        t.join()
    assert len(ticks) > 20


def test_threads_that_exit_are_detached(gateway):
    cls = gateway.jvm.java.lang.Thread
    before = cls.activeCount()
    for _ in range(50):
        t = threading.Thread(target=lambda: gateway.jvm.java.lang.Math.abs(-1))
        t.start()
        t.join()
    time.sleep(0.2)
    assert cls.activeCount() <= before + 2


def test_calling_threads_have_the_system_class_loader_as_context_loader(gateway):
    # as the `java` launcher's main thread (and py4j's server threads): libraries such as
    # Spark and Scala reflection load classes through it; a thread attached through JNI
    # would otherwise have none
    lang = gateway.jvm.java.lang
    seen = {}

    def look(name):
        loader = lang.Thread.currentThread().getContextClassLoader()
        seen[name] = loader is not None and loader.equals(lang.ClassLoader.getSystemClassLoader())

    look("first thread")
    t = threading.Thread(target=look, args=("another thread",))
    t.start()
    t.join()
    assert seen == {"first thread": True, "another thread": True}
