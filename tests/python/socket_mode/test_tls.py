"""TLS in socket mode against py4j's own servers built with SSL socket factories
(tests/java/org/py4jni/fixtures/clientserver/TlsServerMain.java, set up as py4j's
ExampleSSLApplication): Python -> Java (GatewayServer, ClientServer's JavaServer) and
Java -> Python (the callback server, the PythonServer), with certificates made at run
time by the openssl command. A wrong certificate fails as it fails with py4j's client."""
from __future__ import annotations

import os
import re
import shutil
import socket
import ssl
import subprocess
import threading
from typing import Any, Iterator

import pytest

from conftest import clientserver_jar, fixtures_jar, free_port, py4j_jar, run_python
from py4jni import (CallbackServerParameters, GatewayParameters, JavaGateway, Py4JError,
                    Py4JNetworkError)
from py4jni import _py4jni
from py4jni.clientserver import ClientServer, JavaParameters, PythonParameters

pytestmark = pytest.mark.skipif(py4j_jar() is None or shutil.which("openssl") is None,
                                reason="py4j's jar or the openssl command is missing")

PASSWORD = "password"


class Adder:
    """A Python Operator (org.py4jni.fixtures.Operator) that records its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def apply(self, a: int, b: int) -> int:
        self.calls += 1
        return a + b

    def name(self) -> str:
        return "adder"

    class Java:
        implements = ["org.py4jni.fixtures.Operator"]


def _make_cert(directory: str, name: str) -> dict[str, str]:
    """A self-signed certificate for the name "localhost" only (no IP address), its key,
    and both in a PKCS12 keystore for Java."""
    key, cert, p12 = (os.path.join(directory, f"{name}.{ext}") for ext in ("key", "pem", "p12"))
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost"],
                   check=True, capture_output=True)
    subprocess.run(["openssl", "pkcs12", "-export", "-in", cert, "-inkey", key, "-out", p12,
                    "-passout", f"pass:{PASSWORD}"], check=True, capture_output=True)
    return {"key": key, "cert": cert, "p12": p12}


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """"good": the servers' certificate; "other": another one for the same name."""
    d = str(tmp_path_factory.mktemp("tls"))
    return {"good": _make_cert(d, "good"), "other": _make_cert(d, "other")}


def client_context(cert: str, check_hostname: bool = True) -> ssl.SSLContext:
    """A client context trusting `cert` only."""
    ctx = ssl.create_default_context(cafile=cert)
    ctx.check_hostname = check_hostname
    return ctx


def server_context(pair: dict[str, str]) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pair["cert"], pair["key"])
    return ctx


class TlsJava:
    """TlsServerMain in a child JVM: `port` its server's, `python_port` where its
    callbacks go."""

    def __init__(self, mode: str, p12: str) -> None:
        cs_jar = clientserver_jar()
        if cs_jar is None:
            pytest.skip("the py4j server fixtures are not built")
        self.python_port = free_port()
        cp = os.pathsep.join([str(py4j_jar()), fixtures_jar(), cs_jar])
        self.proc = subprocess.Popen(
            ["java", "-cp", cp, "org.py4jni.fixtures.clientserver.TlsServerMain", mode, p12,
             PASSWORD, str(self.python_port)], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line.startswith("PORT "):
            self.proc.kill()
            raise RuntimeError(f"TlsServerMain did not start: {line!r}")
        self.port = int(line.split()[1])
        self.closers: list[Any] = []

    def close_clients(self) -> None:
        for close in self.closers:
            try:
                close()
            except Exception:  # noqa: BLE001 - already closed
                pass
        self.closers.clear()

    def close(self) -> None:
        self.close_clients()
        self.proc.kill()
        self.proc.wait()


@pytest.fixture(scope="module")
def gateway_server(certs: dict[str, dict[str, str]]) -> Iterator[TlsJava]:
    """One GatewayServer for the module: each test's gateways close (not shut down)."""
    side = TlsJava("gateway", certs["good"]["p12"])
    yield side
    side.close()


@pytest.fixture(autouse=True)
def _close_gateways(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "gateway_server" in request.fixturenames:
        side = request.getfixturevalue("gateway_server")
        side.close_clients()


@pytest.fixture
def client_server(certs: dict[str, dict[str, str]]) -> Iterator[TlsJava]:
    side = TlsJava("clientserver", certs["good"]["p12"])
    yield side
    side.close()


def tls_gateway(java: TlsJava, client_ctx: ssl.SSLContext | None,
                server_ctx: ssl.SSLContext | None, address: str = "localhost") -> JavaGateway:
    """A gateway to `java`; with `server_ctx`, its TLS callback server on java's
    python_port."""
    gw = JavaGateway(
        gateway_parameters=GatewayParameters(address=address, port=java.port,
                                             ssl_context=client_ctx, read_timeout=20),
        callback_server_parameters=CallbackServerParameters(
            port=java.python_port, ssl_context=server_ctx) if server_ctx else None)
    java.closers.append(gw.close)
    return gw


def test_gateway_server_both_directions(gateway_server: TlsJava,
                                        certs: dict[str, dict[str, str]]) -> None:
    """Calls go to the GatewayServer over TLS; Java's callback client reaches the callback
    server over TLS; a release travels on the pooled TLS connection."""
    gw = tls_gateway(gateway_server, client_context(certs["good"]["cert"]),
                     server_context(certs["good"]))
    assert gw.entry_point.hello("tls") == "hello tls"
    sb = gw.jvm.java.lang.StringBuilder("a\r\n\tb")
    assert sb.append(42).toString() == "a\r\n\tb42"
    del sb
    adder = Adder()
    assert gw.entry_point.apply(adder, 2, 3) == 5
    assert adder.calls == 1
    assert gw._gateway_client.ssl_context is gw.gateway_parameters.ssl_context
    counts = _py4jni.socket_counts(gw._gateway_client)
    assert counts["made"] >= 1 and counts["closed"] == 0, counts


def test_plain_client_cannot_talk_to_a_tls_server(gateway_server: TlsJava) -> None:
    """The server really speaks TLS: a client without ssl_context is told so (a
    Py4JNetworkError naming ssl_context), not given a malformed answer."""
    gw = JavaGateway(gateway_parameters=GatewayParameters(port=gateway_server.port,
                                                          read_timeout=5))
    gateway_server.closers.append(gw.close)
    with pytest.raises(Py4JNetworkError, match="speaks TLS") as info:
        gw.entry_point.hello("plain")
    assert "ssl_context" in str(info.value)


def test_untrusted_server_certificate_fails_as_with_py4j(
        gateway_server: TlsJava, certs: dict[str, dict[str, str]]) -> None:
    """A context that does not trust the server's certificate: py4j's client raises
    Py4JNetworkError on the first call, and so does py4jni's, saying why."""
    import py4j.java_gateway as p4
    from py4j.protocol import Py4JNetworkError as Py4jNetworkError
    theirs = p4.JavaGateway(gateway_parameters=p4.GatewayParameters(
        address="localhost", port=gateway_server.port,
        ssl_context=client_context(certs["other"]["cert"])))
    with pytest.raises(Py4jNetworkError):
        theirs.entry_point.hello("x")
    theirs.close()
    gw = tls_gateway(gateway_server, client_context(certs["other"]["cert"]), None)
    with pytest.raises(Py4JNetworkError, match="certificate verify failed"):
        gw.entry_point.hello("x")


def test_hostname_checked_as_the_context_says(gateway_server: TlsJava,
                                              certs: dict[str, dict[str, str]]) -> None:
    """The certificate names "localhost" only: connecting to 127.0.0.1 fails when the
    context checks host names (as Python's ssl does) and works when it does not."""
    gw = tls_gateway(gateway_server, client_context(certs["good"]["cert"]), None,
                     address="127.0.0.1")
    with pytest.raises(Py4JNetworkError, match="certificate verify failed"):
        gw.entry_point.hello("x")
    gw2 = tls_gateway(gateway_server, client_context(certs["good"]["cert"],
                                                     check_hostname=False), None,
                      address="127.0.0.1")
    assert gw2.entry_point.hello("ip") == "hello ip"


def test_java_refuses_the_callback_servers_certificate(
        gateway_server: TlsJava, certs: dict[str, dict[str, str]]) -> None:
    """Java's callback client trusts only its own certificate: a callback server showing
    another one is refused, the callback never runs, and the call fails in Python.
    (py4j's own client hangs here: its callback server's accept loop ends on the
    handshake error, and Java waits on that connection with no time-out; nothing to
    compare with.)"""
    gw = tls_gateway(gateway_server, client_context(certs["good"]["cert"]),
                     server_context(certs["other"]))
    adder = Adder()
    with pytest.raises(Py4JError):
        gw.entry_point.apply(adder, 2, 3)
    assert adder.calls == 0
    assert gw.entry_point.hello("still") == "hello still"


def test_clientserver_both_directions(client_server: TlsJava,
                                      certs: dict[str, dict[str, str]]) -> None:
    """py4j's pinned-thread mode over TLS: calls and callbacks on the thread's TLS
    connection, and a Java thread's own TLS connection to the PythonServer (its handshake
    run by the C transport as server)."""
    cs = ClientServer(
        JavaParameters(address="localhost", port=client_server.port,
                       ssl_context=client_context(certs["good"]["cert"]), read_timeout=20),
        PythonParameters(port=client_server.python_port,
                         ssl_context=server_context(certs["good"])))
    client_server.closers.append(cs.shutdown)
    assert cs.entry_point.hello("pinned") == "hello pinned"
    adder = Adder()
    assert cs.entry_point.apply(adder, 4, 5) == 9
    assert cs.entry_point.applyOnThread(adder, 6, 7) == 13
    assert adder.calls == 2


def test_clientserver_untrusted_server(client_server: TlsJava,
                                       certs: dict[str, dict[str, str]]) -> None:
    cs = ClientServer(
        JavaParameters(address="localhost", port=client_server.port,
                       ssl_context=client_context(certs["other"]["cert"]), read_timeout=20),
        PythonParameters(port=client_server.python_port, eager_load=False))
    client_server.closers.append(cs.shutdown)
    with pytest.raises(Py4JNetworkError, match="certificate verify failed"):
        cs.entry_point.hello("x")


def _stuck_peer(port: int, how: str) -> socket.socket:
    """A TCP peer of a TLS server that stops mid-handshake: "silent" sends nothing,
    "client_hello" sends its ClientHello and then neither reads nor answers."""
    sock = socket.create_connection(("127.0.0.1", port))
    if how == "client_hello":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
        with pytest.raises(ssl.SSLWantReadError):
            tls.do_handshake()
        sock.sendall(outgoing.read())
    return sock


def _closed_by_server(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes `sock` within `seconds` (what it sent is read first)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


@pytest.mark.parametrize("how", ["silent", "client_hello"])
@pytest.mark.parametrize("server", ["callback_server", "python_server"])
def test_shutdown_is_prompt_with_a_peer_stuck_mid_handshake(
        server: str, how: str, request: pytest.FixtureRequest,
        certs: dict[str, dict[str, str]]) -> None:
    """A peer that connects to the TLS callback server (GatewayServer mode) or the
    PythonServer (pinned-thread mode) and stalls in the handshake holds up neither Java's
    callbacks on other connections nor the server's shutdown, which closes the stalled
    connection at once. (Before, the callback server's accepting thread ran the handshake
    with no time-out, and its shutdown waited for that thread: JDK 26's callback client,
    when it refuses the server's certificate, leaves its half-made connection open with no
    alert, so test_java_refuses_the_callback_servers_certificate hung in its clean-up.)"""
    good = client_context(certs["good"]["cert"])
    java: TlsJava = request.getfixturevalue(
        "gateway_server" if server == "callback_server" else "client_server")
    adder = Adder()
    if server == "callback_server":
        gw: Any = tls_gateway(java, good, server_context(certs["good"]))
        # Java's callback client may keep a connection to an earlier test's server (closed
        # by its shutdown, which a reused connection reads as a null answer): a new one
        jserver = gw.java_gateway_server
        jserver.resetCallbackClient(jserver.getPythonAddress(), java.python_port)
        stuck = _stuck_peer(java.python_port, how)
        assert gw.entry_point.apply(adder, 2, 3) == 5
    else:
        gw = ClientServer(
            JavaParameters(address="localhost", port=java.port, ssl_context=good,
                           read_timeout=20),
            PythonParameters(port=java.python_port, ssl_context=server_context(certs["good"])))
        java.closers.append(gw.shutdown)
        stuck = _stuck_peer(java.python_port, how)
        assert gw.entry_point.applyOnThread(adder, 6, 7) == 13
    with stuck:
        stopper = threading.Thread(target=gw.shutdown_callback_server, daemon=True)
        stopper.start()
        stopper.join(10)
        assert not stopper.is_alive(), "the server's shutdown waits on the stalled handshake"
        assert _closed_by_server(stuck, 5.0), "the stalled connection is still open"
    assert adder.calls == 1


def test_contexts_that_cannot_be_honoured_are_refused(
        gateway_server: TlsJava, certs: dict[str, dict[str, str]], tmp_path: Any) -> None:
    """A context whose callbacks OpenSSL would run into Python's ssl objects is refused
    at construction, naming the setting; a non-context is a TypeError."""
    ctx = client_context(certs["good"]["cert"])
    ctx.keylog_filename = str(tmp_path / "keys.log")
    with pytest.raises(Py4JError, match="keylog_filename"):
        tls_gateway(gateway_server, ctx, None)
    with pytest.raises(TypeError, match="ssl.SSLContext"):
        tls_gateway(gateway_server, "not a context", None)  # type: ignore[arg-type]



def test_a_context_of_the_wrong_side_is_refused_saying_so(
        gateway_server: TlsJava, certs: dict[str, dict[str, str]]) -> None:
    """A server-side context given for a gateway's connections (and a client-side one
    for the connections a PythonServer serves) is refused when the gateway is made,
    naming the side, not with OpenSSL's "called a function you should not call" (a
    GatewayServer's callback server wraps its sockets in Python, whose ssl says so
    itself)."""
    with pytest.raises(Py4JError, match="PROTOCOL_TLS_SERVER context.*client-side"):
        tls_gateway(gateway_server, server_context(certs["good"]), None)
    from py4jni import clientserver
    with pytest.raises(Py4JError, match="PROTOCOL_TLS_CLIENT context.*server-side"):
        clientserver.ClientServer(
            java_parameters=JavaParameters(port=free_port(), ssl_context=client_context(
                certs["good"]["cert"])),
            python_parameters=PythonParameters(port=0, ssl_context=client_context(
                certs["good"]["cert"])))


def test_a_context_changed_after_the_gateway_was_made(
        gateway_server: TlsJava, certs: dict[str, dict[str, str]], tmp_path: Any) -> None:
    """The context is live: callbacks into Python's ssl objects set after construction
    never reach OpenSSL through py4jni's connections. A new connection after
    keylog_filename is set fails naming it; a _msg_callback set later is not called for
    them; the connections made before go on."""
    ctx = client_context(certs["good"]["cert"])
    gw = tls_gateway(gateway_server, ctx, None)
    assert gw.jvm.java.lang.Math.abs(-1) == 1
    seen: list[Any] = []
    ctx._msg_callback = lambda *args: seen.append(args)  # type: ignore[attr-defined]
    gw._gateway_client.deque.clear()  # the next call opens a new connection
    assert gw.jvm.java.lang.Math.abs(-2) == 2
    assert seen == []
    ctx.keylog_filename = str(tmp_path / "keys.log")
    gw._gateway_client.deque.clear()
    with pytest.raises(Py4JNetworkError, match="keylog_filename"):
        gw.jvm.java.lang.Math.abs(-3)
    ctx.keylog_filename = None  # type: ignore[assignment]
    gw._gateway_client.deque.clear()
    assert gw.jvm.java.lang.Math.abs(-4) == 4
    errors: list[BaseException] = []

    def call() -> None:  # two threads at once: a second connection
        try:
            gw.jvm.java.util.concurrent.TimeUnit.MILLISECONDS.sleep(100)
        except BaseException as exc:  # noqa: BLE001 - checked below
            errors.append(exc)

    ctx._msg_callback = lambda *args: seen.append(args)  # type: ignore[attr-defined]
    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and seen == []


def test_a_serving_context_changed_later_is_refused_per_connection(
        certs: dict[str, dict[str, str]]) -> None:
    """A PythonServer checks its context again for each connection Java opens: a
    callback into Python's ssl objects set since (sni_callback, which a Java client
    naming a dotted host would trigger) refuses that connection, naming it."""
    from py4jni.socket_mode import callbacks
    ctx = server_context(certs["good"])
    params = PythonParameters(ssl_context=ctx)
    callbacks._check_serving_context(params)
    ctx.sni_callback = lambda *args: None
    with pytest.raises(Py4JError, match="sni_callback"):
        callbacks._check_serving_context(params)
    ctx.sni_callback = None
    callbacks._check_serving_context(params)


def test_calls_work_after_the_tls_sockets_flags_change(
        gateway_server: TlsJava, certs: dict[str, dict[str, str]]) -> None:
    """settimeout on a TLS connection's socket (the TCP socket below the session) makes
    the shared description non-blocking; the session's reads still wait."""
    gw = tls_gateway(gateway_server, client_context(certs["good"]["cert"]), None)
    assert gw.jvm.java.lang.Math.abs(-1) == 1
    gw._gateway_client.deque[-1].socket.settimeout(10)
    assert gw.jvm.java.util.concurrent.TimeUnit.MILLISECONDS.sleep(200) is None
    assert gw.jvm.java.lang.Math.abs(-2) == 2


def test_the_extension_links_no_openssl() -> None:
    """The extension loads without any libssl/libcrypto (TLS resolves the process's own
    at run time): no NEEDED entry for them, no undefined OpenSSL symbol."""
    so = str(_py4jni.__file__)
    dyn = subprocess.run(["readelf", "-d", so], check=True, capture_output=True,
                         text=True).stdout
    needed = re.findall(r"\(NEEDED\)[^\[]*\[([^\]]+)\]", dyn)
    assert any(n.startswith("libc.so") for n in needed), dyn  # the parse found them
    assert [n for n in needed if n.startswith(("libssl", "libcrypto"))] == []
    undefined = subprocess.run(["nm", "-D", "--undefined-only", so], check=True,
                               capture_output=True, text=True).stdout.split()
    assert any(u.startswith("PyObject_") for u in undefined)
    assert [u for u in undefined if re.match(r"(SSL|ERR|X509|OpenSSL|EVP)_", u)] == []


def test_plain_socket_calls_load_no_openssl(py4j_server: int) -> None:
    """Without a context nothing loads OpenSSL: after plain socket calls neither
    Python's ssl module nor any libssl is in the process."""
    r = run_python(f"""
import sys
from py4jni import GatewayParameters, JavaGateway
gw = JavaGateway(gateway_parameters=GatewayParameters(port={py4j_server}))
assert gw.jvm.java.lang.Math.abs(-3) == 3
maps = open("/proc/self/maps").read()
print("ssl module:", "ssl" in sys.modules, "libssl:", "libssl" in maps)
gw.close()
""")
    assert r.returncode == 0, r.stderr
    assert "ssl module: False libssl: False" in r.stdout, r.stdout
