"""What a transport is: the one place where the Python side of the two transports
differs.

A gateway holds one ``Transport`` (``gateway._transport``), picked by
``java_gateway._choose_transport``; the gateway classes call its methods and never ask
which mode they are in. The C extension does the same below them, through the client's
ops and capabilities (bridge/client.h). Each mode is a subpackage of the same shape,
``transport.py`` and ``callbacks.py``:

- ``InprocTransport``: the JVM embedded in this process (py4jni/inproc_mode/transport.py;
  Java calling Python and the Python entry point: py4jni/inproc_mode/callbacks.py);
- ``SocketTransport``: a py4j GatewayServer over py4j's wire protocol, and
  ``PinnedTransport``: a py4j ClientServer's JavaServer, in py4j's pinned-thread mode
  (py4jni/socket_mode/transport.py; py4j's callback server and the pinned-thread mode's
  PythonServer: py4jni/socket_mode/callbacks.py).
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing's constant without importing typing

if TYPE_CHECKING:  # typing is not imported at run time (import py4jni stays light)
    from typing import Any

from ._base import _POOL_ON_FIRST_USE


class Transport:
    """What a gateway does differently per transport (see the subclasses)."""

    mode = ""
    #: Java objects can be named by py4j object id text ("o12", "t").
    names_objects = False

    def connect(self, gateway: Any, classpath: Any, jvm_options: Any, libjvm: Any,
                check_jni: bool, keep_signals: bool, cds: bool | str = True) -> Any:
        """A new client for ``gateway`` (whose parameters are set)."""
        raise NotImplementedError

    def attach(self, gateway: Any) -> None:
        """Wires callbacks for ``gateway`` before its entry point is made."""

    def attach_after(self, gateway: Any, start_callback_server: bool,
                     explicit_params: bool) -> None:
        """Wires what needs the entry point (socket mode: the callback server)."""

    def gateway_server(self, client: Any) -> Any:
        """py4j's GatewayServer object, or None."""
        return None

    def default_entry_point(self, client: Any) -> Any:
        """The entry point when none was named."""
        return None

    def start_callback_server(self, gateway: Any, params: Any) -> bool:
        """Starts what Java needs to call Python; True when this call started it (in-process
        callbacks need no server: True)."""
        return True

    def get_callback_server(self, gateway: Any) -> Any:
        """The running callback server, or None."""
        return None

    def stop_server(self, gateway: Any, raise_exception: bool) -> None:
        """Before the client shuts down: asks a server to stop, where there is one."""

    def closes_only(self) -> bool:
        """True when JavaGateway.close leaves the server running (else it shuts down)."""
        return False

    def proxy_pool(self, gateway: Any) -> Any:
        """py4j's PythonProxyPool of the gateway (in-process, Java holds Python objects
        through JNI and the pool is only py4j's API: made on first use)."""
        return _POOL_ON_FIRST_USE

    def is_connected(self, client: Any) -> bool:
        """py4j's GatewayClient.is_connected."""
        return True

    def java_lang_class(self, java_class: Any) -> Any:
        """The java.lang.Class JavaObject of a JavaClass (its ``_java_lang_class``
        where the client passes class references; socket mode: py4j's command)."""
        return java_class._java_lang_class

    def is_instance_of(self, gateway: Any, java_object: Any, java_class: Any) -> bool:
        """Java's instanceof, ``java_class`` a java.lang.Class or a name."""
        raise NotImplementedError

    def object_from_id(self, target_id: str, client: Any) -> Any:
        """``JavaObject(target_id, client)``."""
        raise NotImplementedError


#: The transports by client ``kind``: each mode's module (py4jni/inproc_mode/transport.py,
#: py4jni/socket_mode/transport.py) adds its own when it is imported (by ``for_mode``).
TRANSPORTS: dict[str, Transport] = {}

#: The module of each mode's transport, below the package. An in-process program never
#: imports the socket mode's (~0.3 ms of its start).
_MODULES = {"inproc": "inproc_mode.transport", "socket": "socket_mode.transport"}


def for_mode(mode: str) -> Transport:
    """The transport of ``mode`` ("inproc" or "socket"), its module imported on first use."""
    transport = TRANSPORTS.get(mode)
    if transport is None:
        __import__(f"{__package__}.{_MODULES[mode]}")
        transport = TRANSPORTS[mode]
    return transport


def of(client: Any) -> Transport:
    """The transport of a py4jni client (by its ``kind``)."""
    return for_mode(client.kind)
