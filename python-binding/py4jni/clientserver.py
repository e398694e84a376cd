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

from typing import Any

from .java_gateway import (DEFAULT_ADDRESS, DEFAULT_PORT, DEFAULT_PYTHON_PROXY_PORT,
                           CallbackServerParameters, GatewayParameters, JavaGateway)

__all__ = ["ClientServer", "JavaParameters", "PythonParameters"]


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

    ``python_server_entry_point`` is what Java obtains with
    ``org.py4jni.PythonEntryPoint.get(new Class[]{...})``. py4jni's in-process keyword
    options (``classpath``, ``jvm_options``, ``libjvm``, ``check_jni``,
    ``keep_signals``, ``entry_point``) are accepted as for JavaGateway.
    """

    def __init__(self, java_parameters: JavaParameters | None = None,
                 python_parameters: PythonParameters | None = None,
                 python_server_entry_point: Any = None, **inproc_options: Any) -> None:
        self.java_parameters = java_parameters or JavaParameters()
        self.python_parameters = python_parameters or PythonParameters()
        inproc_options.setdefault("mode", "inproc")
        super().__init__(gateway_parameters=self.java_parameters,
                         callback_server_parameters=self.python_parameters,
                         python_server_entry_point=python_server_entry_point,
                         auto_convert=self.java_parameters.auto_convert,
                         **inproc_options)
