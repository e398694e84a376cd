"""What a transport is, and the in-process one: the one place where the Python side of
the two transports differs.

A gateway holds one ``Transport`` (``gateway._transport``), picked by
``java_gateway._choose_transport``; the gateway classes call its methods and never ask
which mode they are in. The C extension does the same below them, through the client's
ops and capabilities (bridge/client.h).

- ``InprocTransport`` (here): the JVM embedded in this process (py4jni/callbacks.py for
  callbacks and the Python entry point);
- ``SocketTransport``: a py4j GatewayServer over py4j's wire protocol, and
  ``PinnedTransport``: a py4j ClientServer's JavaServer, in py4j's pinned-thread mode
  (both py4jni/socket_mode/transport.py; py4j's callback server and the pinned-thread
  mode's PythonServer: py4jni/socket_mode/callbacks.py).
"""
from __future__ import annotations

import os
TYPE_CHECKING = False  # typing's constant without importing typing

if TYPE_CHECKING:  # typing is not imported at run time (import py4jni stays light)
    from typing import Any

from . import _py4jni
from ._base import _POOL_ON_FIRST_USE, helper_jar_path
from .protocol import ENTRY_POINT_OBJECT_ID, Py4JError


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


#: The JDK's own -Xss on x86_64 and aarch64 Linux (ThreadStackSize), and the most py4jni
#: gives Java threads by default.
_JDK_STACK = 1 << 20
_MOST_STACK = 16 << 20


_stack_chosen: list[str] | None = None


def _main_stack_options(jvm_options: list[str], joins_by_default: bool) -> list[str]:
    """``-Xss`` of the main thread's stack limit (RLIMIT_STACK, at most 16 MiB), unless
    the options set a stack size: HotSpot gives the process's main thread, attached
    later, a Java stack of -Xss only, and its Java calls share the interpreter's stack
    (Python -> Java -> Python nesting: ~6 KiB a level, 1,000 levels need ~6 MiB). Java
    threads then get that size too (address space; their memory is what they use).
    Decided at the first start, as the CDS options are: a later gateway gets the same,
    or none when it asks for the default JVM (jni/jvm.c compares the options)."""
    global _stack_chosen
    if _stack_chosen is not None:
        return [] if joins_by_default else list(_stack_chosen)
    _stack_chosen = []
    if not any(o.startswith(("-Xss", "-XX:ThreadStackSize=")) for o in jvm_options):
        import resource
        soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
        size = _MOST_STACK if soft == resource.RLIM_INFINITY else min(soft, _MOST_STACK)
        if size > _JDK_STACK:
            _stack_chosen = [f"-Xss{size // 1024}k"]
    return list(_stack_chosen)


class InprocTransport(Transport):
    """The JVM embedded in this process through JNI."""

    mode = "inproc"

    def connect(self, gateway: Any, classpath: Any, jvm_options: Any, libjvm: Any,
                check_jni: bool, keep_signals: bool, cds: bool | str = True) -> Any:
        from . import _cds  # deferred: ~1 ms of `import py4jni`, needed once a JVM starts
        if isinstance(classpath, (list, tuple)):
            classpath = os.pathsep.join(classpath)
        classpath = classpath or os.environ.get("CLASSPATH") or None
        jvm_options = list(jvm_options)
        for i, option in enumerate(jvm_options):
            if not isinstance(option, str):
                raise TypeError(f"jvm_options[{i}] must be a str (a JVM option such as "
                                f"'-Xmx1g'), not {type(option).__name__} ({option!r})")
        jar = helper_jar_path()
        default = not jvm_options and not check_jni and not keep_signals
        jvm_options += _main_stack_options(jvm_options, default)
        jvm_options[:0] = _cds.options_for_start(jar, libjvm, jvm_options, cds, default,
                                                 classpath)
        client = _py4jni.inproc_client(jar, classpath, jvm_options, libjvm, check_jni,
                                       keep_signals)
        from . import _os_signals  # deferred: as _cds, needed once a JVM starts
        if not keep_signals:  # -Xrs: SIGINT, SIGTERM and SIGHUP are Python's and ours
            _os_signals.install()
        _os_signals.chain_faults()  # HotSpot's SIGSEGV & co. stay first, chained
        return client

    def attach(self, gateway: Any) -> None:
        # Callback settings and the Python entry point; without either there is nothing
        # to set (py4jni.callbacks costs ~0.4 ms to import at every JavaGateway()).
        params = gateway.callback_server_parameters
        if getattr(params, "propagate_java_exceptions", False) or \
                gateway.python_server_entry_point is not None:
            from . import callbacks  # deferred: see the comment above
            callbacks.attach(gateway)

    def attach_after(self, gateway: Any, start_callback_server: bool,
                     explicit_params: bool) -> None:
        if start_callback_server:
            gateway.start_callback_server(gateway.callback_server_parameters)

    def is_instance_of(self, gateway: Any, java_object: Any, java_class: Any) -> bool:
        return gateway.jvm.org.py4jni.Bridge.isInstanceOf(java_object, java_class)

    def object_from_id(self, target_id: str, client: Any) -> Any:
        ref = getattr(client, "_entry_point", None)
        entry = ref() if ref is not None else None
        if target_id == ENTRY_POINT_OBJECT_ID and entry is not None:
            return entry
        raise Py4JError(f"py4jni: no Java object {target_id!r} can be named in-process "
                        "(keep the JavaObject itself)")


#: The transports by client ``kind``; socket mode's (py4jni/socket_mode/transport.py)
#: adds itself when the gateway module imports it.
TRANSPORTS: dict[str, Transport] = {"inproc": InprocTransport()}


def of(client: Any) -> Transport:
    """The transport of a py4jni client (by its ``kind``)."""
    return TRANSPORTS[client.kind]
