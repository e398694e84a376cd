"""Socket mode's transport: py4j's wire protocol, from C, to a py4j GatewayServer, or
to the JavaServer of a py4j ClientServer in py4j's pinned-thread mode.

``SocketTransport`` and ``PinnedTransport`` are what a socket-mode gateway does
differently (py4jni/_transports.py says what a transport is); ``connect_socket`` and
``connect_pinned`` open the C clients (python-binding/src/socket/), with TLS where the
parameters ask for it. Java's calls back into Python are py4jni/socket_mode/callbacks.py.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing's constant without importing typing
if TYPE_CHECKING:
    from typing import Any

from .. import _py4jni, _transports
from .._py4jni import JavaObject
from .._transports import Transport
from ..protocol import (END_COMMAND_PART, REFL_GET_JAVA_LANG_CLASS_SUB_COMMAND_NAME,
                        REFLECTION_COMMAND_NAME, Py4JError, get_return_value)


class SocketTransport(Transport):
    """A py4j GatewayServer over py4j's wire protocol."""

    mode = "socket"
    names_objects = True

    def connect(self, gateway: Any, classpath: Any, jvm_options: Any, libjvm: Any,
                check_jni: bool, keep_signals: bool, cds: bool | str = True) -> Any:
        return connect_socket(gateway.gateway_parameters)

    def gateway_server(self, client: Any) -> Any:
        return _py4jni.object_ref(client, "GATEWAY_SERVER")  # py4j's fixed id

    def default_entry_point(self, client: Any) -> Any:
        return _py4jni.object_ref(client, "t")  # py4j's fixed id

    def attach_after(self, gateway: Any, start_callback_server: bool,
                     explicit_params: bool) -> None:
        from . import callbacks  # deferred: socket and threading, for socket mode only
        eager = start_callback_server or (explicit_params and
                                          gateway.callback_server_parameters.eager_load)
        try:
            callbacks.attach(gateway, explicit_params, eager)
        except Exception:
            gateway.close()  # ends the gateway; py4j would also stop the GatewayServer
            raise

    def start_callback_server(self, gateway: Any, params: Any) -> bool:
        from . import callbacks  # deferred: socket and threading, for socket mode only
        try:
            return callbacks.start_callback_server(gateway, params)
        except Exception:
            gateway.close()  # ends the gateway (py4j: shutdown, stopping the server too)
            raise

    def get_callback_server(self, gateway: Any) -> Any:
        from . import callbacks  # deferred: socket and threading, for socket mode only
        return callbacks.get_callback_server(gateway)

    def stop_server(self, gateway: Any, raise_exception: bool) -> None:
        if gateway._gateway_client.closed:
            return
        try:
            _py4jni.shutdown_server(gateway._gateway_client)
        except Py4JError:
            if raise_exception:
                raise

    def closes_only(self) -> bool:
        return True

    def proxy_pool(self, gateway: Any) -> Any:
        from . import callbacks  # deferred: socket and threading, for socket mode only
        return callbacks.pool_of(gateway)

    def is_connected(self, client: Any) -> bool:
        return not client.closed

    def java_lang_class(self, java_class: Any) -> Any:
        client = java_class._gateway_client  # py4j's server has no ref for a class
        answer = client.send_command(REFLECTION_COMMAND_NAME +
                                     REFL_GET_JAVA_LANG_CLASS_SUB_COMMAND_NAME +
                                     java_class._fqn + "\n" + END_COMMAND_PART)
        return get_return_value(answer, client, java_class._fqn, "_java_lang_class")

    def is_instance_of(self, gateway: Any, java_object: Any, java_class: Any) -> bool:
        if isinstance(java_class, JavaObject):  # py4j: an object stands for its class,
            its_class = java_class.getClass()   # a java.lang.Class for the class it is
            if its_class.getName() != "java.lang.Class":
                java_class = its_class
        return gateway.jvm.py4j.reflection.TypeUtil.isInstanceOf(java_class, java_object)

    def object_from_id(self, target_id: str, client: Any) -> Any:
        return _py4jni.object_ref(client, target_id)


class PinnedTransport(SocketTransport):
    """The JavaServer of a py4j ClientServer, in py4j's pinned-thread mode (each thread
    its own connection; Java's callbacks on it; see py4jni.clientserver)."""

    def connect(self, gateway: Any, classpath: Any, jvm_options: Any, libjvm: Any,
                check_jni: bool, keep_signals: bool, cds: bool | str = True) -> Any:
        return connect_pinned(gateway.gateway_parameters, gateway.callback_server_parameters)

    def attach_after(self, gateway: Any, start_callback_server: bool,
                     explicit_params: bool) -> None:
        from . import callbacks  # deferred: socket and threading, for socket mode only
        eager = start_callback_server or gateway.callback_server_parameters.eager_load
        try:
            callbacks.attach(gateway, explicit_params, eager, pinned=True)
        except Exception:
            gateway.close()
            raise


#: A ClientServer's transport in socket mode (its clients' kind is "socket": objects are
#: named as over any py4j socket).
PINNED = PinnedTransport()
_transports.TRANSPORTS["socket"] = SocketTransport()


def connect_pinned(java_parameters: Any, python_parameters: Any, gateway_property: Any = None,
                   finalizer_deque: Any = None) -> Any:
    """Opens a pinned-thread socket client (each thread a connection of its own) to the
    JavaServer at ``java_parameters``' address and port, with py4j's JavaClient
    attributes; with a ``gateway_property``, its ``command_hook`` runs Java's callbacks."""
    from threading import local  # deferred: threading, for pinned-thread mode only
    client = _py4jni.socket_client(java_parameters.address, java_parameters.port,
                                   java_parameters.auth_token,
                                   float(java_parameters.read_timeout or 0.0),
                                   pinned=True)
    set_tls(client, java_parameters, python_parameters, "JavaParameters", "PythonParameters")
    client.java_parameters = client.gateway_parameters = java_parameters
    client.python_parameters = python_parameters
    client.address, client.port = java_parameters.address, java_parameters.port
    client.auto_close, client.is_connected = True, True
    client.ssl_context = java_parameters.ssl_context
    client.gateway_property, client.converters = gateway_property, None
    client.finalizer_deque = finalizer_deque
    client.thread_connection = local()  # py4j's: see get_thread_connection
    if gateway_property is not None:
        from .callbacks import command_hook  # deferred: socket and threading
        client.command_hook = command_hook(client, gateway_property.pool, python_parameters)
    return client


def set_tls(client: Any, params: Any, serve_params: Any = None,
             what: str = "GatewayParameters", serve_what: str = "PythonParameters") -> None:
    """TLS for a socket client: ``params.ssl_context`` for the connections it opens (the
    server's certificate checked against ``params.address`` when the context's
    ``check_hostname`` says so, as py4j's ``wrap_socket(server_hostname=address)``), and
    ``serve_params.ssl_context`` for the connections it serves (pinned-thread mode). The
    C transport runs TLS with the contexts' own OpenSSL settings; a context it cannot
    honour raises Py4JError (see docs/guide.md, "TLS")."""
    context = getattr(params, "ssl_context", None)
    serve = getattr(serve_params, "ssl_context", None)
    if context is None and serve is None:
        return
    try:
        check_tls_sides(context, what, serve, serve_what)
        _py4jni.socket_set_tls(client, context, params.address, serve, what, serve_what)
    except BaseException:
        client.close()
        raise


def check_tls_sides(context: Any, what: str, serve: Any, serve_what: str) -> None:
    """Refuses a server-side context where connections are opened and a client-side one
    where they are served, saying so (OpenSSL would only say "called a function you
    should not call" at the first connection)."""
    import ssl
    for ctx, name, wrong, side in ((context, what, "PROTOCOL_TLS_SERVER", "client"),
                                   (serve, serve_what, "PROTOCOL_TLS_CLIENT", "server")):
        if ctx is not None and getattr(ctx, "protocol", None) == getattr(ssl, wrong, None):
            raise Py4JError(f"py4jni: {name}(ssl_context=...) is a {wrong} context, and its "
                            f"connections need a {side}-side one ("
                            + ("ssl.create_default_context(), or PROTOCOL_TLS_CLIENT)"
                               if side == "client" else
                               "ssl.create_default_context(ssl.Purpose.CLIENT_AUTH), or "
                               "PROTOCOL_TLS_SERVER)"))



def connect_socket(params: Any) -> Any:
    """Opens a socket-mode client to a py4j GatewayServer."""
    client = _py4jni.socket_client(params.address, params.port, params.auth_token,
                                   float(params.read_timeout or 0.0))
    set_tls(client, params)
    return client
