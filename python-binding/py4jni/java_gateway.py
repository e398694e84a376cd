"""py4j's gateway API, in-process by default.

``JavaGateway()`` embeds the JVM in this process (JNI); with
``gateway_parameters=GatewayParameters(port=...)`` (or ``mode="socket"``) the same
objects talk py4j's wire protocol to a running py4j GatewayServer. Everything here sends
its commands through ``gateway._gateway_client`` (a ``_py4jni.Client``), the one seam
between what to do and how it travels.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Iterable, Sequence

from . import _py4jni
from ._py4jni import JavaClass, JavaMember, JavaObject
from .protocol import Py4JError

__all__ = [
    "JavaGateway", "GatewayParameters", "CallbackServerParameters", "JVMView",
    "JavaPackage", "JavaClass", "JavaObject", "JavaMember", "java_import", "get_field",
    "set_field", "get_method", "is_instance_of", "get_java_class", "helper_jar_path",
    "as_memoryview",
]

DEFAULT_ADDRESS = "127.0.0.1"
DEFAULT_PORT = 25333
DEFAULT_PYTHON_PROXY_PORT = 25334


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
    (py4jni/socket_callbacks.py). In-process callbacks need no server: only
    ``propagate_java_exceptions`` applies there."""

    def __init__(self, address: str = DEFAULT_ADDRESS, port: int = DEFAULT_PYTHON_PROXY_PORT,
                 daemonize: bool = False, daemonize_connections: bool = False,
                 eager_load: bool = True, ssl_context: Any = None,
                 accept_timeout: Any = None, read_timeout: float | None = None,
                 propagate_java_exceptions: bool = False,
                 auth_token: str | None = None) -> None:
        self.address = address
        self.port = port
        self.daemonize = daemonize
        self.daemonize_connections = daemonize_connections
        self.eager_load = eager_load
        self.ssl_context = ssl_context
        self.accept_timeout = accept_timeout
        self.read_timeout = read_timeout
        self.propagate_java_exceptions = propagate_java_exceptions
        self.auth_token = auth_token


class JavaPackage(_py4jni.Namespace):
    """A Java package name: attributes are sub-packages or classes (resolved once and
    cached); calling a package raises TypeError."""

    def __init__(self, fqn: str, client: Any, view: "JVMView | None" = None) -> None:
        self.__dict__["_fqn"] = fqn
        self.__dict__["_gateway_client"] = client

    def _resolve(self, name: str) -> Any:
        """Resolves ``<package>.name`` (one transport call), caching the answer."""
        fqn = f"{self._fqn}.{name}"
        found = self._gateway_client.resolve(None, fqn)
        if found is None:
            found = JavaPackage(fqn, self._gateway_client)
        self.__dict__[name] = found  # classes and packages do not change: cache
        return found

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"Trying to call a package: {self._fqn} is not a Java class")

    def __dir__(self) -> list[str]:
        return [k for k in self.__dict__ if not k.startswith("_")]

    def __repr__(self) -> str:
        return f"<JavaPackage {self._fqn}>"


class JVMView(_py4jni.Namespace):
    """A namespace of Java names with its own imports (``java.lang.*`` always).

    ``view.ArrayList`` resolves through the imports; ``view.java.util`` is a package.
    """

    def __init__(self, client: Any, view_ref: Any = None, name: str = "default") -> None:
        self.__dict__["_gateway_client"] = client
        self.__dict__["_view"] = view_ref  # JavaObject of the view, None = default view
        self.__dict__["_id"] = name
        self.__dict__["_resolved"] = set()  # names cached in __dict__ by _resolve
        self.__dict__["_lock"] = threading.Lock()

    def _resolve(self, name: str) -> Any:
        """Resolves ``name`` through this view's imports (one transport call), caching it."""
        found = self._gateway_client.resolve(self._view, name)
        if found is None:
            found = JavaPackage(name, self._gateway_client)
        with self._lock:
            self.__dict__[name] = found
            self._resolved.add(name)
        return found

    def _forget(self) -> None:
        """Drops cached resolutions (imports changed)."""
        with self._lock:
            for name in self._resolved:
                self.__dict__.pop(name, None)
            self._resolved.clear()

    def __dir__(self) -> list[str]:
        return self._gateway_client.dir(self._view, "v")

    def __repr__(self) -> str:
        return f"<JVMView {self._id}>"


def java_import(jvm_view: JVMView, import_str: str) -> None:
    """Imports a class (``"a.b.C"``) or a package (``"a.b.*"``) into ``jvm_view``."""
    jvm_view._gateway_client.view_import(jvm_view._view, import_str, False)
    jvm_view._forget()


def remove_imports(jvm_view: JVMView, import_str: str) -> None:
    """Removes an import made with java_import."""
    jvm_view._gateway_client.view_import(jvm_view._view, import_str, True)
    jvm_view._forget()


def get_field(java_object: Any, field_name: str) -> Any:
    """Reads a public field of a JavaObject (or a static one of a JavaClass)."""
    return java_object._gateway_client.field_get(java_object, field_name)


def set_field(java_object: Any, field_name: str, value: Any) -> None:
    """Assigns a public field of a JavaObject (or a static one of a JavaClass)."""
    java_object._gateway_client.field_set(java_object, field_name, value)


def get_method(java_object: Any, method_name: str) -> JavaMember:
    """The JavaMember ``method_name`` of ``java_object``, even when Python shadows it."""
    return _py4jni.member(java_object, method_name)


def get_java_class(java_class: JavaClass) -> JavaObject:
    """The ``java.lang.Class`` object (a JavaObject) of a JavaClass."""
    client = java_class._gateway_client
    if client.kind == "socket":  # py4j's server has no ref for a class: ask Java
        return client.resolve(None, "java.lang.Class").forName(java_class._fqn)
    return java_class._java_lang_class


def as_memoryview(java_buffer: JavaObject) -> memoryview:
    """A memoryview over the memory of a Java direct ByteBuffer (its whole capacity,
    whatever its position and limit), without a copy (py4jni only, in-process). The
    ByteBuffer stays referenced while the memoryview, or a view taken from it, lives;
    read-only when the ByteBuffer is. Heap buffers raise Py4JError."""
    return _py4jni.as_memoryview(java_buffer)


def is_instance_of(gateway: "JavaGateway", java_object: Any, java_class: Any) -> bool:
    """True when ``java_object`` is an instance of ``java_class`` (a fully qualified name,
    a JavaClass or a java.lang.Class JavaObject)."""
    if isinstance(java_class, JavaClass):
        java_class = get_java_class(java_class)
    elif not isinstance(java_class, (str, JavaObject)):
        raise Py4JError("java_class must be a string, a JavaClass, or a JavaObject")
    client = gateway._gateway_client
    if client.kind == "inproc":
        return gateway.jvm.org.py4jni.Bridge.isInstanceOf(java_object, java_class)
    return gateway.jvm.py4j.reflection.TypeUtil.isInstanceOf(java_class, java_object)


class JavaGateway(_py4jni.Namespace):
    """py4j's entry object. By default it embeds the JVM in this process.

    In-process options (py4jni's own): ``classpath`` (str or list), ``jvm_options``
    (list of ``-X...`` strings), ``libjvm`` (path), ``check_jni`` (``-Xcheck:jni``),
    ``keep_signals`` (omit ``-Xrs``; then Ctrl-C terminates the process instead of
    raising KeyboardInterrupt), ``entry_point`` (a JavaObject, or a class name to
    construct). A process holds one JVM: later gateways share it (same classpath).
    ``mode="socket"`` or a ``gateway_parameters`` argument connects to a py4j
    GatewayServer instead; there Java calls Python proxies through py4j's callback
    server, started on demand (``py4jni.socket_callbacks``), and
    ``java_gateway_server`` is the GatewayServer object.
    """

    def __init__(self, gateway_client: Any = None, auto_field: bool = False,
                 python_proxy_port: int = DEFAULT_PYTHON_PROXY_PORT,
                 start_callback_server: bool = False, auto_convert: bool = False,
                 eager_load: bool = False, gateway_parameters: GatewayParameters | None = None,
                 callback_server_parameters: CallbackServerParameters | None = None,
                 python_server_entry_point: Any = None, *, mode: str | None = None,
                 classpath: str | Sequence[str] | None = None,
                 jvm_options: Iterable[str] = (), libjvm: str | None = None,
                 check_jni: bool = False, keep_signals: bool = False,
                 entry_point: Any = None) -> None:
        if mode is None:
            mode = "socket" if gateway_parameters is not None else "inproc"
        if mode not in ("inproc", "socket"):
            raise ValueError(f"mode must be 'inproc' or 'socket', not {mode!r}")
        self.gateway_parameters = gateway_parameters or GatewayParameters(
            auto_field=auto_field, auto_convert=auto_convert, eager_load=eager_load)
        self.callback_server_parameters = callback_server_parameters or \
            CallbackServerParameters(port=python_proxy_port)
        self.python_server_entry_point = python_server_entry_point
        self._auto_convert = auto_convert or self.gateway_parameters.auto_convert
        self._mode = mode
        if gateway_client is not None:
            self._gateway_client = gateway_client
        elif mode == "inproc":
            if isinstance(classpath, (list, tuple)):
                classpath = os.pathsep.join(classpath)
            self._gateway_client = _py4jni.inproc_client(
                helper_jar_path(), classpath or os.environ.get("CLASSPATH") or None,
                list(jvm_options), libjvm, check_jni, keep_signals)
        else:
            self._gateway_client = _connect_socket(self.gateway_parameters)
        self._install_converter()
        if mode == "inproc":  # callback settings, Python entry point (py4jni/callbacks.py)
            from . import callbacks
            callbacks.attach(self)
            self.java_gateway_server = None
        else:  # py4j's GatewayServer object, fixed id
            self.java_gateway_server = _py4jni.object_ref(self._gateway_client,
                                                          "GATEWAY_SERVER")
        self.jvm = JVMView(self._gateway_client)
        self.entry_point = self._make_entry_point(entry_point)
        if mode == "socket":  # proxies, callback server (py4jni/socket_callbacks.py)
            from . import socket_callbacks
            eager = start_callback_server or (callback_server_parameters is not None and
                                              self.callback_server_parameters.eager_load)
            try:
                socket_callbacks.attach(self, callback_server_parameters is not None, eager)
            except Exception:
                self.shutdown()  # py4j: a callback server that cannot start ends the gateway
                raise
        elif start_callback_server:
            self.start_callback_server(self.callback_server_parameters)

    # -- set-up -------------------------------------------------------------------
    def _install_converter(self) -> None:
        """Lets other layers (collections, callbacks) convert Python arguments."""
        from . import _hooks
        self._gateway_client.converter = _hooks.make_converter(self)

    def _make_entry_point(self, entry_point: Any) -> Any:
        if entry_point is None:
            if self._mode == "socket":
                return _socket_entry_point(self._gateway_client)
            return None
        if isinstance(entry_point, str):
            cls = self._gateway_client.resolve(None, entry_point)
            if cls is None:
                raise Py4JError(f"entry point class {entry_point} not found")
            return cls()
        return entry_point

    def start_callback_server(self, callback_server_parameters: Any = None) -> bool:
        """Socket mode: starts py4j's callback server (a listening socket and a daemon
        thread; with a port other than the GatewayServer's callback port, three Java
        calls tell Java where it is); True when this call started it, False when it was
        running. Proxies passed to Java start it on demand. In-process callbacks need no
        server: returns True."""
        if self._mode == "socket":
            from . import socket_callbacks
            try:
                return socket_callbacks.start_callback_server(self, callback_server_parameters)
            except Exception:
                self.shutdown()  # as py4j does when its callback server cannot start
                raise
        from . import _hooks
        return _hooks.start_callback_server(self, callback_server_parameters)

    def get_callback_server(self) -> Any:
        """Socket mode: the running callback server (py4jni.socket_callbacks.CallbackServer:
        ``get_listening_port()``, ``get_listening_address()``, ``shutdown()``), or None.
        In-process: None (no server)."""
        if self._mode == "socket":
            from . import socket_callbacks
            return socket_callbacks.get_callback_server(self)
        return None

    # -- py4j API -------------------------------------------------------------------
    def new_jvm_view(self, name: str = "custom jvm") -> JVMView:
        """A new JVMView with its own imports (``java.lang.*`` only)."""
        ref = self._gateway_client.view_new(name)
        return JVMView(self._gateway_client, ref, name)

    def new_array(self, java_class: Any, *dimensions: int) -> Any:
        """A new Java array of ``java_class`` (``gw.jvm.int`` for primitives)."""
        from . import _hooks
        return _hooks.new_array(self, java_class, *dimensions)

    def register_natives(self, class_name: Any, mapping: Any) -> None:
        """Implements the ``native`` methods of a Java class with Python callables
        (py4jni only, in-process): ``{"name": fn}`` or ``{"name(JNI signature)": fn}``.
        Each becomes a libffi closure bound with RegisterNatives, so Java calls it with
        no boxing or reflection. Unknown names and wrong arities raise Py4JError now.
        See ``py4jni.callbacks.register_natives``."""
        from . import callbacks
        callbacks.register_natives(self, class_name, mapping)

    def direct_buffer(self, obj: Any) -> JavaObject:
        """A Java direct ``java.nio.ByteBuffer`` over the memory of ``obj``, a writable,
        C-contiguous buffer (bytearray, numpy array, mmap), without a copy (py4jni only,
        in-process). ``obj`` and its buffer export stay alive until Java has collected
        the ByteBuffer; its byte order is Java's default (big-endian): call
        ``.order(ByteOrder.nativeOrder())`` for numeric views. Read-only or
        non-contiguous buffers raise BufferError; socket mode raises Py4JError."""
        return _py4jni.direct_buffer(self._gateway_client, obj)

    def detach(self, java_object: Any) -> None:
        """Releases ``java_object`` now; later use raises Py4JError."""
        java_object._detach()

    def help(self, var: Any, pattern: str | None = None, short_name: bool = True,
             display: bool = True) -> str | None:
        """py4j's help page of a JavaObject or JavaClass (paged, or returned when
        ``display`` is False)."""
        if not isinstance(var, (JavaObject, JavaClass)):
            raise Py4JError("help() needs a JavaObject or a JavaClass")
        page = self._gateway_client.help(var, pattern, short_name)
        if not display:
            return page
        import pydoc  # costs ~30 ms at import time: only when a page is shown
        pydoc.pager(page)
        return None

    @classmethod
    def launch_gateway(cls, port: int = 0, jarpath: str = "", classpath: str = "",
                       javaopts: Sequence[str] = (), die_on_exit: bool = False,
                       redirect_stdout: Any = None, redirect_stderr: Any = None,
                       daemonize_redirect: bool = True, java_path: str = "java",
                       create_new_process_group: bool = False, enable_auth: bool = False,
                       cwd: str | None = None, use_shell: bool = False,
                       **gateway_kwargs: Any) -> "JavaGateway":
        """Starts py4j's GatewayServer in a child ``java`` process and returns a socket-mode
        gateway to it; ``shutdown()`` stops that process."""
        from .launcher import launch_gateway
        out = launch_gateway(port, jarpath, classpath, javaopts, die_on_exit, redirect_stdout,
                             redirect_stderr, daemonize_redirect, java_path,
                             create_new_process_group, enable_auth, cwd, True, use_shell)
        the_port, token, proc = out if enable_auth else (out[0], None, out[1])
        params = gateway_kwargs.pop("gateway_parameters", None) or GatewayParameters()
        params.port, params.auth_token = the_port, token
        gateway = cls(gateway_parameters=params, **gateway_kwargs)
        gateway.java_process = proc
        return gateway

    def shutdown(self, raise_exception: bool = False) -> None:
        """Closes the gateway: later use of its objects raises Py4JError. In-process the
        JVM stays up (a JVM cannot be restarted in one process); a GatewayServer this
        gateway launched is stopped."""
        from . import _hooks
        _hooks.before_shutdown(self)
        proc = self.__dict__.get("java_process")
        if proc is not None:
            try:
                _py4jni.shutdown_server(self._gateway_client)
            except Py4JError:
                pass
            try:
                if proc.stdin:
                    proc.stdin.close()  # --die-on-broken-pipe servers exit on EOF
                proc.wait(timeout=5)
            except Exception:  # noqa: BLE001 - a server that ignores 's' is killed
                proc.kill()
                proc.wait()
            self.__dict__["java_process"] = None
        self._gateway_client.shutdown()
        self.shutdown_callback_server()

    def close(self, keep_callback_server: bool = False,
              close_callback_server_connections: bool = False) -> None:
        """Closes the connection (in-process: the same as shutdown)."""
        self.shutdown()

    def shutdown_callback_server(self, raise_exception: bool = False) -> None:
        """Socket mode: stops the callback server, closes its connections and forgets the
        Python objects Java held (Java's proxies then fail when called). In-process:
        nothing to stop."""
        if self.__dict__.get("_socket_callbacks") is None:
            return
        from . import socket_callbacks
        try:
            socket_callbacks.shutdown_callback_server(self)
        except Exception:  # noqa: BLE001
            if raise_exception:
                raise

    def _resolve(self, name: str) -> Any:
        """Unknown gateway attributes are the entry point's (py4j's rule)."""
        if name.startswith("_"):
            raise AttributeError(name)
        ep = self.__dict__.get("entry_point")
        if ep is None:
            raise Py4JError(f"the gateway has no entry point (looking up {name!r})")
        return getattr(ep, name)

    def __enter__(self) -> "JavaGateway":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()


def _connect_socket(params: GatewayParameters) -> Any:
    """Opens a socket-mode client to a py4j GatewayServer."""
    return _py4jni.socket_client(params.address, params.port, params.auth_token,
                                 float(params.read_timeout or 0.0))


def _socket_entry_point(client: Any) -> Any:
    """The GatewayServer's entry point object (py4j's fixed id ``t``)."""
    return _py4jni.object_ref(client, "t")
