"""What every layer of the gateway shares, below the transports: py4j's defaults,
parameter classes and server signals, its logger, the socket helpers py4j's modules
export, the proxy pool and the helper jar's path.

py4j defines these in its ``java_gateway`` module, and py4jni.java_gateway re-exports
every one of them (the same objects); the transports (py4jni/inproc_mode/,
py4jni/socket_mode/) take them from here, so that nothing below the gateway imports it.
"""
from __future__ import annotations

import _thread
import itertools
import os

TYPE_CHECKING = False  # typing's constant without importing typing (~5 ms)
if TYPE_CHECKING:
    import socket
    from typing import Any

from . import _py4jni
from . import protocol as proto
from ._py4jni import JavaMember
from .protocol import ENTRY_POINT_OBJECT_ID, Py4JAuthenticationError, smart_decode
from .signals import Signal

_logging_names: dict[str, Any] = {}


def _logging() -> dict[str, Any]:
    """py4j's ``NullHandler`` class, ``null_handler`` and ``logger`` (made once)."""
    if not _logging_names:
        import logging

        class NullHandler(logging.Handler):
            """A logging handler that drops records (py4j's logger has one)."""

            def emit(self, record: logging.LogRecord) -> None:
                pass

        handler = NullHandler()
        log = logging.getLogger("py4j.java_gateway")
        log.addHandler(handler)
        _logging_names.update(NullHandler=NullHandler, null_handler=handler, logger=log)
    return _logging_names


def _log() -> Any:
    return _logging()["logger"]


BUFFER_SIZE = 4096
DEFAULT_ADDRESS = "127.0.0.1"
DEFAULT_PORT = 25333
DEFAULT_PYTHON_PROXY_PORT = 25334
DEFAULT_ACCEPT_TIMEOUT_PLACEHOLDER = "DEFAULT"
DEFAULT_CALLBACK_SERVER_ACCEPT_TIMEOUT = 5
PY4J_SKIP_COLLECTIONS = "PY4J_SKIP_COLLECTIONS"
PY4J_TRUE = {"yes", "y", "t", "true"}

# py4j's server signals: sent by the socket-mode callback server (sender: the server).
server_connection_stopped = Signal()
server_connection_started = Signal()
server_connection_error = Signal()
server_started = Signal()
server_stopped = Signal()
pre_server_shutdown = Signal()
post_server_shutdown = Signal()


def get_create_new_process_group_kwargs() -> dict[str, Any]:
    """Popen keywords that start a child in its own process group (no SIGINT from us)."""
    if os.name != "nt":
        return {"preexec_fn": os.setpgrp}
    import subprocess
    return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}  # type: ignore[attr-defined]


def set_reuse_address(server_socket: socket.socket) -> None:
    """Sets SO_REUSEADDR on a server socket (not on Windows, where it means sharing)."""
    import socket
    if os.name != "nt":
        server_socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)


def set_default_callback_accept_timeout(accept_timeout: Any) -> None:
    """Deprecated in py4j (use CallbackServerParameters): sets the default accept timeout."""
    deprecated("set_default_callback_accept_timeout", "1.0", "CallbackServerParameters")
    global DEFAULT_CALLBACK_SERVER_ACCEPT_TIMEOUT
    DEFAULT_CALLBACK_SERVER_ACCEPT_TIMEOUT = accept_timeout


def deprecated(name: str, last_version: str, use_instead: str = "",
               level: int = 10, raise_exc: bool = False) -> None:
    """Logs that ``name`` is deprecated at ``level`` (10: logging.DEBUG); raises
    DeprecationWarning with ``raise_exc``."""
    msg = f"{name} is deprecated and will be removed in version {last_version}"
    if use_instead:
        msg += f". Use {use_instead} instead."
    _log().log(level, msg)
    if raise_exc:
        raise DeprecationWarning(msg)


def quiet_close(closable: Any) -> None:
    """Calls ``closable.close()`` (if not None), logging instead of raising."""
    if closable is None:
        return
    try:
        closable.close()
    except Exception:  # noqa: BLE001
        _log().debug("Exception while closing", exc_info=True)


def quiet_shutdown(socket_instance: Any) -> None:
    """Shuts a socket down both ways (if not None), logging instead of raising."""
    if socket_instance is None:
        return
    try:
        import socket
        socket_instance.shutdown(socket.SHUT_RDWR)
    except Exception:  # noqa: BLE001
        _log().debug("Exception while shutting down a socket", exc_info=True)


def set_linger(a_socket: socket.socket) -> None:
    """SO_LINGER on with timeout 0: closing the socket sends a RST."""
    import socket
    import struct
    a_socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack(b"ii", 1, 0))


def check_connection(a_socket: socket.socket, read_timeout: Any) -> None:
    """Raises when the peer closed ``a_socket`` (a short read that returns nothing)."""
    import socket
    a_socket.settimeout(0.0001)
    response = None
    try:
        response = a_socket.recv(2)
    except socket.timeout:
        pass
    finally:
        a_socket.settimeout(read_timeout)
    if response == b"":
        raise Exception("The connection was remotely closed.")


def do_client_auth(command: str, input_stream: Any, sock: Any, auth_token: str) -> bool:
    """Server side of py4j's auth: ``command`` must be ``A``, the next line the token;
    answers the peer and returns True, else raises Py4JAuthenticationError."""
    try:
        if command != proto.AUTH_COMMAND_NAME:
            raise Py4JAuthenticationError(
                f"Expected {proto.AUTH_COMMAND_NAME}, received {command}.")
        client_token = smart_decode(input_stream.readline()[:-1])
        input_stream.readline()  # the end marker
        if client_token != auth_token:
            sock.sendall(proto.ERROR_RETURN_MESSAGE.encode("utf-8"))
            raise Py4JAuthenticationError("Client authentication failed.")
        sock.sendall(proto.OUTPUT_VOID_COMMAND.encode("utf-8"))
    except Py4JAuthenticationError:
        raise
    except Exception as exc:  # noqa: BLE001
        _log().exception("An exception occurred while trying to authenticate a connection")
        raise Py4JAuthenticationError(cause=exc) from exc
    return True


class GatewayProperty:
    """What py4j shares between a gateway, its client and its callback server: the
    ``auto_field`` setting and the pool of Python objects Java holds."""

    def __init__(self, auto_field: bool, pool: Any, enable_memory_management: bool = True):
        self.auto_field = auto_field
        self._pool = pool
        self.enable_memory_management = enable_memory_management

    @property
    def pool(self) -> Any:
        """The proxy pool (an in-process gateway's, py4j's API only there, is made on
        first use)."""
        if self._pool is _POOL_ON_FIRST_USE:
            self._pool = PythonProxyPool()
        return self._pool

    @pool.setter
    def pool(self, pool: Any) -> None:
        self._pool = pool


_POOL_ON_FIRST_USE = object()


def helper_jar_path() -> str:
    """Path of the helper jar shipped inside this package (needed by the in-process JVM)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "py4jni-helper.jar")


class GatewayParameters:
    """py4j's socket settings. In-process, they are accepted and those without meaning
    there (address, port, auth_token, read_timeout) are ignored."""

    def __init__(self, address: str = DEFAULT_ADDRESS, port: int = DEFAULT_PORT,
                 auto_field: bool = False, auto_close: bool = True,
                 auto_convert: bool = False, eager_load: bool = False,
                 ssl_context: Any = None, enable_memory_management: bool = True,
                 read_timeout: float | None = None, auth_token: str | None = None) -> None:
        self.address = address
        self.port = port
        self.auto_field = auto_field
        self.auto_close = auto_close
        self.auto_convert = auto_convert
        self.eager_load = eager_load
        self.ssl_context = ssl_context
        self.enable_memory_management = enable_memory_management
        self.read_timeout = read_timeout
        self.auth_token = auth_token


class CallbackServerParameters:
    """py4j's callback-server settings. Socket mode: where the callback server listens
    (``port=0``: an ephemeral port), ``eager_load`` (start it with the gateway),
    ``read_timeout``, ``auth_token``, ``propagate_java_exceptions``
    (py4jni/socket_mode/callbacks.py). In-process callbacks need no server: only
    ``propagate_java_exceptions`` applies there."""

    def __init__(self, address: str = DEFAULT_ADDRESS, port: int = DEFAULT_PYTHON_PROXY_PORT,
                 daemonize: bool = False, daemonize_connections: bool = False,
                 eager_load: bool = True, ssl_context: Any = None,
                 accept_timeout: Any = DEFAULT_ACCEPT_TIMEOUT_PLACEHOLDER,
                 read_timeout: float | None = None,
                 propagate_java_exceptions: bool = False,
                 auth_token: str | None = None) -> None:
        self.address = address
        self.port = port
        self.daemonize = daemonize
        self.daemonize_connections = daemonize_connections
        self.eager_load = eager_load
        self.ssl_context = ssl_context
        if accept_timeout == DEFAULT_ACCEPT_TIMEOUT_PLACEHOLDER:  # py4j's: read now
            accept_timeout = DEFAULT_CALLBACK_SERVER_ACCEPT_TIMEOUT
        self.accept_timeout = accept_timeout  # py4j's accept poll; py4jni's wakes at once
        self.read_timeout = read_timeout
        self.propagate_java_exceptions = propagate_java_exceptions
        self.auth_token = auth_token


def get_method(java_object: Any, method_name: str) -> JavaMember:
    """The JavaMember ``method_name`` of ``java_object``, even when Python shadows it."""
    return _py4jni.member(java_object, method_name)


def _close_socket(sock: Any, stream: Any, reset: bool) -> None:
    """Closes a client connection's stream and socket, with a RST when ``reset``."""
    if reset:
        set_linger(sock)
    quiet_close(stream)
    if not reset:
        quiet_shutdown(sock)
    quiet_close(sock)


# Proxy numbers are unique in the process, not per gateway as in py4j: a GatewayServer
# outlives the gateways that used it, and its stale proxies' `g` commands reach the
# callback server of whichever gateway it points at now.
PYTHON_PROXY_PREFIX = "p"
_next_number = itertools.count()


class PythonProxyPool:
    """The Python objects Java holds proxies of, by py4j id (thread-safe). py4j's
    interface: ``pool[id]``, ``del pool[id]``, ``pool.put(object, force_id=None)``,
    ``pool.clear()``, ``id in pool``, ``len(pool)``; plus ``release(id)``.

    As py4j's: each ``put`` is an entry of its own, with a new id (the same object
    passed twice is two entries, one per Java proxy); ``release`` (py4j's ``g``
    command, sent when Java's GC collects that proxy) drops it. A forced id (the Python
    entry point, ``"t"``) is never released."""

    def __init__(self) -> None:
        self.lock = _thread.allocate_lock()
        self.dict: dict[str, Any] = {}      # id -> object (callbacks read it unlocked)

    def put(self, object: Any, force_id: str | None = None) -> str:  # noqa: A002 - py4j's
        """Adds ``object`` under a new id (or ``force_id``); returns the id."""
        with self.lock:
            pid = force_id or PYTHON_PROXY_PREFIX + str(next(_next_number))
            self.dict[pid] = object
            return pid

    def release(self, pid: str) -> bool:
        """Java's proxy ``pid`` was finalized; returns False for an unknown id."""
        if pid == ENTRY_POINT_OBJECT_ID:
            return False
        with self.lock:
            obj = self.dict.pop(pid, _MISSING)
        if obj is _MISSING:
            return False
        del obj  # outside the lock: its __del__ may run anything
        return True

    def __getitem__(self, pid: str) -> Any:
        return self.dict[pid]

    def __delitem__(self, pid: str) -> None:
        with self.lock:
            del self.dict[pid]

    def clear(self) -> None:
        with self.lock:
            old = self.dict
            self.dict = {}
        old.clear()

    def __contains__(self, pid: object) -> bool:
        return pid in self.dict

    def __len__(self) -> int:
        return len(self.dict)


_MISSING = object()
