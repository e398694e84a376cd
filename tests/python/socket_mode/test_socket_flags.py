"""A program may change the flags of a connection's socket (py4j-style code that sets a
time-out on ``gateway._gateway_client.deque[-1].socket``): the file description is
shared with the transport's descriptor, and the next calls still wait for their answers
as the gateway's own time-outs say."""
from __future__ import annotations

import threading
from typing import Any

import pytest

pytestmark = pytest.mark.socket_only("py4j's connections are sockets in socket mode only")


def _connection(gateway: Any) -> Any:
    gateway.jvm.java.lang.System.currentTimeMillis()  # at least one idle connection
    deque = gateway._gateway_client.deque
    assert len(deque) >= 1
    return deque[-1]


@pytest.mark.parametrize("change", ["settimeout", "setblocking", "settimeout0"])
def test_calls_work_after_the_socket_flags_change(gateway: Any, change: Any) -> None:
    sock = _connection(gateway).socket
    if change == "settimeout":
        sock.settimeout(10)  # Python makes the description non-blocking
    elif change == "setblocking":
        sock.setblocking(False)
    else:
        sock.settimeout(0.0)
    del sock
    Thread = gateway.jvm.java.lang.Thread
    # an answer that takes a while: the wait must not end at once
    assert gateway.jvm.java.util.concurrent.TimeUnit.MILLISECONDS.sleep(200) is None
    assert gateway.jvm.java.lang.Math.abs(-5) == 5
    sb = gateway.jvm.java.lang.StringBuilder("x" * 100_000)  # a long command and answer
    assert len(sb.toString()) == 100_000
    assert Thread.currentThread().getName()


def test_two_threads_after_a_flag_change(gateway: Any) -> None:
    _connection(gateway).socket.settimeout(5)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                gateway.jvm.java.util.concurrent.TimeUnit.MILLISECONDS.sleep(5)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
