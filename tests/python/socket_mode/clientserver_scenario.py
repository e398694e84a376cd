"""Callback classes and a scenario for tests/python/socket_mode/test_clientserver_socket.py: run as
``python clientserver_scenario.py py4j|py4jni JAVA_PORT PYTHON_PORT`` it drives a Java
py4j ClientServer through py4j's or py4jni's Python ClientServer and prints, as JSON,
what it saw (the differential test compares the two)."""
from __future__ import annotations

import json
import sys
import threading
from typing import Any

FX = "org.py4jni.fixtures.CallbackFixtures"


class Add:
    """An Operator that records the Python threads it ran on."""

    def __init__(self):
        self.threads = []

    def apply(self, a, b):
        self.threads.append(threading.get_ident())
        return a + b

    def name(self):
        return "add"

    class Java:
        implements = ["org.py4jni.fixtures.Operator"]


class Down:
    """A Recurser: each level calls Java's recurse, which calls down again."""

    def __init__(self, fx):
        self.fx = fx
        self.threads = []

    def down(self, n):
        self.threads.append(threading.get_ident())
        return self.fx.recurse(self, n)

    class Java:
        implements = [FX + "$Recurser"]


def scenario(impl: str, java_port: int, python_port: int) -> dict[str, Any]:
    """Calls, callbacks, nesting, Java threads and an exception through ``impl``'s
    ClientServer; returns the observations."""
    if impl == "py4j":
        from py4j.clientserver import ClientServer, JavaParameters, PythonParameters
        from py4j.protocol import Py4JJavaError
    else:
        from py4jni.clientserver import (ClientServer, JavaParameters,  # type: ignore
                                         PythonParameters)
        from py4jni.protocol import Py4JJavaError  # type: ignore
    cs = ClientServer(JavaParameters(port=java_port), PythonParameters(port=python_port),
                      python_server_entry_point=Add())
    me = threading.get_ident()
    fx = cs.jvm.org.py4jni.fixtures.CallbackFixtures
    out: dict[str, Any] = {"hello": cs.entry_point.hello("x"),
                           "max": cs.jvm.java.lang.Math.max(2, 9)}
    op = Add()
    out["apply"] = cs.jvm.org.py4jni.fixtures.Callbacks.apply(op, 2, 3)
    out["apply_on_caller"] = op.threads == [me]
    down = Down(fx)
    out["recurse"] = fx.recurse(down, 4)
    out["recurse_on_caller"] = down.threads == [me] * 4
    down = Down(fx)
    out["on_thread"] = fx.recurseOnThread(down, 3)
    out["on_thread_one_python_thread"] = len(set(down.threads)) == 1 and me not in down.threads
    out["entry_on_thread"] = cs.entry_point.applyPythonEntryOnThread(4, 5)
    try:
        cs.jvm.java.lang.Integer.parseInt("nope")
    except Py4JJavaError as e:
        out["error"] = e.java_exception.getClass().getName()
    names = set()

    def other() -> None:
        names.add(cs.entry_point.threadName())

    t = threading.Thread(target=other)
    t.start()
    t.join()
    names.add(cs.entry_point.threadName())
    out["java_threads_for_two_python_threads"] = len(names)
    cs.shutdown()
    return out


if __name__ == "__main__":
    print(json.dumps(scenario(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])),
                     sort_keys=True))
