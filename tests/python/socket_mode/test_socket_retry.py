"""Socket mode resends a command once, as py4j's GatewayClient does, when sending it
failed or the peer closed the connection before answering; the counts of connections
made, closed and retried say so. Each scenario runs against a Python peer speaking
py4j's protocol, with py4jni's client and with py4j's own, which must agree."""
from __future__ import annotations

import socket
import struct
import threading
from typing import Any

import pytest

from py4jni import GatewayParameters, JavaGateway, Py4JNetworkError, _py4jni


class Peer:
    """A py4j-speaking server: connection number `bad` fails its second command as
    `how` says ("close": read it, close without answering; "reset": read its first line,
    then reset the connection while the client is still sending); others answer every
    call with a new object id and releases with void."""

    def __init__(self, how: str, bad: int = 0) -> None:
        self.how, self.bad = how, bad
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(8)
        self.port = self.srv.getsockname()[1]
        self.accepted = 0
        self.calls: list[int] = []  # the connection number of each complete call
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return
            number = self.accepted
            self.accepted += 1
            threading.Thread(target=self._serve, args=(conn, number), daemon=True).start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        with conn, conn.makefile("rb") as f:
            seen = 0
            while True:
                first = f.readline()
                if not first:
                    return
                seen += 1
                if number == self.bad and seen == 2 and self.how == "reset":
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return  # closed with a RST, most of the command unread
                lines = [first]
                while lines[-1] not in (b"e\n", b""):
                    lines.append(f.readline())
                if number == self.bad and seen == 2:
                    return  # "close": the command read, no answer
                if first == b"m\n":
                    conn.sendall(b"!yv\n")
                else:
                    self.calls.append(number)
                    conn.sendall(b"!yro%d\n" % len(self.calls))

    def close(self) -> None:
        self.srv.close()


def _py4j_gateway(port: int) -> Any:
    import py4j.java_gateway as p4
    return p4.JavaGateway(gateway_parameters=p4.GatewayParameters(port=port, read_timeout=20))


@pytest.mark.parametrize("how,arg", [("close", "x"), ("reset", "x" * (32 << 20))],
                         ids=["closed_before_answer", "send_failed"])
def test_command_resent_once_on_a_new_connection(how: str, arg: str) -> None:
    results = {}
    for impl in ("py4j", "py4jni"):
        peer = Peer(how)
        gw = (_py4j_gateway(peer.port) if impl == "py4j" else
              JavaGateway(gateway_parameters=GatewayParameters(port=peer.port, read_timeout=20)))
        try:
            first = gw.entry_point.make("a")
            second = gw.entry_point.make(arg)  # fails on connection 0, resent on 1
            results[impl] = (first._target_id, second._target_id, peer.calls, peer.accepted)
            if impl == "py4jni":
                counts = _py4jni.socket_counts(gw._gateway_client)
                assert counts == {"made": 2, "closed": 1, "retried": 1}, counts
        finally:
            gw.close()
            peer.close()
    assert results["py4jni"] == results["py4j"] == ("o1", "o2", [0, 1], 2), results


def test_no_second_resend() -> None:
    """Every connection closes before answering: one resend, then Py4JNetworkError."""
    peer = Peer("close")
    peer.bad = -1
    gw = JavaGateway(gateway_parameters=GatewayParameters(port=peer.port, read_timeout=20))
    original = peer._serve

    def always_close(conn: socket.socket, number: int) -> None:
        with conn, conn.makefile("rb") as f:
            while f.readline() not in (b"e\n", b""):
                pass

    peer._serve = always_close  # type: ignore[method-assign]
    try:
        with pytest.raises(Py4JNetworkError, match="closed the connection"):
            gw.entry_point.make("a")
        assert _py4jni.socket_counts(gw._gateway_client) == {"made": 2, "closed": 2,
                                                             "retried": 1}
        assert peer.accepted == 2
    finally:
        peer._serve = original  # type: ignore[method-assign]
        gw.close()
        peer.close()
