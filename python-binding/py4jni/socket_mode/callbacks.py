"""Java calls Python in socket mode: py4j's callback protocol and callback server.

*Proxies.* A Python object whose class has ``class Java: implements = ["fqn", ...]``,
passed to Java through a socket-mode gateway, travels as py4j's proxy argument
``f<id>;<fqn>;...``; py4j's GatewayServer builds a ``java.lang.reflect.Proxy`` whose
calls come back to this process's callback server. The argument is made in C (the
client's ``proxy_hook``, python-binding/src/socket/socket_callbacks.c) from the text this
module returns, so the rest of the call costs what any socket call costs.

*Ids and lifetime.* Ids follow py4j's scheme, ``"p0"``, ``"p1"``, ..., numbered per
process rather than per gateway (a GatewayServer outlives the gateways that used it, and
its stale proxies' ``g`` commands reach whichever callback server it points at now).
Each gateway keeps a ``PythonProxyPool`` (py4jni/_base.py). py4j's server makes a new
Java proxy for every proxy argument it reads, and each one, once Java's GC finalizes it,
sends a ``g`` command; so the pool counts the Java proxies of each object (one more per
send, one less per ``g``) and holds the Python object until the count is back to zero.
The same Python object sent again while it is in the pool reuses its id. (A proxy
argument py4j could not read, e.g. one naming a missing interface, is never finalized:
its object stays in the pool until the callback server stops, as in py4j.) Java hands a
proxy back to Python as a reference to the Java proxy (a JavaObject), as py4j does, not
as the Python object. ``shutdown_callback_server()`` empties the pool (Java's proxies
then fail when called); unlike py4j, a later proxy or ``start_callback_server()`` starts
a new server.

*Python entry point.* ``JavaGateway(python_server_entry_point=obj)`` puts ``obj`` in the
pool under py4j's id ``t`` and starts the callback server: Java reaches it with
``gatewayServer.getPythonServerEntryPoint(new Class[]{...})``.

*Callback server.* A listening socket on ``CallbackServerParameters.address``/``port``
(``127.0.0.1``:25334 by default, 0 for an ephemeral port), started by
``JavaGateway(callback_server_parameters=...)`` (``eager_load``, the default),
``start_callback_server()``, ``python_server_entry_point=``, or on demand when the first
proxy is passed (then, if the default port is taken, an ephemeral one). When it does not
listen where the GatewayServer's callback client points, it tells Java with
``GATEWAY_SERVER.resetCallbackClient(address, port)`` (three Java calls at start).

*Commands.* ``c`` (proxy id, method, arguments, ``e``) runs the Python method of that
name with the arguments decoded as call results are, and answers ``!y<value>`` with the
result encoded as call arguments are (in C: ``_py4jni.wire_decode_args`` and
``_py4jni.wire_answer``), or ``!xs<traceback>`` when it raises: Java throws
``py4j.Py4JException("An exception was raised by the Python Proxy. Return Message:
<traceback>")``, a ``Py4JJavaError`` back in Python if nothing catches it. With
``propagate_java_exceptions`` a ``Py4JJavaError`` raised by the callback rethrows its
Java exception (``!xr<id>``). ``g`` (proxy id, ``e``) answers ``!y``. Objects that do
not define ``toString``, ``hashCode`` or ``equals`` get ``str(obj)``, an identity hash and
identity (``other is self``) for them, as in-process. ``A`` (auth token, ``e``) first
on every connection when ``CallbackServerParameters.auth_token`` is set; a gateway made
without callback_server_parameters takes its own token for them, as in py4j (a
GatewayServer built with ``callbackClient(port, address, token)``, as PySpark's, sends
it; py4j's command-line GatewayServer with --enable-auth does not: pass
CallbackServerParameters without a token there).

*Pinned-thread mode* (py4jni.clientserver, a py4j ClientServer): Java calls a proxy on
the connection of the Python thread waiting for it; the C client hands the command to
the client's ``command_hook`` (``command_hook`` below), which runs it with ``execute``,
the same code the callback server's connections use. Java threads without such a
connection reach the ``PythonServer`` (at the end of this module, with its
``ClientServerConnection``; py4jni.clientserver exports both under py4j's names).

*Threads.* One daemon thread accepts; each Java connection is served by a daemon thread
of its own (py4j's Java side opens one connection per concurrent callback), which also
runs its TLS handshake (py4j runs it on the accepting thread), within the read_timeout
or 30 s, so that a peer stalled mid-handshake holds up neither other connections nor
``shutdown()``, which closes every connection, handshaking ones included. A callback
may call Java, which may call back into Python on another connection, to any
depth. py4jni's callback server never keeps the process alive (``daemonize`` and
``daemonize_connections`` are accepted and ignored). What an answer refers to (the
arguments, the result, Java objects made to convert it) is released once the next answer
on that connection is sent (or the connection closes): Java reads an answer's ids after
receiving it, so they must still exist then.
"""
from __future__ import annotations

import os
import socket
import struct
import threading
import weakref
from typing import Any, Callable

from .. import _base, _py4jni
from .._base import (DEFAULT_ADDRESS, DEFAULT_PYTHON_PROXY_PORT,  # noqa: F401
                     CallbackServerParameters, GatewayParameters, GatewayProperty,
                     PythonProxyPool, _close_socket, quiet_close)
from ..protocol import (AUTH_COMMAND_NAME, EMPTY_RESPONSE, ENTRY_POINT_OBJECT_ID,
                        ERROR_ON_RECEIVE, ERROR_ON_SEND, GATEWAY_SERVER_OBJECT_ID,
                        SHUTDOWN_GATEWAY_COMMAND_NAME, Py4JAuthenticationError, Py4JError,
                        Py4JJavaError, Py4JNetworkError, _callback_error_text, is_error,
                        smart_decode)

__all__ = ["CallbackServer", "PythonProxyPool", "CallbackConnection"]

_SUCCESS = b"!y\n"       # py4j's answer to `g`
_VOID = b"!yv\n"         # py4j's answer to a good auth token
_ERROR_NULL = b"!xn\n"   # py4j's answer to a bad token or an unknown command
HANDSHAKE_TIMEOUT = 30.0  # seconds a TLS handshake of an accepted connection may take
                          # when no read_timeout is set (the C transport's bound too)

def _identity_hash(obj: Any) -> int:
    return (id(obj) >> 4) & 0x7FFFFFFF


# What a proxy answers for java.lang.Object's methods its class does not define.
_OBJECT_METHODS: dict[str, Callable[[Any], Callable[..., Any]]] = {
    "toString": lambda obj: lambda: str(obj),
    "hashCode": lambda obj: lambda: _identity_hash(obj),
    "equals": lambda obj: lambda other: other is obj,
}


def _error_answer(client: Any, exc: BaseException, propagate: bool, keep: list[Any]) -> bytes:
    """py4j's answer for ``exc`` raised by a callback: ``!xs<traceback>`` (Java throws
    Py4JException with it), or ``!xr<id>`` rethrowing a Py4JJavaError's Java exception."""
    if propagate and isinstance(exc, Py4JJavaError):
        try:
            keep.append(exc.java_exception)
            return _py4jni.wire_answer(client, exc.java_exception, error=True)
        except Exception:  # noqa: BLE001 - e.g. detached: report the traceback instead
            pass
    try:
        text = _callback_error_text(exc)
    except Exception:  # noqa: BLE001 - formatting failed (deep recursion): name it at least
        text = f"Traceback unavailable\n{type(exc).__name__}: {exc!s:.2000}\n"
    try:
        return _py4jni.wire_answer(client, text, error=True)
    except Exception:  # noqa: BLE001 - lone surrogates in the text
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
        return _py4jni.wire_answer(client, text, error=True)


def _invoke(client: Any, obj: Any, method: str, parts: list[bytes], propagate: bool,
            keep: list[Any], abandon: bool = False) -> bytes:
    """Runs one ``c`` command and returns its answer. The arguments, the result and
    what converting it made are appended to ``keep``: Java objects among them must
    outlive the answer (Java resolves the ids of an answer after reading it)."""
    if obj is None:
        return _py4jni.wire_answer(client, "Object ID unknown", error=True)
    try:
        args = _py4jni.wire_decode_args(client, parts) if parts else ()
        keep.append(args)
        fn = getattr(obj, method, None)
        if fn is None:
            fallback = _OBJECT_METHODS.get(method)
            fn = fallback(obj) if fallback else getattr(obj, method)  # AttributeError
        result = fn(*args)
    except BaseException as exc:  # noqa: BLE001 - Java waits for an answer in any case
        if abandon and isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise  # not answered: the call waiting below raises it (see command_hook)
        return _error_answer(client, exc, propagate, keep)
    keep.append(result)
    try:
        return _py4jni.wire_answer(client, result, keep=keep)
    except Exception as exc:  # noqa: BLE001
        err = Py4JError(f"py4jni: Python method {type(obj).__name__}.{method} returned a "
                        f"{type(result).__name__} that cannot be converted to Java: {exc}")
        return _error_answer(client, err, False, keep)


def execute(client: Any, pool: PythonProxyPool, propagate: bool, lines: list[bytes],
            keep: list[Any], abandon: bool = False) -> bytes:
    """Runs one command Java sent to Python and returns its answer line: ``lines`` are
    the command's lines (each ending in ``\n``, the last ``e``). ``c`` calls a proxy
    (see _invoke, which appends to ``keep`` what must outlive the answer), ``g`` releases
    one Java proxy of an object; anything else answers py4j's error. With ``abandon`` a
    KeyboardInterrupt or SystemExit of the callback is raised instead of answered. Shared
    by the callback server's connections and py4j's pinned-thread mode
    (py4jni.clientserver)."""
    command = lines[0] if lines else b""
    if command == b"c\n" and len(lines) >= 4:
        pid = lines[1][:-1].decode("utf-8")
        method = lines[2][:-1].decode("utf-8", "surrogatepass")
        return _invoke(client, pool.dict.get(pid), method, lines[3:-1], propagate, keep,
                       abandon)
    if command == b"g\n" and len(lines) >= 3:
        pool.release(lines[1][:-1].decode("utf-8"))
        return _SUCCESS
    return _ERROR_NULL


def command_hook(client: Any, pool: PythonProxyPool, params: Any) -> Callable[[bytes], bytes]:
    """A pinned-thread client's ``command_hook``: runs a command Java sent on the calling
    thread's connection (the C client hands over its whole text). What an answer refers
    to is kept per thread until that thread's next answer (a thread's connection is its
    own). A KeyboardInterrupt or SystemExit the callback raises (Ctrl-C reaches the main
    thread's callbacks; ``sys.exit``) is not answered, as in py4j: it ends the calls
    waiting below it on the thread, which raise it, and the connection is dropped."""
    client_ref = weakref.ref(client)
    propagate = bool(params.propagate_java_exceptions)
    local = threading.local()

    def run(command: bytes) -> bytes:
        client = client_ref()
        if client is None:
            return b"!xsthe py4jni gateway of this connection is gone\n"
        lines = [line + b"\n" for line in command.split(b"\n")[:-1]]
        kept: list[Any] = []
        answer = execute(client, pool, propagate, lines, kept, abandon=True)
        local.keep = kept  # the previous answer's objects go (Java has read it)
        return answer

    return run


def _signal(name: str, sender: Any, **params: Any) -> None:
    """Sends py4j's server signal ``py4jni.java_gateway.<name>`` (made in py4jni._base);
    a receiver's error is logged, never raised into the server's threads."""
    try:
        getattr(_base, name).send(sender, **params)
    except Exception:  # noqa: BLE001
        _base._log().exception("a receiver of %s failed", name)


class CallbackConnection:
    """One connection from Java's callback client, served on a daemon thread of its own
    until Java closes it or the server shuts down. py4j's parameters: the server's
    ``pool``, the connection's ``input`` stream (None: one is made over the socket), the
    accepted ``socket_instance``, the ``gateway_client`` the callbacks call Java
    through, the ``callback_server_parameters`` (None: the server's) and the
    ``callback_server`` it belongs to (CallbackServer._create_connection makes them)."""

    def __init__(self, pool: PythonProxyPool, input: Any,  # noqa: A002 - py4j's name
                 socket_instance: socket.socket, gateway_client: Any,
                 callback_server_parameters: Any, callback_server: "CallbackServer") -> None:
        self.pool = pool
        self.input = input
        # weak, as the server's: a connection must not keep a dropped gateway's client
        self._client_ref = (weakref.ref(gateway_client) if gateway_client is not None
                            else callback_server._client_ref)
        self.callback_server_parameters = (callback_server_parameters or
                                           callback_server.callback_server_parameters)
        self.callback_server = self.server = callback_server
        self.socket: socket.socket | None = socket_instance
        self.daemon = True  # always (docs/deviations.md): py4j's daemonize_connections
        self.thread: threading.Thread | None = threading.Thread(
            target=self.run, daemon=True,
            name=f"py4jni-callback-connection-{callback_server._accepted}")
        self._stopped = threading.Lock()  # held once server_connection_stopped was sent
        self._reset = False  # close with a RST (py4j's set_linger)

    @property
    def gateway_client(self) -> Any:
        """py4j's: the client the callbacks call Java through (None once it is gone)."""
        return self._client_ref()

    def start(self) -> None:
        if self.thread is not None:
            self.thread.start()

    def close(self, reset: bool = False) -> None:
        """Wakes the serving thread, which then closes the socket (any thread); with
        ``reset``, as py4j, with a RST, so that Java's next write fails (and its callback
        client retries on a new connection). Sends py4j's server_connection_stopped
        (once)."""
        if reset:
            self._reset = True
        sock = self.socket
        try:
            if sock is not None:
                sock.shutdown(socket.SHUT_RD if reset else socket.SHUT_RDWR)
        except OSError:
            pass
        self._signal_stopped()

    def _signal_stopped(self) -> None:
        if self._stopped.acquire(blocking=False):
            _signal("server_connection_stopped", self.server, connection=self)

    def _handshake(self) -> bool:
        """The server side of a TLS handshake the accepting thread left to this thread
        (a socket of the server's ``ssl_context``), within the read_timeout or
        HANDSHAKE_TIMEOUT seconds; ``close()`` ends it at once. False (the error sent as
        server_connection_error) when it failed."""
        sock: Any = self.socket  # an ssl.SSLSocket here
        read_timeout = self.server.callback_server_parameters.read_timeout
        try:
            sock.settimeout(read_timeout or HANDSHAKE_TIMEOUT)
            sock.do_handshake()
            sock.settimeout(read_timeout or None)
            return True
        except Exception as exc:  # noqa: BLE001 - ssl.SSLError, a time-out; closed
            # meanwhile: OSError, or AttributeError once close() dropped the TLS object
            if not self.server.is_shutdown:
                _signal("server_connection_error", self.server, error=exc)
            return False

    def run(self) -> None:
        server = self.server
        sock = self.socket
        if sock is None:  # closed before it was served
            return
        if server.ssl_context is not None and server._tls_in_python and not self._handshake():
            self._signal_stopped()
            sock.close()
            self.socket = None  # py4j's: an ended connection has no socket
            return
        rfile = self.input if self.input is not None else sock.makefile("rb")
        readline = rfile.readline
        sendall = sock.sendall
        client_ref = self._client_ref
        pool = self.pool
        propagate = bool(self.callback_server_parameters.propagate_java_exceptions)
        token = self.callback_server_parameters.auth_token
        # What the previous answer referred to (its arguments, result, conversions) is
        # released once the next answer is sent: by then Java has read that answer, at
        # least on every thread that does not stall between the two.
        keep: list[Any] = []
        try:
            if token is not None and not self._authenticate(readline, sendall, token):
                self._reset = True
                return
            while True:
                command = readline()
                if command not in (b"c\n", b"g\n"):
                    if command:  # not py4j's protocol: say so and drop the connection
                        sendall(_ERROR_NULL)
                    return
                lines = [command]
                while lines[-1] != b"e\n":
                    line = readline()
                    if not line:
                        return
                    lines.append(line)
                client = client_ref()
                if client is None:
                    sendall(b"!xsthe py4jni gateway of this callback server is gone\n")
                    continue
                kept: list[Any] = []
                answer = execute(client, pool, propagate, lines, kept)
                del client
                sendall(answer)
                keep[:] = kept  # the previous answer's objects go (deletes sent now)
        except TimeoutError:  # read_timeout: py4j resets the connection (Java retries)
            self._reset = True
        except (OSError, ValueError):  # closed by Java or by shutdown
            pass
        finally:
            self._signal_stopped()
            try:
                if self._reset:  # SO_LINGER 0: close() sends a RST
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                    struct.pack("ii", 1, 0))
                rfile.close()
                sock.close()
            except OSError:
                pass
            self.socket = None  # py4j's: an ended connection has no socket

    @staticmethod
    def _authenticate(readline: Any, sendall: Any, token: str) -> bool:
        """py4j's ``A`` command (token, ``e``): answers ``!yv`` or ``!xn``."""
        command = readline()
        given = readline()[:-1].decode("utf-8", "replace")
        readline()  # "e"
        if command == b"A\n" and given == token:
            sendall(_VOID)
            return True
        sendall(_ERROR_NULL)
        return False


class CallbackServer:
    """py4j's callback server: accepts Java's callback connections and serves each on a
    daemon thread. ``start()``, ``shutdown()``, ``close()``, ``get_listening_port()``,
    ``get_listening_address()`` as in py4j. With ``ssl_context`` (a server-side
    ``ssl.SSLContext``) each accepted connection is wrapped in TLS, as py4j does."""

    #: Whether accepted connections get their TLS here (Python's ssl module) or in C.
    _tls_in_python = True

    def __init__(self, pool: PythonProxyPool, gateway_client: Any,
                 port: int = DEFAULT_PYTHON_PROXY_PORT, address: str = DEFAULT_ADDRESS,
                 callback_server_parameters: Any = None) -> None:
        if callback_server_parameters is None:
            callback_server_parameters = CallbackServerParameters(address=address, port=port)
        self.callback_server_parameters = callback_server_parameters
        self.port = callback_server_parameters.port
        self.address = callback_server_parameters.address
        self.pool = pool
        self._client_ref = weakref.ref(gateway_client)
        self.auth_token = callback_server_parameters.auth_token
        self.ssl_context = callback_server_parameters.ssl_context
        # py4j's WeakSet: a connection leaves it when it is freed, not when it ends (the
        # accepting thread holds the newest one until it accepts another, as py4j's)
        self.connections: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self._accepted = 0
        self.lock = threading.RLock()
        self.is_shutdown = False
        self.is_shutting_down = False  # py4j's: set when shutdown() begins
        self.ssl_context = getattr(callback_server_parameters, "ssl_context", None)
        self.server_socket: socket.socket | None = None
        self.thread: threading.Thread | None = None
        self._listening_address = self.address
        self._listening_port = self.port

    @property
    def gateway_client(self) -> Any:
        return self._client_ref()

    def start(self) -> None:
        """Binds, listens and starts accepting (one daemon thread). Raises
        Py4JNetworkError when the address cannot be bound."""
        try:
            family = socket.getaddrinfo(self.address, self.port, type=socket.SOCK_STREAM)[0][0]
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError as exc:
            raise Py4JNetworkError(f"cannot create the callback server socket for "
                                   f"{self.address}:{self.port}: {exc}", exc) from exc
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.address, self.port))
            sock.listen(64)
        except OSError as exc:
            sock.close()
            raise Py4JNetworkError(f"An error occurred while trying to start the callback "
                                   f"server ({self.address}:{self.port}): {exc}", exc) from exc
        info = sock.getsockname()
        self._listening_address, self._listening_port = info[0], info[1]
        self.server_socket = sock
        self.thread = threading.Thread(target=self.run, daemon=True,
                                       name="py4jni-callback-server")
        self.thread.start()
        _signal("server_started", self, server=self)

    def get_listening_port(self) -> int:
        """The port it listens on (the real one when ``port`` was 0)."""
        return self._listening_port

    def get_listening_address(self) -> str:
        """The address it listens on."""
        return self._listening_address

    def run(self) -> None:
        """Accepts connections until shutdown (the accepting thread's body)."""
        sock = self.server_socket
        read_timeout = self.callback_server_parameters.read_timeout
        while not self.is_shutdown and sock is not None:
            try:
                conn, _ = sock.accept()
            except OSError as exc:
                if self.is_shutdown:
                    break
                _signal("server_connection_error", self, error=exc)
                continue  # e.g. ECONNABORTED: keep accepting
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if read_timeout:
                conn.settimeout(read_timeout)
            if self.ssl_context is not None and self._tls_in_python:
                # the handshake runs on the connection's thread (CallbackConnection.run),
                # bounded, so a peer stalled in it never holds up accepting or shutdown
                conn = self.ssl_context.wrap_socket(conn, server_side=True,
                                                    do_handshake_on_connect=False)
            self._accepted += 1
            connection = self._create_connection(conn, None)
            with self.lock:
                if self.is_shutdown:
                    conn.close()
                    break
                self.connections.add(connection)
            connection.start()
            _signal("server_connection_started", self, connection=connection)
        _signal("server_stopped", self, server=self)

    def _create_connection(self, socket_instance: socket.socket, stream: Any) -> Any:
        """The object serving an accepted connection (py4j's hook; ``start()`` and
        ``close()``): a CallbackConnection (py4jni.clientserver.PythonServer makes
        ClientServerConnections)."""
        return CallbackConnection(self.pool, stream, socket_instance, self.gateway_client,
                                  self.callback_server_parameters, self)

    def close(self) -> None:
        """Closes every open callback connection (Java opens new ones when it needs to)."""
        with self.lock:
            connections = list(self.connections)
        for connection in connections:
            connection.close()

    def shutdown(self) -> None:
        """Stops accepting, closes every connection and empties the pool (any thread)."""
        self._stop(clear_pool=True)

    def _stop(self, clear_pool: bool) -> None:
        with self.lock:
            if self.is_shutdown:
                return
            self.is_shutting_down = True
        _signal("pre_server_shutdown", self, server=self)
        with self.lock:
            if self.is_shutdown:
                return
            self.is_shutdown = True
            sock, self.server_socket = self.server_socket, None
            connections = list(self.connections)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes accept() on Linux
            except OSError:
                pass
            sock.close()
        for connection in connections:
            connection.close()
        if clear_pool:
            self.pool.clear()
        thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self.thread = None
        _signal("post_server_shutdown", self, server=self)


class _GatewayCallbacks:
    """A socket-mode gateway's callback state: its proxy pool, its callback server
    (started once, on demand or on request) and the client's proxy hook. In py4j's
    pinned-thread mode (``pinned``, a ClientServer) Java calls proxies on the calling
    thread's connection: the server (a PythonServer) only serves Java threads of their
    own, is started only on request or by ``eager_load``, and Java is never re-pointed
    (its ClientServer was told the Python port)."""

    def __init__(self, gateway: Any, params: Any, explicit: bool, pinned: bool = False) -> None:
        self.pinned = pinned
        self._gateway_ref = weakref.ref(gateway)
        self._client_ref = weakref.ref(gateway._gateway_client)
        self.params = params
        self.explicit = explicit
        self.pool = PythonProxyPool()
        self.server: CallbackServer | None = None
        self.java_pointed = False  # Java's callback client was checked/reset for server
        self.entry_point: Any = None
        self.lock = threading.RLock()

    def proxy_text(self, obj: Any) -> str | None:
        """The client's proxy hook: py4j's proxy text ``<id>;<fqn>;...`` for ``obj``
        (starting the callback server first if needed), or None when ``obj`` is not a
        proxy (no non-empty ``Java.implements``)."""
        try:
            implements = obj.Java.implements
            names = list(implements)
        except (AttributeError, TypeError):
            return None
        if not names:
            return None
        if isinstance(implements, str):  # its characters are no interface names
            raise Py4JError(f"py4jni: {type(obj).__name__}.Java.implements must be a list of "
                            f"interface names, not a str ({implements!r})")
        for name in names:
            # ";" and line ends would split the command; C reads a name up to a NUL
            if not isinstance(name, str) or not name or any(c in name for c in ";\n\r\0"):
                raise Py4JError(f"py4jni: {type(obj).__name__}.Java.implements must list "
                                f"interface names (str), not {name!r}")
        if self.pinned:
            pass  # Java calls it back on the calling thread's connection
        elif self.server is None:
            self.start(None, implicit=True)
        elif not self.java_pointed:  # Java was not up when the server started
            self._point_java_at(self.server)
        return self.pool.put(obj) + ";" + ";".join(names)

    def start(self, params: Any, implicit: bool = False) -> bool:
        """Starts the callback server unless it runs; True when this call started it."""
        with self.lock:
            if self.server is not None:
                return False
            client = self._client_ref()
            if client is None or client.closed:
                raise Py4JError("py4jni: cannot start a callback server: the gateway has "
                                "been shut down")
            params = params or self.params
            if self.pinned:
                server = self._python_server(client, params)
                server.start()
                self._publish(server)
                return True
            server = CallbackServer(self.pool, client, callback_server_parameters=params)
            try:
                server.start()
            except Py4JNetworkError:
                if not (implicit and not self.explicit and params.port):
                    raise
                # on demand with py4j's default port taken: any free port will do
                server = CallbackServer(self.pool, client, callback_server_parameters=(
                    CallbackServerParameters(address=params.address, port=0,
                                             auth_token=params.auth_token,
                                             read_timeout=params.read_timeout,
                                             propagate_java_exceptions=params.
                                             propagate_java_exceptions)))
                server.start()
            try:
                self._point_java_at(server)
            except Py4JNetworkError:
                pass  # Java is not up yet: pointed when the first proxy is sent
            except BaseException:
                server._stop(clear_pool=False)
                raise
            if self.entry_point is not None:
                self.pool.put(self.entry_point, force_id=ENTRY_POINT_OBJECT_ID)
            self._publish(server)
            return True

    def _publish(self, server: CallbackServer | None) -> None:
        """Records the running server, also as the gateway's ``_callback_server`` (py4j's
        instance attribute, which PySpark reads: ``ensure_callback_server_started`` takes
        the port from its ``server_socket`` and re-points Java at it)."""
        self.server = server
        gateway = self._gateway_ref()
        if gateway is not None:
            gateway.__dict__["_callback_server"] = server

    def _python_server(self, client: Any, params: Any) -> CallbackServer:
        """py4j's PythonServer for a pinned-thread client (py4jni.clientserver)."""
        gateway = self._gateway_ref()
        java_params = gateway.gateway_parameters if gateway is not None else None
        prop = GatewayProperty(False, self.pool)
        if self.entry_point is not None:
            self.pool.put(self.entry_point, force_id=ENTRY_POINT_OBJECT_ID)
        return PythonServer(client, java_params, params, prop)

    def _point_java_at(self, server: CallbackServer) -> None:
        """Tells the GatewayServer where the callback server listens, when its callback
        client points elsewhere (py4j's resetCallbackClient)."""
        gateway = self._gateway_ref()
        if gateway is None:
            return
        port, address = server.get_listening_port(), server.get_listening_address()
        java_server = gateway.__dict__.get("java_gateway_server")
        if java_server is None:  # a port nothing served yet (JavaGateway._settle)
            raise Py4JNetworkError("py4jni: the gateway's server is not there yet")
        try:
            java_port = java_server.getPythonPort()
            java_address = java_server.getPythonAddress()
            if java_port != port or java_address.getHostAddress() != address:
                java_server.resetCallbackClient(
                    gateway.jvm.java.net.InetAddress.getByName(address), port)
            self.java_pointed = True
        except Py4JNetworkError:
            raise  # Java not reachable (yet)
        except Py4JError as exc:
            raise Py4JError(f"py4jni: cannot point the Java side at the callback server "
                            f"({address}:{port}) through {GATEWAY_SERVER_OBJECT_ID}."
                            f"resetCallbackClient: {exc}", exc) from exc

    def shutdown(self) -> None:
        """Stops the callback server (if it runs); the pool is emptied."""
        with self.lock:
            server = self.server
            self._publish(None)
        if server is not None:
            server.shutdown()


def _state(gateway: Any) -> _GatewayCallbacks:
    return gateway.__dict__["_socket_callbacks"]


def attach(gateway: Any, explicit_params: bool, start: bool, pinned: bool = False) -> None:
    """Sets a socket-mode gateway up for callbacks (called by JavaGateway): the proxy
    hook, the Python entry point, and the callback server when ``start`` (or, outside
    py4j's pinned-thread mode, when there is an entry point: Java cannot reach it
    otherwise). ``pinned``: a ClientServer's client, whose command hook runs the
    callbacks Java sends on a thread's own connection."""
    params = gateway.callback_server_parameters
    # As in py4j, the gateway's auth token is the callback server's only when no
    # callback_server_parameters were given (JavaGateway's default parameters carry it).
    state = _GatewayCallbacks(gateway, params, explicit_params, pinned)
    gateway.__dict__["_socket_callbacks"] = state
    # py4j's instance attributes (None until a server runs; the port asked for)
    gateway.__dict__["_callback_server"] = None
    gateway.__dict__["_python_proxy_port"] = params.port
    client = gateway._gateway_client
    client.proxy_hook = state.proxy_text
    if pinned:
        client.command_hook = command_hook(client, state.pool, params)
    entry = getattr(gateway, "python_server_entry_point", None)
    if entry is not None:
        state.entry_point = entry
        state.pool.put(entry, force_id=ENTRY_POINT_OBJECT_ID)
    # Not at interpreter exit: py4j's callback server lives until the process ends, and
    # a framework's JVM that watches it (PyFlink's PythonGatewayServer pings it and
    # exits when it fails) must not start its exit while this process still runs.
    weakref.finalize(gateway, state.shutdown).atexit = False
    if start or (entry is not None and not pinned):
        state.start(None)


def start_callback_server(gateway: Any, params: Any = None) -> bool:
    """JavaGateway.start_callback_server in socket mode: True when this call started
    the server, False when it was running."""
    return _state(gateway).start(params)


def get_callback_server(gateway: Any) -> CallbackServer | None:
    """The running callback server, or None."""
    return _state(gateway).server


def shutdown_callback_server(gateway: Any) -> None:
    """Stops the callback server (if it runs)."""
    _state(gateway).shutdown()


def pool_of(gateway: Any) -> PythonProxyPool:
    """The gateway's proxy pool (tests, diagnostics)."""
    return _state(gateway).pool


# -- py4j's pinned-thread mode (py4jni.clientserver): PythonServer, its connections --


class PythonServer(CallbackServer):
    """py4j's server of the pinned-thread mode: accepts the connections Java threads
    open to Python (``python_parameters`` address and port) and serves each on a Python
    thread of its own (a ClientServerConnection), where Java calls the callback makes
    go out on that same connection."""

    #: The C transport serves these connections: it runs their TLS handshake itself
    #: (the JavaClient's serve context), so accepted sockets stay plain here.
    _tls_in_python = False

    def __init__(self, java_client: Any, java_parameters: Any, python_parameters: Any,
                 gateway_property: Any) -> None:
        super().__init__(pool=gateway_property.pool, gateway_client=java_client,
                         callback_server_parameters=python_parameters)
        self.java_parameters = java_parameters
        self.python_parameters = python_parameters
        self.gateway_property = gateway_property

    def _create_connection(self, socket_instance: Any, stream: Any) -> "ClientServerConnection":
        connection = ClientServerConnection(
            self.java_parameters, self.python_parameters, self.gateway_property,
            self.gateway_client, python_server=self)
        connection.init_socket_from_python_server(socket_instance, stream)
        return connection


class ClientServerConnection(CallbackConnection):
    """py4j's two-way connection of the pinned-thread mode. As the PythonServer makes
    them: ``start()`` serves the accepted socket on a new daemon thread, which it
    becomes the Java connection of (the C client reads Java's commands, runs them
    through the client's command hook and answers); ``close()`` ends it. Made by user
    code: ``connect_to_java_server()``, then raw py4j text with ``send_command`` (Java's
    callbacks on it run in the caller), ``shutdown_gateway()``, ``close()``."""

    def __init__(self, java_parameters: Any, python_parameters: Any, gateway_property: Any,
                 java_client: Any, python_server: Any = None) -> None:
        self.java_parameters = java_parameters
        self.python_parameters = python_parameters
        params = java_parameters or GatewayParameters()  # py4j's JavaParameters()
        self.address = self.java_address = params.address
        self.port = self.java_port = params.port
        self.python_address = python_parameters.address
        self.python_port = python_parameters.port
        self.ssl_context = None
        self.socket: Any = None
        self.stream: Any = None
        self.gateway_property = gateway_property
        self.pool = gateway_property.pool
        self.is_connected = False
        self.java_client = java_client
        self.python_server = self.server = python_server
        self.initiated_from_client = False
        self.thread: threading.Thread | None = None
        self._stopped = threading.Lock()  # held once server_connection_stopped was sent

    def init_socket_from_python_server(self, socket: Any, stream: Any) -> None:
        """Adopts a socket the PythonServer accepted."""
        self.socket = socket
        self.stream = stream
        self.is_connected = True

    def connect_to_java_server(self) -> None:
        """py4j's raw client connection: connects to the JavaServer (authenticating with
        ``java_parameters.auth_token``) for ``send_command``. (A ClientServer's own calls
        go through its C client, a connection per thread.)"""
        try:
            sock = socket.create_connection((self.java_address, self.java_port))
            context = self.java_parameters.ssl_context
            if context:  # py4j's wrap_socket(server_hostname=java_address)
                sock = context.wrap_socket(sock, server_hostname=self.java_address)
            sock.settimeout(self.java_parameters.read_timeout or None)
            self.socket, self.stream = sock, sock.makefile("rb")
            self.is_connected = self.initiated_from_client = True
        except OSError as exc:
            self.close()
            raise Py4JNetworkError(f"An error occurred while trying to connect to the Java "
                                   f"server ({self.java_address}:{self.java_port})",
                                   exc) from exc
        token = self.java_parameters.auth_token
        if token and is_error(self.send_command(f"{AUTH_COMMAND_NAME}\n{token}\n"))[0]:
            self.close(reset=True)
            raise Py4JAuthenticationError("Failed to authenticate with gateway server.")

    def send_command(self, command: str) -> str:
        """Sends raw py4j command text and returns the answer without its ``!``. Commands
        Java sends meanwhile on this connection (callbacks) run here, as in py4j."""
        try:
            self.socket.sendall(command.encode("utf-8"))
        except Exception as exc:  # noqa: BLE001
            raise Py4JNetworkError("Error while sending", exc, ERROR_ON_SEND) from exc
        propagate = bool(self.python_parameters.propagate_java_exceptions)
        keep: list[Any] = []
        try:
            while True:
                line = self.stream.readline()
                if not line.strip():
                    raise Py4JNetworkError("Answer from Java side is empty",
                                           when=EMPTY_RESPONSE)
                if line.startswith(b"!"):
                    return smart_decode(line[1:-1])
                lines = [line]
                while lines[-1] != b"e\n":
                    lines.append(self.stream.readline())
                    if not lines[-1]:
                        raise Py4JNetworkError("Answer from Java side is empty",
                                               when=EMPTY_RESPONSE)
                kept: list[Any] = []
                self.socket.sendall(execute(self.java_client, self.pool, propagate,
                                            lines, kept))
                keep[:] = kept
        except Py4JNetworkError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise Py4JNetworkError("Error while sending or receiving", exc,
                                   ERROR_ON_RECEIVE) from exc

    def shutdown_gateway(self) -> None:
        """Asks the Java side to shut its ClientServer down, then closes."""
        if not self.is_connected:
            raise Py4JError("Gateway must be connected to send shutdown cmd.")
        try:
            self.socket.sendall(SHUTDOWN_GATEWAY_COMMAND_NAME.encode("utf-8"))
        except OSError:
            pass
        self.close()

    def close(self, reset: bool = False) -> None:
        """Closes the connection (a RST when ``reset``); a served one's thread then ends."""
        if self.socket is None:
            return
        if self.initiated_from_client:
            _close_socket(self.socket, self.stream, reset)
            self.socket = self.stream = None
            self.is_connected = False
            return
        super().close(reset)

    def start(self) -> None:
        """Serves the connection on a new daemon thread."""
        self.thread = threading.Thread(target=self.run, daemon=True,
                             name=f"py4jni-clientserver-connection-{self.socket.fileno()}")
        self.thread.start()

    def shutdown_socket(self, remote_port: int, local_port: int) -> None:
        """py4j's: asks the Java side to shut its socket with these ports down (py4j's
        ``z`` command), then closes this connection. Errors are logged."""
        if not self.is_connected:
            raise Py4JError("Gateway must be connected to send cancel cmd.")
        try:
            quiet_close(self.stream)
            self.socket.sendall(f"z\n127.0.0.1\n{remote_port}\n{local_port}\n".encode("utf-8"))
            self.close()
            self.is_connected = False
        except Exception:  # noqa: BLE001 - py4j logs it
            _base._log().exception("Exception occurred while shutting down connection")

    def run(self) -> None:
        """Serves Java's commands on this thread until Java closes the connection."""
        client = self.java_client
        if isinstance(client, _py4jni.Client) and client.caps & _py4jni.CAP_PINNED:
            client.set_thread_connection(self)  # as py4j: this thread's connection
        self.wait_for_commands()

    def wait_for_commands(self) -> None:
        """Serves Java's commands on this connection, on the calling thread, until Java
        closes it (the C client reads, runs them through the command hook, answers)."""
        reset = False
        try:
            _check_serving_context(self.python_parameters)
            # C serves (and closes) a duplicate; the socket stays here for close()
            fd = os.dup(self.socket.fileno())
            _py4jni.serve_connection(self.java_client, fd,
                                     self.python_parameters.auth_token,
                                     float(self.python_parameters.read_timeout or 0.0))
        except Exception as exc:  # noqa: BLE001 - a refused token, a broken connection
            # py4j resets a connection that timed out or failed authentication, so that
            # Java's next command on it fails on write and Java retries on a new one
            reset = isinstance(exc, Py4JAuthenticationError) or (
                isinstance(exc, Py4JNetworkError) and isinstance(exc.cause, TimeoutError))
            _base._log().info("pinned-thread connection from Java ended with an error",
                        exc_info=True)
        finally:
            self._signal_stopped()
            if reset and self.socket is not None:
                try:  # the last descriptor of the socket: its close sends a RST
                    self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                except OSError:
                    pass
            quiet_close(self.socket)
            self.socket = None  # py4j's: an ended connection has no socket
            self.is_connected = False



def _check_serving_context(python_parameters: Any) -> None:
    """Refuses to serve a connection whose TLS context (PythonParameters' ssl_context,
    live: it may have changed since the server started) has a callback OpenSSL would run
    into Python's ssl objects, which the C transport's connections are not
    (``sni_callback``, ``keylog_filename``, ``_msg_callback``): Py4JError naming it."""
    context = getattr(python_parameters, "ssl_context", None)
    if context is None:
        return
    for name in ("sni_callback", "keylog_filename", "_msg_callback"):
        if getattr(context, name, None) is not None:
            raise Py4JError(f"py4jni: PythonParameters(ssl_context=...) cannot serve Java's "
                            f"connection: its {name} is set (OpenSSL would call back into "
                            "Python's ssl objects)")
