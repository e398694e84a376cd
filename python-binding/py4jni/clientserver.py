"""py4j's ``clientserver`` module: in-process, or py4j's pinned-thread socket mode.

py4j's ClientServer pins each Python thread to one Java thread so that a callback runs
on the Python thread that made the Java call.

*In-process* (``ClientServer()`` with py4j's default parameters) that is how every call
works: Java calls back on the thread that called it, and callbacks need no server.
``ClientServer`` is then the in-process ``JavaGateway`` with py4j's constructor.

*Socket mode* (JavaParameters naming a peer: a port, address or auth token other than
py4j's defaults; or the py4j switch's PY4JNI_MODE=socket) talks to the JavaServer of a
py4j ``ClientServer`` in Java, as py4j does. Each Python thread has a connection of its
own (opened on its first call, closed when the thread ends: py4j's
ThreadLocalConnectionFinalizer), served on the Java side by a Java thread of its own. A
Java call that calls a Python proxy sends the command on that same connection: the
waiting Python thread runs it (the C client hands it to the client's ``command_hook``,
py4jni/socket_callbacks.py runs it as the callback server does), answers, and goes on
waiting for its own answer, to any depth. Java threads with no such connection connect
to Python's ``PythonServer`` (``python_parameters`` address and port, with its
``auth_token``; started at construction when ``eager_load``, py4j's default); each of
their connections is served on a Python thread of its own, and Java calls that the
callback makes go out on that same connection. ``shutdown()`` asks the Java side to stop
its JavaServer (py4j's ``s`` command) and stops the PythonServer; ``close()`` closes the
connections and leaves Java running. A JavaObject dropped in Python is released on the
dropping thread's connection (or a pooled one for a thread without a connection).
TLS: ``JavaParameters(ssl_context=...)`` for the connections to Java (the certificate
checked against ``address`` when the context's ``check_hostname`` is set, as in py4j),
``PythonParameters(ssl_context=...)`` for the PythonServer's (a server-side context with
its certificate chain); the C transport runs both with the contexts' OpenSSL settings.
"""
from __future__ import annotations

import os
import socket
import struct
import threading
import time
import weakref
from collections import deque  # noqa: F401 - py4j exports it
from threading import Thread, local  # noqa: F401 - py4j exports them
from typing import Any

from . import _py4jni, _switch
from .java_gateway import (DEFAULT_ACCEPT_TIMEOUT_PLACEHOLDER, DEFAULT_ADDRESS,  # noqa: F401
                           DEFAULT_PORT, DEFAULT_PYTHON_PROXY_PORT, CallbackServerParameters,
                           GatewayClient, GatewayConnectionGuard, GatewayParameters,
                           JavaGateway, _close_socket, _set_tls, do_client_auth, logger,
                           quiet_close,
                           quiet_shutdown, server_connection_stopped, set_linger)
from .protocol import (AUTH_COMMAND_NAME, EMPTY_RESPONSE, ERROR_ON_RECEIVE,  # noqa: F401
                       ERROR_ON_SEND, SHUTDOWN_GATEWAY_COMMAND_NAME, Py4JAuthenticationError,
                       Py4JError, Py4JNetworkError, get_command_part, get_return_value,
                       is_error, smart_decode)
from .socket_callbacks import CallbackConnection, CallbackServer

SHUTDOWN_FINALIZER_WORKER = "__shutdown__"
DEFAULT_WORKER_SLEEP_TIME = 1


class FinalizerWorker(Thread):
    """py4j's worker that releases Java objects queued on ``deque`` (tasks
    ``(java_client, target_id)``) until it pops SHUTDOWN_FINALIZER_WORKER."""

    def __init__(self, deque: Any) -> None:  # noqa: A002 - py4j's name
        super().__init__()
        self.deque = deque

    def run(self) -> None:
        while True:
            try:
                task = self.deque.pop()
            except IndexError:
                time.sleep(DEFAULT_WORKER_SLEEP_TIME)
                continue
            if task == SHUTDOWN_FINALIZER_WORKER:
                return
            java_client, target_id = task
            java_client.garbage_collect_object(target_id, False)


class ThreadLocalConnectionFinalizer:
    """Removes a thread's connection (a weak reference) from ``dequeue`` when the
    thread's locals are collected."""

    def __init__(self, connection: Any, dequeue: Any) -> None:
        self.connection = connection
        self.deque = dequeue

    def __del__(self) -> None:
        conn = self.connection() if isinstance(self.connection, weakref.ReferenceType) else None
        if conn is not None:
            try:
                self.deque.remove(conn)
            except ValueError:
                pass


class ClientServerConnectionGuard(GatewayConnectionGuard):
    """A guard that gives nothing back on exit (a pinned connection stays with its
    thread)."""

    def __exit__(self, type: Any, value: Any, traceback: Any) -> None:  # noqa: A002
        pass


class _JavaClientType(type(GatewayClient)):  # type: ignore[misc]
    """isinstance(x, JavaClient) holds for every pinned-thread py4jni client."""

    def __instancecheck__(cls, obj: Any) -> bool:
        if isinstance(obj, _py4jni.Client):
            return bool(obj.caps & _py4jni.CAP_PINNED)
        return type.__instancecheck__(cls, obj)


class JavaClient(GatewayClient, metaclass=_JavaClientType):
    """py4j's client of the pinned-thread mode: constructing one makes a py4jni
    pinned-thread socket client (each thread uses a connection of its own) for the
    JavaServer at ``java_parameters``' address and port, authenticating with its
    ``auth_token``. ``ClientServer`` makes one; its ``command_hook`` runs Java's
    callbacks (set by the gateway; see py4jni.socket_callbacks)."""

    def __new__(cls, java_parameters: Any, python_parameters: Any,
                gateway_property: Any = None, finalizer_deque: Any = None) -> Any:
        client = _py4jni.socket_client(java_parameters.address, java_parameters.port,
                                       java_parameters.auth_token,
                                       float(java_parameters.read_timeout or 0.0),
                                       pinned=True)
        _set_tls(client, java_parameters, python_parameters, "JavaParameters",
                 "PythonParameters")
        client.java_parameters = client.gateway_parameters = java_parameters
        client.python_parameters = python_parameters
        client.address, client.port = java_parameters.address, java_parameters.port
        client.auto_close, client.is_connected = True, True
        client.ssl_context = java_parameters.ssl_context
        client.gateway_property, client.converters = gateway_property, None
        client.finalizer_deque = finalizer_deque
        client.thread_connection = local()  # py4j's: see get_thread_connection
        if gateway_property is not None:
            from .socket_callbacks import command_hook
            client.command_hook = command_hook(client, gateway_property.pool,
                                               python_parameters)
        return client


JavaClient.get_thread_connection = _py4jni.Client.get_thread_connection
JavaClient.set_thread_connection = _py4jni.Client.set_thread_connection


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
        params = java_parameters or JavaParameters()
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
        self.thread: Thread | None = None
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
        import socket
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
        from .socket_callbacks import execute
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
        self.thread = Thread(target=self.run, daemon=True,
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
            logger.exception("Exception occurred while shutting down connection")

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
            logger.info("pinned-thread connection from Java ended with an error",
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

def _asks_for_socket(java_parameters: Any, python_parameters: Any) -> bool:
    """True when the parameters name a socket peer (not py4j's defaults)."""
    jp = java_parameters
    if jp is not None and (jp.port != DEFAULT_PORT or jp.address != DEFAULT_ADDRESS or
                           jp.auth_token or jp.ssl_context is not None):
        return True
    return python_parameters is not None and python_parameters.ssl_context is not None


class JavaParameters(GatewayParameters):
    """py4j's parameters of the Java side of a ClientServer (``auto_gc`` and
    ``daemonize_memory_management`` are accepted and kept)."""

    def __init__(self, address: str = DEFAULT_ADDRESS, port: int = DEFAULT_PORT,
                 auto_field: bool = False, auto_close: bool = True,
                 auto_convert: bool = False, eager_load: bool = False,
                 ssl_context: Any = None, enable_memory_management: bool = True,
                 auto_gc: bool = False, read_timeout: float | None = None,
                 daemonize_memory_management: bool = True,
                 auth_token: str | None = None) -> None:
        super().__init__(address, port, auto_field, auto_close, auto_convert, eager_load,
                         ssl_context, enable_memory_management, read_timeout, auth_token)
        self.auto_gc = auto_gc
        self.daemonize_memory_management = daemonize_memory_management


class PythonParameters(CallbackServerParameters):
    """py4j's parameters of the Python side of a ClientServer. Socket mode: where the
    PythonServer listens, ``eager_load`` (start it with the gateway), ``read_timeout``,
    ``auth_token`` (Java's connections must present it); ``daemonize`` and
    ``daemonize_connections`` are accepted (py4jni's server threads are daemons).
    In-process no server is started. ``propagate_java_exceptions`` applies to callbacks
    in both."""

    def __init__(self, address: str = DEFAULT_ADDRESS, port: int = DEFAULT_PYTHON_PROXY_PORT,
                 daemonize: bool = False, daemonize_connections: bool = False,
                 eager_load: bool = True, ssl_context: Any = None, auto_gc: bool = False,
                 accept_timeout: Any = DEFAULT_ACCEPT_TIMEOUT_PLACEHOLDER,
                 read_timeout: float | None = None,
                 propagate_java_exceptions: bool = False,
                 auth_token: str | None = None) -> None:
        super().__init__(address, port, daemonize, daemonize_connections, eager_load,
                         ssl_context, accept_timeout, read_timeout,
                         propagate_java_exceptions, auth_token)
        self.auto_gc = auto_gc


class ClientServer(JavaGateway):
    """py4j's ClientServer. With JavaParameters naming a socket peer (a port, address or
    auth token other than py4j's defaults), or under the py4j switch's socket mode, py4j's
    pinned-thread socket mode against a Java ``py4j.ClientServer`` (see the module's
    docstring); otherwise the in-process gateway (the JVM in this process; under the
    py4j switch in in-process mode the parameters' sockets are not used: the program
    asked for py4jni). ``ssl_context`` gives TLS as in py4j (see the module's docstring).

    ``python_server_entry_point`` is what Java obtains with
    ``clientServer.getPythonServerEntryPoint(new Class[]{...})`` (socket mode) or
    ``org.py4jni.PythonEntryPoint.get(new Class[]{...})`` (in-process). py4jni's
    in-process keyword options (``classpath``, ``jvm_options``, ``libjvm``,
    ``check_jni``, ``keep_signals``, ``interrupt_java``, ``entry_point``) are accepted as
    for JavaGateway.
    """

    _pinned_threads = True  # socket mode: py4j's pinned-thread transport

    def __init__(self, java_parameters: JavaParameters | None = None,
                 python_parameters: PythonParameters | None = None,
                 python_server_entry_point: Any = None, **inproc_options: Any) -> None:
        mode = inproc_options.pop("mode", None)
        if mode is None and _switch.settings() is None:
            mode = "socket" if _asks_for_socket(java_parameters, python_parameters) else "inproc"
        elif mode is None and java_parameters is None:  # no port named: the switch's mode
            mode = _switch.mode_for(None)
        # (else JavaGateway applies the switch's launcher rule to java_parameters)
        self.java_parameters = java_parameters or JavaParameters()
        self.python_parameters = python_parameters or PythonParameters()
        super().__init__(gateway_parameters=self.java_parameters,
                         callback_server_parameters=self.python_parameters,
                         python_server_entry_point=python_server_entry_point,
                         auto_convert=self.java_parameters.auto_convert, mode=mode,
                         **inproc_options)
