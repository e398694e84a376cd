"""py4j's ``clientserver`` module, in-process.

py4j's ClientServer pins each Python thread to one Java thread so that a callback runs
on the Python thread that made the Java call. In-process that is how every call works:
Java calls back on the thread that called it (holding the GIL for the callback), and
callbacks need no server. ``ClientServer`` is therefore the in-process ``JavaGateway``
with py4j's constructor; ``JavaParameters`` and ``PythonParameters`` are accepted (their
socket settings have no meaning in-process; ``auto_convert`` and
``propagate_java_exceptions`` apply).
"""
from __future__ import annotations

import time
import weakref
from collections import deque  # noqa: F401 - py4j exports it
from threading import Thread, local  # noqa: F401 - py4j exports them
from typing import Any

from . import _switch
from .java_gateway import (DEFAULT_ACCEPT_TIMEOUT_PLACEHOLDER, DEFAULT_ADDRESS,  # noqa: F401
                           DEFAULT_PORT, DEFAULT_PYTHON_PROXY_PORT, CallbackServerParameters,
                           GatewayClient, GatewayConnectionGuard, GatewayParameters,
                           JavaGateway, do_client_auth, logger, quiet_close, quiet_shutdown,
                           server_connection_stopped, set_linger)
from .protocol import (Py4JAuthenticationError, Py4JError, Py4JNetworkError,  # noqa: F401
                       get_command_part, get_return_value, smart_decode)

SHUTDOWN_FINALIZER_WORKER = "__shutdown__"
DEFAULT_WORKER_SLEEP_TIME = 1

_NO_PINNED = ("py4jni does not implement py4j's pinned-thread socket mode (ClientServer "
              "over a socket): use ClientServer() without socket settings for the "
              "in-process JVM, JavaGateway(gateway_parameters=...) for a GatewayServer, "
              "or run the program with `python -m py4jni run --inproc`")


def __getattr__(name: str) -> Any:
    """py4j's CallbackServer, imported on first use."""
    if name == "CallbackServer":
        from .socket_callbacks import CallbackServer
        return CallbackServer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


class _Refused:
    """Base of py4j's pinned-thread socket classes, which py4jni does not implement:
    constructing one raises Py4JError (never a silent fallback)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise Py4JError(f"{type(self).__name__}: {_NO_PINNED}")


class JavaClient(_Refused):
    """py4j's client of the pinned-thread mode (not implemented: raises)."""


class PythonServer(_Refused):
    """py4j's server of the pinned-thread mode (not implemented: raises)."""


class ClientServerConnection(_Refused):
    """py4j's two-way connection of the pinned-thread mode (not implemented: raises)."""


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
    """py4j's parameters of the Python side of a ClientServer. In-process no server is
    started; ``propagate_java_exceptions`` applies to callbacks."""

    def __init__(self, address: str = DEFAULT_ADDRESS, port: int = DEFAULT_PYTHON_PROXY_PORT,
                 daemonize: bool = False, daemonize_connections: bool = False,
                 eager_load: bool = True, ssl_context: Any = None, auto_gc: bool = False,
                 accept_timeout: Any = None, read_timeout: float | None = None,
                 propagate_java_exceptions: bool = False,
                 auth_token: str | None = None) -> None:
        super().__init__(address, port, daemonize, daemonize_connections, eager_load,
                         ssl_context, accept_timeout, read_timeout,
                         propagate_java_exceptions, auth_token)
        self.auto_gc = auto_gc


class ClientServer(JavaGateway):
    """py4j's ClientServer: here the in-process gateway (the JVM in this process).
    JavaParameters naming a socket peer (a port, address, auth token or ssl_context
    other than py4j's defaults) raise Py4JError: py4jni does not implement py4j's
    pinned-thread socket mode and never ignores such settings silently (under the
    py4j switch in in-process mode they are not used: the program asked for py4jni).

    ``python_server_entry_point`` is what Java obtains with
    ``org.py4jni.PythonEntryPoint.get(new Class[]{...})``. py4jni's in-process keyword
    options (``classpath``, ``jvm_options``, ``libjvm``, ``check_jni``,
    ``keep_signals``, ``entry_point``) are accepted as for JavaGateway.
    """

    def __init__(self, java_parameters: JavaParameters | None = None,
                 python_parameters: PythonParameters | None = None,
                 python_server_entry_point: Any = None, **inproc_options: Any) -> None:
        switch = _switch.settings()
        mode = inproc_options.get("mode") or (switch.mode if switch else None)
        if mode == "socket" or (mode is None and
                                _asks_for_socket(java_parameters, python_parameters)):
            raise Py4JError(f"ClientServer with a socket peer: {_NO_PINNED}")
        self.java_parameters = java_parameters or JavaParameters()
        self.python_parameters = python_parameters or PythonParameters()
        inproc_options["mode"] = "inproc"
        super().__init__(gateway_parameters=self.java_parameters,
                         callback_server_parameters=self.python_parameters,
                         python_server_entry_point=python_server_entry_point,
                         auto_convert=self.java_parameters.auto_convert,
                         **inproc_options)
