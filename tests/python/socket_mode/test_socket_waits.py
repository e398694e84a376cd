"""Socket mode: no wait for the server holds the GIL. The peer here is Python, answering
from a Python thread: a wait that kept the GIL would stall it for the whole read_timeout
(the connection then fails and a new one is opened) or, with no read_timeout, forever.
Each scenario runs in a child process bounded by a timeout, so that a deadlock fails the
test instead of hanging the suite."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from typing import Any

import pytest

CHILD = textwrap.dedent(r'''
    import socket, ssl, sys, threading
    from py4jni import GatewayParameters, JavaGateway, _py4jni

    read_timeout = float(sys.argv[1]) or None
    tls = sys.argv[2:]  # certificate, key: the peer speaks TLS, its handshake in Python
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    accepted, commands = [], []

    def serve(conn):
        with conn, conn.makefile("rb") as f:
            n = 0
            while True:
                lines = []
                while (line := f.readline()) not in (b"e\n", b""):
                    lines.append(line.rstrip(b"\n").decode())
                if not line:
                    return
                commands.append(lines)
                if lines[:2] == ["m", "d"]:     # a release: py4j answers void
                    conn.sendall(b"!yv\n")
                else:                           # entry point calls: a new object each
                    n += 1
                    conn.sendall(b"!yro%d\n" % n)

    def accept():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            if tls:
                server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                server.load_cert_chain(tls[0], tls[1])
                conn = server.wrap_socket(conn, server_side=True)
            accepted.append(conn)
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    context = ssl.create_default_context(cafile=tls[0]) if tls else None
    gw = JavaGateway(gateway_parameters=GatewayParameters(
        address="localhost", port=srv.getsockname()[1], read_timeout=read_timeout,
        ssl_context=context))
    client = gw._gateway_client
    for _ in range(3):
        obj = gw.entry_point.make()
        del obj                                 # the release waits for "!yv"
    gw.entry_point.make()                       # the connection is still usable
    counts = _py4jni.socket_counts(client)
    print("accepted", len(accepted), "releases", sum(c[:2] == ["m", "d"] for c in commands),
          "made", counts["made"], "closed", counts["closed"], flush=True)
    gw.close()
    srv.close()
''')


def _run(read_timeout: float, *tls: str) -> str:
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(read_timeout), *tls], env=env,
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("read_timeout", [3.0, 0.0], ids=["read_timeout", "no_timeout"])
def test_release_answered_from_a_python_thread(read_timeout: float) -> None:
    """Four releases (the last of a result not kept) and four calls on one connection:
    each release got its answer (with the GIL held each would time out, closing the
    connection, or deadlock)."""
    try:
        line = _run(read_timeout)
    except subprocess.TimeoutExpired:
        pytest.fail("a release deadlocked waiting for a Python peer with the GIL held")
    assert line == "accepted 1 releases 4 made 1 closed 0", line


@pytest.mark.skipif(shutil.which("openssl") is None, reason="the openssl command is missing")
def test_tls_handshake_and_release_with_a_python_peer(tmp_path: Any) -> None:
    """The same over TLS, the peer's handshake run by Python's ssl module on a Python
    thread: the C transport's handshake waits without the GIL too."""
    key, cert = str(tmp_path / "k.pem"), str(tmp_path / "c.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost"], check=True, capture_output=True)
    try:
        line = _run(0.0, cert, key)
    except subprocess.TimeoutExpired:
        pytest.fail("the TLS handshake or a release deadlocked with the GIL held")
    assert line == "accepted 1 releases 4 made 1 closed 0", line
