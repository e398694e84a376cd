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
py4jni/socket_mode/callbacks.py runs it as the callback server does), answers, and goes on
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
                           JavaGateway, do_client_auth, logger, quiet_close, quiet_shutdown,
                           server_connection_stopped, set_linger)
from .protocol import (AUTH_COMMAND_NAME, EMPTY_RESPONSE, ERROR_ON_RECEIVE,  # noqa: F401
                       ERROR_ON_SEND, SHUTDOWN_GATEWAY_COMMAND_NAME, Py4JAuthenticationError,
                       Py4JError, Py4JNetworkError, get_command_part, get_return_value,
                       is_error, smart_decode)
from .socket_mode.callbacks import CallbackConnection as CallbackConnection
from .socket_mode.callbacks import CallbackServer as CallbackServer
from .socket_mode.callbacks import ClientServerConnection as ClientServerConnection
from .socket_mode.callbacks import PythonServer as PythonServer
from .socket_mode.transport import connect_pinned

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
    callbacks (set by the gateway; see py4jni.socket_mode.callbacks)."""

    def __new__(cls, java_parameters: Any, python_parameters: Any,
                gateway_property: Any = None, finalizer_deque: Any = None) -> Any:
        return connect_pinned(java_parameters, python_parameters, gateway_property,
                              finalizer_deque)


JavaClient.get_thread_connection = _py4jni.Client.get_thread_connection
JavaClient.set_thread_connection = _py4jni.Client.set_thread_connection


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
