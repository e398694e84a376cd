"""py4j's gateway API, in-process by default.

``JavaGateway()`` embeds the JVM in this process (JNI); with
``gateway_parameters=GatewayParameters(port=...)`` (or ``mode="socket"``) the same
objects talk py4j's wire protocol to a running py4j GatewayServer. Everything here sends
its commands through ``gateway._gateway_client`` (a ``_py4jni.Client``), the one seam
between what to do and how it travels.
"""
from __future__ import annotations

import _thread
import os
import sys

TYPE_CHECKING = False  # typing's constant without importing typing (~5 ms)
if TYPE_CHECKING:
    import logging
    import socket
    from typing import Any, Iterable, Sequence
    from .launcher import find_jar_path, launch_gateway  # noqa: F401 - _LAZY at run time

    logger: logging.Logger  # made on first use by __getattr__ (see _logging)

from . import _base, _hooks, _py4jni, _transports
from . import protocol as proto
# py4j's java_gateway defines these; py4jni's are made in _base, and are the same objects
from ._base import (BUFFER_SIZE as BUFFER_SIZE,
                    CallbackServerParameters as CallbackServerParameters,
                    check_connection as check_connection,
                    DEFAULT_ACCEPT_TIMEOUT_PLACEHOLDER as DEFAULT_ACCEPT_TIMEOUT_PLACEHOLDER,
                    DEFAULT_ADDRESS as DEFAULT_ADDRESS, DEFAULT_PORT as DEFAULT_PORT,
                    DEFAULT_PYTHON_PROXY_PORT as DEFAULT_PYTHON_PROXY_PORT,
                    deprecated as deprecated, do_client_auth as do_client_auth,
                    GatewayParameters as GatewayParameters,
                    GatewayProperty as GatewayProperty,
                    get_create_new_process_group_kwargs as get_create_new_process_group_kwargs,
                    get_method as get_method, helper_jar_path as helper_jar_path,
                    post_server_shutdown as post_server_shutdown,
                    pre_server_shutdown as pre_server_shutdown,
                    PY4J_SKIP_COLLECTIONS as PY4J_SKIP_COLLECTIONS, PY4J_TRUE as PY4J_TRUE,
                    PythonProxyPool as PythonProxyPool, quiet_close as quiet_close,
                    quiet_shutdown as quiet_shutdown,
                    server_connection_error as server_connection_error,
                    server_connection_started as server_connection_started,
                    server_connection_stopped as server_connection_stopped,
                    server_started as server_started, server_stopped as server_stopped,
                    set_default_callback_accept_timeout as set_default_callback_accept_timeout,
                    set_linger as set_linger, set_reuse_address as set_reuse_address)
from ._base import _close_socket, _log
from ._py4jni import JavaClass, JavaMember, JavaObject
from .compat import basestring, hasattr2, range  # noqa: F401
from .finalizer import ThreadSafeFinalizer  # noqa: F401 - py4j exports it
from .protocol import (Py4JAuthenticationError, Py4JError, Py4JJavaError,  # noqa: F401
                       Py4JNetworkError, compute_exception_message, escape_new_line,
                       get_command_part, get_error_message, get_return_value, is_error,
                       is_fatal_error, register_output_converter, smart_decode,
                       unescape_new_line)
from .signals import Signal  # noqa: F401 - py4j's module has it
from .inproc_mode import transport as _inproc_transport  # noqa: F401 - its TRANSPORTS entry



# Imported on first use (module __getattr__ below): logging, subprocess, socket,
# threading, collections and queue cost milliseconds at `import py4jni`, and most
# programs never touch these names.
_LAZY = {"Popen": ("subprocess", "Popen"), "PIPE": ("subprocess", "PIPE"),
         "deque": ("collections", "deque"), "RLock": ("threading", "RLock"),
         "Thread": ("threading", "Thread"), "Queue": ("queue", "Queue"),
         "CompatThread": (".compat", "CompatThread"),
         "OutputConsumer": ("._consumers", "OutputConsumer"),
         "ProcessConsumer": ("._consumers", "ProcessConsumer"),
         "CallbackServer": (".socket_mode.callbacks", "CallbackServer"),
         "CallbackConnection": (".socket_mode.callbacks", "CallbackConnection"),
         "launch_gateway": (".launcher", "launch_gateway"),
         "find_jar_path": (".launcher", "find_jar_path")}


def _pinned() -> Any:
    """The pinned-thread socket transport (its module imported on first use)."""
    from .socket_mode.transport import PINNED  # deferred: socket mode only
    return PINNED


def _subprocess() -> Any:
    """The subprocess module (imported on first use)."""
    import subprocess
    return subprocess


def is_magic_member(name: str) -> bool:
    """True for ``__dunder__`` names."""
    return name.startswith("__") and name.endswith("__")


def pager(text: str) -> None:
    """pydoc's pager (imported on first use: pydoc costs ~30 ms to import)."""
    import pydoc
    pydoc.pager(text)


def gateway_help(gateway_client: Any, var: Any, pattern: str | None = None,
                 short_name: bool = True, display: bool = True) -> str | None:
    """py4j's help page of a JavaObject, JavaClass or JavaMember (the member's overloads);
    shown in a pager, or returned when ``display`` is False."""
    if isinstance(var, JavaMember):
        if pattern is not None:
            raise Py4JError("pattern should be None with var is a JavaMember")
        pattern, var = var.name + "(*", var.container
    if not isinstance(var, (JavaObject, JavaClass)):
        raise Py4JError("var is none of Java Object, Java Class or Java Member")
    page = gateway_client.help(var, pattern, short_name)
    if not display:
        return page
    pager(page)
    return None


class DummyRLock:
    """A lock that does nothing (py4j's stand-in where no locking is needed)."""

    def acquire(self, blocking: int = 1) -> None:
        pass

    def release(self) -> None:
        pass

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        pass


class UserHelpAutoCompletion:
    """The placeholder py4j lists in ``dir()`` of a JVMView or JavaPackage: type a
    package or a class name."""

    KEY = "<package or class name>"


class JavaPackage(_py4jni.Namespace):
    """A Java package name: attributes are sub-packages or classes; calling a package
    raises TypeError.

    A class of the JDK's own class loaders (boot, platform, application: their classes
    are fixed at start-up) is kept once found (Namespace._remember: the next lookup of
    the name is a pointer compare), and so is each package on the way to it (a name through which such a class
    was found is a package). Any other name is asked again at every lookup, as py4j
    asks: a name that is not a class, or a class of another loader, may resolve
    otherwise later (a jar added at run time, another context class loader)."""

    def __init__(self, fqn: str, gateway_client: Any, jvm_id: str | None = None) -> None:
        self.__dict__["_fqn"] = fqn
        self.__dict__["_gateway_client"] = gateway_client
        # py4j's: the id of the view the package was reached from (its names are
        # qualified, so each view resolves them alike)
        self.__dict__["_jvm_id"] = jvm_id
        # where this package was reached from (a JavaPackage or JVMView) and under which
        # name: _keep() stores it there once a class is found below it
        self.__dict__["_parent"] = None

    def _resolve(self, name: str) -> Any:
        """Resolves ``<package>.name`` (one transport call); keeps a class found."""
        if name == UserHelpAutoCompletion.KEY:
            return UserHelpAutoCompletion
        _check_name(name, "package or class")
        fqn = f"{self._fqn}.{name}"
        found = self._gateway_client.resolve(None, fqn)
        if found is None:
            return _subpackage(self, name, fqn, self._jvm_id)
        if _fixed_class(found):
            self._remember(name, found)
            self._keep()
        return found

    def _keep(self) -> None:
        """Stores this package (and its parents, up to the view) where it was reached
        from: a class was found below it."""
        parent = self.__dict__["_parent"]
        if parent is None:
            return
        name, ns = parent
        if isinstance(ns, JVMView):
            ns._store(name, self)
        else:
            ns._remember(name, self)
            ns._keep()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"Trying to call a package: {self._fqn} is not a Java class")

    def __dir__(self) -> list[str]:
        """py4j's placeholder: a package cannot list its classes."""
        return [UserHelpAutoCompletion.KEY]

    def __repr__(self) -> str:
        return f"<JavaPackage {self._fqn}>"


class JVMView(_py4jni.Namespace):
    """A namespace of Java names with its own imports (``java.lang.*`` always).

    ``view.ArrayList`` resolves through the imports; ``view.java.util`` is a package.
    """

    def __init__(self, gateway_client: Any, jvm_name: str, id: str | None = None,  # noqa: A002
                 jvm_object: Any = None) -> None:
        """py4j's: the view ``id`` (``"rj"``: the gateway's default view; socket mode:
        ``"r"`` + the id of a Java JVMView object) or the JavaObject ``jvm_object`` of a
        view that ``new_jvm_view`` made; ``jvm_name`` is the name it was given."""
        d = self.__dict__
        d["_gateway_client"] = gateway_client
        d["_jvm_name"] = jvm_name
        if id is not None:
            if id != proto.DEFAULT_JVM_ID:  # another view, named by its object's id
                jvm_object = _object_from_id(id[len(proto.REFERENCE_TYPE):]
                                             if id.startswith(proto.REFERENCE_TYPE) else id,
                                             gateway_client)
            d["_id"] = id
        elif jvm_object is not None:
            d["_id"] = proto.REFERENCE_TYPE + jvm_object._target_id
        else:
            raise Py4JError("JVMView needs the id of a view or its jvm_object")
        if jvm_object is not None:
            d["_jvm_object"] = jvm_object  # py4j's: the Java view lives as long as this one
        d["_view"] = jvm_object  # what the client resolves in; None: the default view
        d["_lock"] = _thread.allocate_lock()

    def _resolve(self, name: str) -> Any:
        """Resolves ``name`` through this view's imports (one transport call); keeps a
        class found (a package once a class is found below it: JavaPackage)."""
        if name == UserHelpAutoCompletion.KEY:
            return UserHelpAutoCompletion()
        _check_name(name, "package or class")
        found = self._gateway_client.resolve(self._view, name)
        if found is None:
            return _subpackage(self, name, name, self._id)
        if _fixed_class(found):
            self._store(name, found)
        return found

    def _store(self, name: str, found: Any) -> None:
        """Keeps ``found`` as this view's ``name`` until the imports change."""
        with self._lock:
            self._remember(name, found)

    def _forget(self) -> None:
        """Drops cached resolutions (imports changed)."""
        with self._lock:
            self._forget_names()

    def __dir__(self) -> list[str]:
        """The classes imported into this view, then py4j's placeholder."""
        return self._gateway_client.dir(self._view, "v") + [UserHelpAutoCompletion.KEY]

    def __repr__(self) -> str:
        return f"<JVMView {self._jvm_name}>"


#: The JDK's built-in class loaders besides the bootstrap loader (None as a class's
#: loader): what they define is fixed once the JVM runs.
_JDK_LOADERS = frozenset({"jdk.internal.loader.ClassLoaders$AppClassLoader",
                          "jdk.internal.loader.ClassLoaders$PlatformClassLoader"})


def _fixed_class(found: Any) -> bool:
    """True when the JavaClass ``found`` is defined by one of the JDK's own class loaders
    (java.* needs no question: only they may define it), so that a lookup of its name
    through the same gateway may keep it. Asks Java on the first lookup of each name
    (three calls); a name found in another loader is remembered as such per client."""
    fqn = found._fqn
    if fqn.startswith("java."):
        return True
    client = found._gateway_client
    changeable = getattr(client, "_changeable_classes", None)
    if changeable is None:
        changeable = client._changeable_classes = set()
    if fqn in changeable:
        return False
    try:
        loader = found._java_lang_class.getClassLoader()
        fixed = loader is None or loader.getClass().getName() in _JDK_LOADERS
    except Py4JError:
        fixed = False
    if not fixed:
        changeable.add(fqn)
    return fixed


def _subpackage(parent: Any, name: str, fqn: str, jvm_id: str | None) -> JavaPackage:
    """The package ``fqn``, reached from ``parent`` (a JavaPackage or JVMView) as
    ``name``: not kept there until a class is found below it."""
    package = JavaPackage(fqn, parent._gateway_client, jvm_id)
    package.__dict__["_parent"] = (name, parent)
    return package


def _check_name(name: Any, what: str) -> None:
    """Refuses a Java name holding NUL (Java would see it cut there) with Py4JError."""
    if isinstance(name, str) and "\0" in name:
        raise Py4JError(f"py4jni: a Java {what} name cannot hold NUL: {name!r}")


def java_import(jvm_view: JVMView, import_str: str) -> None:
    """Imports a class (``"a.b.C"``) or a package (``"a.b.*"``) into ``jvm_view``."""
    _check_name(import_str, "import")
    jvm_view._gateway_client.view_import(jvm_view._view, import_str, False)
    jvm_view._forget()


def remove_imports(jvm_view: JVMView, import_str: str) -> None:
    """Removes an import made with java_import."""
    _check_name(import_str, "import")
    jvm_view._gateway_client.view_import(jvm_view._view, import_str, True)
    jvm_view._forget()


def get_field(java_object: Any, field_name: str) -> Any:
    """Reads a public field of a JavaObject (or a static one of a JavaClass)."""
    _check_name(field_name, "field")
    return java_object._gateway_client.field_get(java_object, field_name)


def set_field(java_object: Any, field_name: str, value: Any) -> None:
    """Assigns a public field of a JavaObject (or a static one of a JavaClass)."""
    _check_name(field_name, "field")
    java_object._gateway_client.field_set(java_object, field_name, value)



def _member_from_parts(name: str, container: Any, target_id: str,
                       gateway_client: Any) -> JavaMember:
    """py4j's ``JavaMember(name, container, target_id, gateway_client)``: the member
    ``name`` of ``container`` (a JavaObject, or a JavaClass for a static member) whose
    id is ``target_id`` (``"z:<fqn>"`` for a class), else of what ``target_id`` names:
    ``"z:<fqn>"`` the class, another id the object (``JavaObject(target_id,
    gateway_client)``: any id in socket mode, the entry point ``"t"`` in-process)."""
    if not isinstance(name, str) or not isinstance(target_id, str):
        raise TypeError("JavaMember(name, container, target_id, gateway_client): name and "
                        "target_id are str")
    static = target_id.startswith(proto.STATIC_PREFIX)
    if static and isinstance(container, JavaClass) and \
            target_id == proto.STATIC_PREFIX + container._fqn:
        owner: Any = container
    elif not static and isinstance(container, JavaObject) and \
            target_id == container._target_id:
        owner = container
    elif static:
        owner = JavaClass(target_id[len(proto.STATIC_PREFIX):], gateway_client)
    else:
        owner = JavaObject(target_id, gateway_client)
    return _py4jni.member(owner, name)


def get_java_class(java_class: JavaClass) -> JavaObject:
    """The ``java.lang.Class`` object (a JavaObject) of a JavaClass (py4j's
    ``java_class._java_lang_class``)."""
    return java_class._java_lang_class


def _java_lang_class_of(java_class: JavaClass) -> JavaObject:
    """JavaClass._java_lang_class where the client names classes (socket mode)."""
    return _transports.of(java_class._gateway_client).java_lang_class(java_class)


#: A memoryview over the memory of a Java direct ByteBuffer, without a copy (the
#: extension's function itself: no Python frame per call; its docstring says the rest).
as_memoryview = _py4jni.as_memoryview


def is_instance_of(gateway: "JavaGateway", java_object: Any, java_class: Any) -> bool:
    """True when ``java_object`` is an instance of ``java_class``: a fully qualified
    name, a JavaClass, or a JavaObject standing for its own class (py4j's rule; a
    java.lang.Class JavaObject, as ``get_java_class`` returns, stands for the class it
    is)."""
    if isinstance(java_class, JavaClass):
        java_class = get_java_class(java_class)
    elif not isinstance(java_class, (str, JavaObject)):
        raise Py4JError("java_class must be a string, a JavaClass, or a JavaObject")
    return gateway._transport.is_instance_of(gateway, java_object, java_class)


class JavaGateway(_py4jni.Namespace):
    """py4j's entry object. By default it embeds the JVM in this process.

    In-process options (py4jni's own): ``classpath`` (str or list), ``jvm_options``
    (list of ``-X...`` strings), ``libjvm`` (path), ``check_jni`` (``-Xcheck:jni``),
    ``keep_signals`` (omit ``-Xrs``; then Ctrl-C terminates the process instead of
    raising KeyboardInterrupt), ``interrupt_java`` (False: a Ctrl-C during this
    gateway's Java calls on the main thread does not interrupt them, KeyboardInterrupt
    follows when they return; default True, or ``PY4JNI_INTERRUPT_JAVA=0`` in the
    environment for False), ``entry_point`` (a JavaObject, or a class name to
    construct), ``cds`` (False: no class-data-sharing archive; ``"classpath"``: an
    archive of the classes this application loads from its class path too, made after
    the first run; see py4jni/_cds.py). A process holds one JVM: later gateways share it
    (same classpath).
    ``mode="socket"`` or a ``gateway_parameters`` argument connects to a py4j
    GatewayServer instead; there Java calls Python proxies through py4j's callback
    server, started on demand (``py4jni.socket_mode.callbacks``), and
    ``java_gateway_server`` is the GatewayServer object.
    """

    java_process: Any  #: py4j's: the java process of the server (None when not known)
    gateway_property: "GatewayProperty"  #: py4j's settings and proxy pool of the gateway

    _pinned_threads = False  # ClientServer: py4j's pinned-thread mode in socket mode

    def __init__(self, gateway_client: Any = None, auto_field: bool = False,
                 python_proxy_port: int = DEFAULT_PYTHON_PROXY_PORT,
                 start_callback_server: bool = False, auto_convert: bool = False,
                 eager_load: bool = False, gateway_parameters: GatewayParameters | None = None,
                 callback_server_parameters: CallbackServerParameters | None = None,
                 python_server_entry_point: Any = None, java_process: Any = None, *,
                 mode: str | None = None, classpath: str | Sequence[str] | None = None,
                 jvm_options: Iterable[str] = (), libjvm: str | None = None,
                 check_jni: bool = False, keep_signals: bool = False,
                 entry_point: Any = None, cds: bool | str = True,
                 interrupt_java: bool | None = None) -> None:
        transport, classpath, entry_point, served = _choose_transport(
            mode, gateway_parameters, gateway_client, classpath, entry_point)
        if self._pinned_threads and transport.mode == "socket":
            transport = _pinned()
        self.gateway_parameters = gateway_parameters or GatewayParameters(
            auto_field=auto_field, auto_convert=auto_convert, eager_load=eager_load)
        # py4j's default: not started at construction, and Java's callback connections
        # must present the gateway's token (PySpark's GatewayServer sends it)
        self.callback_server_parameters = callback_server_parameters or \
            CallbackServerParameters(port=python_proxy_port, eager_load=False,
                                     auth_token=self.gateway_parameters.auth_token)
        self.python_server_entry_point = python_server_entry_point
        self._auto_convert = auto_convert or self.gateway_parameters.auto_convert
        self._transport = transport
        self._mode = transport.mode
        if served is _UNSERVED:  # made on first use: _settle
            self.__dict__["_unserved"] = (_thread.allocate_lock(), interrupt_java)
        elif served is not None:  # a program taken over in-process serves the port
            from . import java_collections  # noqa: F401 - deferred: as below, first
            gateway_client, entry_point = served.open(self.gateway_parameters)
            self.__dict__["_served_by"] = served
            _default_interrupt(gateway_client, interrupt_java)
        self._gateway_client = gateway_client if gateway_client is not None else \
            transport.connect(self, classpath, jvm_options, libjvm, check_jni, keep_signals,
                              cds)
        # deferred to the first gateway (~2 ms of `import py4jni`): registers the
        # collection wrappers and the collections layer's hooks, before the client's first
        # object comes back; after the JVM's start, while the warm-up thread opens the
        # class path, which the first call waits for anyway
        from . import java_collections  # noqa: F401
        if gateway_client is None and transport.mode == "inproc":
            _default_interrupt(self._gateway_client, interrupt_java)
        self._install_converter()
        transport.attach(self)
        if served is not _UNSERVED:
            self._make_objects(entry_point)
            if served is not None and served.gateway_server is not None:
                self.java_gateway_server = served.gateway_server(self._gateway_client)
        transport.attach_after(self, start_callback_server, callback_server_parameters is not None)
        _describe_client(self)
        if self.gateway_parameters.eager_load:
            self._eager_load()
        self.java_process = java_process

    def _make_objects(self, entry_point: Any) -> None:
        """py4j's ``java_gateway_server``, ``jvm`` and ``entry_point`` of the gateway."""
        self.java_gateway_server = self._transport.gateway_server(self._gateway_client)
        self.jvm = JVMView(self._gateway_client, proto.DEFAULT_JVM_NAME,
                           id=proto.DEFAULT_JVM_ID)
        self.entry_point = self._make_entry_point(entry_point)

    def _eager_load(self) -> None:
        """py4j's ``eager_load``: a first call at construction, so that a server that is
        not there raises Py4JNetworkError now; the gateway is shut down first."""
        try:
            self.jvm.System.currentTimeMillis()
        except Exception:
            self.shutdown()
            raise

    def _settle(self) -> None:
        """The first use of a gateway whose port nothing served when it was made (under
        the py4j switch; py4jni/_switch.py ``mode_for``): asks again. A program taken
        over in-process now serving the port makes this gateway in-process over it; a
        py4j server listening there makes it a socket gateway to that server; else
        py4j's Py4JNetworkError, and the next use asks again."""
        from . import _switch  # deferred: importlib and typing, under the switch only
        lock, interrupt_java = self.__dict__["_unserved"]
        with lock:
            if "_unserved" not in self.__dict__:
                return  # another thread settled it meanwhile
            if self._gateway_client.closed:
                raise Py4JError("py4jni: the gateway has been shut down")
            params = self.gateway_parameters
            address, port = params.address or DEFAULT_ADDRESS, params.port
            served = _switch.served_in_process(address, port)
            if served is None:
                failure = _switch.probe(address, port)
                if failure is not None:
                    raise Py4JNetworkError(f"An error occurred while trying to connect to "
                                           f"the Java server ({address}:{port})", failure)
                _switch.say_socket(address, port)
                self._make_objects(None)
                del self.__dict__["_unserved"]
                _describe_client(self)
                return
            client, entry_point = served.open(params)
            _default_interrupt(client, interrupt_java)
            old = self._gateway_client
            self.shutdown_callback_server()
            for name in ("_socket_callbacks", "_callback_server", "_python_proxy_port"):
                self.__dict__.pop(name, None)
            self.__dict__["_served_by"] = served
            self.set_gateway_client(client)
            self.entry_point = entry_point
            if served.gateway_server is not None:
                self.java_gateway_server = served.gateway_server(client)
            self._transport.attach(self)
            del self.__dict__["_unserved"]
            _describe_client(self)
            old.shutdown()

    # -- set-up -------------------------------------------------------------------
    def _install_converter(self) -> None:
        """Lets other layers (collections, callbacks) convert Python arguments."""
        self._gateway_client.converter = _hooks.make_converter(self)

    def _make_entry_point(self, entry_point: Any) -> Any:
        if entry_point is None:
            return self._transport.default_entry_point(self._gateway_client)
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
        return self._transport.start_callback_server(self, callback_server_parameters)

    def get_callback_server(self) -> Any:
        """Socket mode: the running callback server (py4jni.socket_mode.callbacks.CallbackServer:
        ``get_listening_port()``, ``get_listening_address()``, ``shutdown()``), or None.
        In-process: None (no server)."""
        return self._transport.get_callback_server(self)

    # -- py4j API -------------------------------------------------------------------
    def new_jvm_view(self, name: str = "custom jvm") -> JVMView:
        """A new JVMView with its own imports (``java.lang.*`` only)."""
        if "_unserved" in self.__dict__:
            self._settle()
        ref = self._gateway_client.view_new(name)
        return JVMView(self._gateway_client, name, jvm_object=ref)

    def new_array(self, java_class: Any, *dimensions: int) -> Any:
        """A new Java array of ``java_class`` (``gw.jvm.int`` for primitives)."""
        return _hooks.new_array(self, java_class, *dimensions)

    def register_natives(self, class_name: Any, mapping: Any) -> None:
        """Implements the ``native`` methods of a Java class with Python callables
        (py4jni only, in-process): ``{"name": fn}`` or ``{"name(JNI signature)": fn}``.
        Each becomes a libffi closure bound with RegisterNatives, so Java calls it with
        no boxing or reflection. Unknown names and wrong arities raise Py4JError now.
        See ``py4jni.inproc_mode.callbacks.register_natives``."""
        from .inproc_mode import callbacks  # deferred: ~0.4 ms, for the programs that use natives
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
        """py4j's help page of a JavaObject, JavaClass or JavaMember (the member's
        overloads): paged, or returned when ``display`` is False."""
        return gateway_help(self._gateway_client, var, pattern, short_name, display)

    @classmethod
    def launch_gateway(cls, port: int = 0, jarpath: str = "", classpath: str = "",
                       javaopts: Sequence[str] = [],  # noqa: B006 - py4j's default, read only
                       die_on_exit: bool = False,
                       redirect_stdout: Any = None, redirect_stderr: Any = None,
                       daemonize_redirect: bool = True, java_path: str = "java",
                       create_new_process_group: bool = False, enable_auth: bool = False,
                       cwd: str | None = None, use_shell: bool = False,
                       **gateway_kwargs: Any) -> "JavaGateway":
        """py4j's: ``launch_gateway(...)`` (see py4jni.launcher: py4j's GatewayServer in a
        child ``java``; under the py4j switch in in-process mode, served by the embedded
        JVM instead), then a gateway to its port whose ``java_process`` is the server's
        process; ``shutdown()`` stops that server. py4jni's ``gateway_kwargs`` go to the
        gateway (a ClientServer's launch_gateway makes a JavaGateway, as py4j's)."""
        from .launcher import launch_gateway  # deferred: for programs that launch a server
        out = launch_gateway(port, jarpath, classpath, javaopts, die_on_exit, redirect_stdout,
                             redirect_stderr, daemonize_redirect, java_path,
                             create_new_process_group, enable_auth, cwd, True, use_shell)
        the_port, token, proc = out if enable_auth else (out[0], None, out[1])
        params = gateway_kwargs.pop("gateway_parameters", None) or GatewayParameters()
        params.port, params.auth_token = the_port, token
        gateway_class = JavaGateway if cls._pinned_threads else cls
        gateway = gateway_class(gateway_parameters=params, java_process=proc, **gateway_kwargs)
        if isinstance(proc, _subprocess().Popen):  # a child java: waited for at shutdown
            gateway.__dict__["_launched"] = (proc, die_on_exit)
        return gateway

    def shutdown(self, raise_exception: bool = False) -> None:
        """Closes the gateway: later use of its objects raises Py4JError. As py4j, asks
        the server to shut down: in socket mode the GatewayServer (a server that
        ``launch_gateway`` started is waited for, killed if it ignores the request; as
        py4j, one launched with ``die_on_exit`` is left to end when its stdin closes, at
        the latest when this process exits); in-process, a program's server this
        gateway reached in-process; the JVM itself stays up (a JVM cannot be restarted
        in one process). ``java_process`` is left as it is, as py4j does."""
        if "_unserved" in self.__dict__:
            try:
                self._settle()  # a server now there is the one py4j's shutdown reaches
            except Py4JNetworkError:
                pass
        _hooks.before_shutdown(self)
        self._transport.stop_server(self, raise_exception)
        served = self.__dict__.get("_served_by")
        if served is not None:
            try:
                served.shutdown()
            except Exception:  # noqa: BLE001
                if raise_exception:
                    raise
                _log().info("Exception while shutting down the in-process server",
                            exc_info=True)
        proc, dies_on_exit = self.__dict__.get("_launched", (None, False))
        if proc is not None and proc.poll() is None and not dies_on_exit:
            try:
                if proc.stdin:
                    proc.stdin.close()  # --die-on-broken-pipe servers exit on EOF
                proc.wait(timeout=5)
            except Exception:  # noqa: BLE001 - a server that ignores 's' is killed
                proc.kill()
                proc.wait()
        self._gateway_client.shutdown()
        self.shutdown_callback_server(raise_exception)

    def close(self, keep_callback_server: bool = False,
              close_callback_server_connections: bool = False) -> None:
        """Closes this gateway's connections, leaving the server running (socket mode, and
        a program's server reached in-process; the callback server too when
        ``keep_callback_server``). In-process otherwise the same as shutdown."""
        if not self._transport.closes_only() and "_served_by" not in self.__dict__:
            self.shutdown()
            return
        _hooks.before_shutdown(self)
        self._gateway_client.shutdown()
        if not keep_callback_server:
            self.shutdown_callback_server()

    def shutdown_callback_server(self, raise_exception: bool = False) -> None:
        """Socket mode: stops the callback server, closes its connections and forgets the
        Python objects Java held (Java's proxies then fail when called). In-process:
        nothing to stop."""
        if self.__dict__.get("_socket_callbacks") is None:
            return
        from .socket_mode import callbacks  # deferred: loaded once the gateway had callbacks
        try:
            callbacks.shutdown_callback_server(self)
        except Exception:  # noqa: BLE001
            if raise_exception:
                raise

    def close_callback_server(self, raise_exception: bool = False) -> None:
        """Socket mode: closes the callback server's connections (the server keeps
        listening; Java opens new connections when it calls back). An error is logged,
        or raised when ``raise_exception``. In-process: nothing to close."""
        server = self.get_callback_server()
        if server is None:
            return
        try:
            server.close()
        except Exception:  # noqa: BLE001
            if raise_exception:
                raise
            _log().info("Exception while closing callback server", exc_info=True)

    def restart_callback_server(self) -> None:
        """Shuts the callback server down (if it runs; its proxy pool is emptied) and
        starts a new one with the gateway's ``callback_server_parameters``."""
        self.shutdown_callback_server()
        self.start_callback_server(self.callback_server_parameters)

    def set_gateway_client(self, gateway_client: Any) -> None:
        """Makes ``gateway_client`` (a GatewayClient, or another gateway's
        ``_gateway_client``) this gateway's client: it takes the gateway's converters and
        ``gateway_property``, and ``entry_point``, ``java_gateway_server`` and ``jvm`` are
        made anew on it (py4j's advanced use: before the gateway is used)."""
        if not isinstance(gateway_client, _py4jni.Client):
            raise Py4JError("set_gateway_client needs a py4jni client (a GatewayClient, "
                            f"or a gateway's _gateway_client), not {type(gateway_client)}")
        transport = _transports.of(gateway_client)
        if self._pinned_threads and transport.mode == "socket":
            transport = _pinned()
        self._transport, self._mode = transport, transport.mode
        gateway_client.converters = proto.INPUT_CONVERTER if self._auto_convert else None
        gateway_client.gateway_property = self.gateway_property
        gateway_client._keep_dropped = not self.gateway_parameters.enable_memory_management
        self._gateway_client = gateway_client
        self._install_converter()
        self.java_gateway_server = transport.gateway_server(gateway_client)
        self.jvm = JVMView(gateway_client, proto.DEFAULT_JVM_NAME, id=proto.DEFAULT_JVM_ID)
        self.entry_point = transport.default_entry_point(gateway_client)
        state = self.__dict__.get("_socket_callbacks")
        if state is not None:  # Java's proxies reach Python through the new client too
            import weakref
            state._client_ref = weakref.ref(gateway_client)
            gateway_client.proxy_hook = state.proxy_text

    def _resolve(self, name: str) -> Any:
        """Unknown gateway attributes are the entry point's (py4j's rule). A gateway
        whose port nothing served when it was made settles first (``jvm``,
        ``entry_point`` and ``java_gateway_server`` are made then)."""
        if name.startswith("_"):
            raise AttributeError(name)
        if "_unserved" in self.__dict__:
            self._settle()
            if name in self.__dict__:
                return self.__dict__[name]
        ep = self.__dict__.get("entry_point")
        if ep is None:
            raise Py4JError(f"the gateway has no entry point (looking up {name!r})")
        return getattr(ep, name)

    def __enter__(self) -> "JavaGateway":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()


#: ``_choose_transport``'s answer for a gateway whose port nothing serves (under the py4j
#: switch): a socket gateway whose objects are made on first use (JavaGateway._settle).
_UNSERVED = "unserved"


def _choose_transport(mode: str | None, gateway_parameters: Any, gateway_client: Any,
                      classpath: Any, entry_point: Any) -> tuple[Any, Any, Any, Any]:
    """The one place a gateway's transport is decided: an explicit ``mode``, else the
    mode of a given client, else the py4j switch's launcher rule (``python -m py4jni
    run`` / PY4JNI_AS_PY4J=1: py4jni/_switch.py ``mode_for``), else socket when
    ``gateway_parameters`` were given. Returns (transport, classpath, entry_point,
    served): the transport (a py4jni/_transports.py Transport, which the gateway then
    asks instead of testing the mode), classpath and entry_point completed from the
    switch, and ``served``: None, the ``_switch.InProcessServer`` of a program taken
    over in-process that serves the parameters' port, or ``_UNSERVED``."""
    # The switch is installed by importing py4jni._switch; unimported, it is off (and
    # importing it here would cost the first gateway ~10 ms of importlib machinery).
    _switch = sys.modules.get(__package__ + "._switch")
    switch = _switch.settings() if _switch is not None else None
    served = None
    if mode is None and isinstance(gateway_client, _py4jni.Client):
        mode = gateway_client.kind
    if mode is None and _switch is not None and switch is None and \
            gateway_parameters is not None and gateway_client is None:
        # a port this process serves in its JVM (a framework adapter's launch taken
        # over) is reached in-process, switch or not: nothing listens on it
        found = _switch.served_in_process(gateway_parameters.address or DEFAULT_ADDRESS,
                                          gateway_parameters.port)
        if found is not None:
            mode, served = "inproc", found
    if mode is None and _switch is not None and switch is not None:
        rule = _switch.mode_for(gateway_parameters)  # the launcher rule
        if rule == _switch.UNSERVED:
            mode, served = "socket", _UNSERVED
        elif isinstance(rule, _switch.InProcessServer):
            mode, served = "inproc", rule
        else:
            mode = rule
    if mode is None:
        mode = "socket" if gateway_parameters is not None else "inproc"
    if mode not in ("inproc", "socket"):
        raise ValueError(f"mode must be 'inproc' or 'socket', not {mode!r}")
    if switch is not None and mode == "inproc" and served is None:
        classpath = classpath or switch.classpath
        entry_point = entry_point or switch.entry_point
    return _transports.for_mode(mode), classpath, entry_point, served


def _default_interrupt(client: Any, interrupt_java: bool | None) -> None:
    """An in-process client's Ctrl-C rule: ``interrupt_java``, else PY4JNI_INTERRUPT_JAVA
    (default on)."""
    if interrupt_java is None:
        interrupt_java = os.environ.get("PY4JNI_INTERRUPT_JAVA", "1") != "0"
    client.interrupt_java = interrupt_java


def _describe_client(gateway: "JavaGateway") -> None:
    """Gives the gateway's client py4j's GatewayClient attributes (address, port,
    converters, gateway_property with its proxy pool, ...)."""
    client = gateway._gateway_client
    if not isinstance(client, _py4jni.Client):
        return
    if getattr(client, "gateway_parameters", None) is not None:  # a GatewayClient(...) given
        gateway.gateway_parameters = client.gateway_parameters
    params = gateway.gateway_parameters
    pool = gateway._transport.proxy_pool(gateway)
    client.gateway_parameters = params
    client.address = params.address
    client.port = params.port
    client.auto_close = params.auto_close
    client.ssl_context = params.ssl_context
    client.is_connected = gateway._transport.is_connected(client)
    client.gateway_property = GatewayProperty(params.auto_field, pool,
                                              params.enable_memory_management)
    gateway.gateway_property = client.gateway_property
    client.converters = proto.INPUT_CONVERTER if gateway._auto_convert else None
    client.auto_field = params.auto_field
    client._keep_dropped = not params.enable_memory_management
    entry_point = gateway.__dict__.get("entry_point")  # (made later when unserved)
    if isinstance(entry_point, JavaObject):  # JavaObject("t", client)
        import weakref
        client._entry_point = weakref.ref(entry_point)


def _object_from_id(target_id: str, client: Any) -> Any:
    """``JavaObject(target_id, client)``: in socket mode a reference to the server's
    object ``target_id``; in-process the entry point (``"t"``), else a Py4JError (the
    ids of in-process objects are addresses, not names)."""
    return _transports.of(client).object_from_id(target_id, client)


class _ClientType(type):
    """isinstance(x, GatewayClient) holds for every py4jni client."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _py4jni.Client) or type.__instancecheck__(cls, obj)


class GatewayClient(metaclass=_ClientType):
    """py4j's GatewayClient. A gateway's ``_gateway_client`` is a py4jni client with
    py4j's attributes (``address``, ``port``, ``converters``, ``gateway_property``...);
    constructing a GatewayClient connects a socket-mode client to a GatewayServer (pass
    it to ``JavaGateway(gateway_client=...)``). py4j's methods ``send_command``,
    ``garbage_collect_object``, ``shutdown_gateway`` and ``close`` are the client's (see
    py4jni._client_api; ``send_command`` raises Py4JError in-process)."""

    def __new__(cls, address: str = DEFAULT_ADDRESS, port: int = DEFAULT_PORT,
                auto_close: bool = True, gateway_property: Any = None,
                ssl_context: Any = None, gateway_parameters: Any = None, *,
                read_timeout: float | None = None, auth_token: str | None = None) -> Any:
        params = gateway_parameters or GatewayParameters(
            address=address, port=port, auto_close=auto_close, ssl_context=ssl_context,
            read_timeout=read_timeout, auth_token=auth_token)
        from .socket_mode.transport import connect_socket  # deferred: socket mode only
        client = connect_socket(params)
        client.gateway_parameters, client.address, client.port = params, params.address, params.port
        client.auto_close, client.ssl_context, client.is_connected = (params.auto_close,
                                                                  params.ssl_context, True)
        client.gateway_property, client.converters = gateway_property, None
        return client


# py4j's methods, reachable on the class too (``GatewayClient.send_command(client, ...)``,
# ``inspect.signature``): they are the py4jni client's own (py4jni._client_api).
for _name in ("send_command", "garbage_collect_object", "shutdown_gateway", "close"):
    setattr(GatewayClient, _name, getattr(_py4jni.Client, _name))


class GatewayConnection:
    """py4j's single connection to a GatewayServer, for raw py4j commands:
    ``start()``, ``send_command(text) -> answer``, ``close()``. (py4jni's own calls go
    through the C client's connections.)"""

    def __init__(self, gateway_parameters: Any, gateway_property: Any = None) -> None:
        self.gateway_parameters = gateway_parameters
        self.address = gateway_parameters.address
        self.port = gateway_parameters.port
        import socket
        family = socket.AF_INET6 if ":" in self.address else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        if gateway_parameters.ssl_context:  # py4j's: the handshake comes with connect()
            self.socket = gateway_parameters.ssl_context.wrap_socket(
                self.socket, server_hostname=self.address)
        self.is_connected = False
        self.auto_close = gateway_parameters.auto_close
        self.gateway_property = gateway_property
        self.stream: Any = None

    def start(self) -> None:
        """Connects (and sends the auth token, if any)."""
        try:
            self.socket.connect((self.address, self.port))
            self.stream = self.socket.makefile("rb")
            self.is_connected = True
        except Exception as exc:  # noqa: BLE001
            raise Py4JNetworkError(f"An error occurred while trying to connect to the Java "
                                   f"server ({self.address}:{self.port})", exc) from exc
        token = self.gateway_parameters.auth_token
        if token:
            answer = self.send_command(
                f"{proto.AUTH_COMMAND_NAME}\n{token}\n{proto.END_COMMAND_PART}")
            if is_error(answer)[0]:
                self.close()
                raise Py4JAuthenticationError("Failed to authenticate with gateway server.")

    def send_command(self, command: str) -> str:
        """Sends one py4j command; returns the answer line without its ``!`` prefix."""
        try:
            self.socket.sendall(command.encode("utf-8"))
        except Exception as exc:  # noqa: BLE001
            raise Py4JNetworkError("Error while sending", exc, proto.ERROR_ON_SEND) from exc
        try:
            answer = smart_decode(self.stream.readline()[:-1])
        except Exception as exc:  # noqa: BLE001
            raise Py4JNetworkError("Error while receiving", exc,
                                   proto.ERROR_ON_RECEIVE) from exc
        if not answer:
            raise Py4JNetworkError("Answer from Java side is empty", when=proto.EMPTY_RESPONSE)
        return answer[1:] if answer.startswith(proto.RETURN_MESSAGE) else answer

    def close(self, reset: bool = False) -> None:
        """Closes the connection (with a RST when ``reset``)."""
        _close_socket(self.socket, self.stream, reset)
        self.is_connected = False

    def shutdown_gateway(self) -> None:
        """Asks the GatewayServer to shut down, then closes."""
        try:
            self.send_command(proto.SHUTDOWN_GATEWAY_COMMAND_NAME)
        except Py4JNetworkError:
            pass
        self.close(True)


class GatewayConnectionGuard:
    """Context manager over a GatewayConnection: on success the connection goes back to
    the client (``client._give_back_connection``, when it has one), on error it closes."""

    def __init__(self, client: Any, connection: Any) -> None:
        self._client = client
        self._connection = connection

    def __enter__(self) -> "GatewayConnectionGuard":
        return self

    def read(self, hint: int = -1) -> bytes:
        return self._connection.stream.read(hint)

    def __exit__(self, type: Any, value: Any, traceback: Any) -> None:  # noqa: A002
        give_back = getattr(self._client, "_give_back_connection", None)
        if value is None and give_back is not None:
            give_back(self._connection)
        else:
            self._connection.close()


def _member_stream(member: JavaMember, *args: Any) -> GatewayConnectionGuard:
    """py4j's ``JavaMember.stream(*args)`` (socket mode): calls the method, which returns
    a ReadableByteChannel, on a connection of its own whose bytes the returned guard
    reads (``with member.stream() as g: g.read(n)``)."""
    owner = member.container
    client = owner._gateway_client
    if not _transports.of(client).names_objects:
        raise Py4JError("py4jni: JavaMember.stream() is py4j's binary socket protocol; "
                        "in-process, call the method and read its channel")
    target = (proto.STATIC_PREFIX + owner._fqn if isinstance(owner, JavaClass)
              else owner._target_id)
    parts = "".join(get_command_part(a) for a in args)
    answer, guard = client.send_command(f"{proto.STREAM_COMMAND_NAME}{target}\n"
                                        f"{member.name}\n{parts}{proto.END_COMMAND_PART}",
                                        binary=True)
    try:
        get_return_value(answer, client, target, member.name)
    except BaseException:
        guard._connection.close()
        raise
    return guard


def __getattr__(name: str) -> Any:
    """py4j's names that are imported on first use (see _LAZY and _logging)."""
    if name in _LAZY:
        import importlib
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module, __package__), attr)
    if name in ("NullHandler", "null_handler", "logger"):
        return _base._logging()[name]
    if name == "DEFAULT_CALLBACK_SERVER_ACCEPT_TIMEOUT":  # set_default_callback_accept_timeout
        return _base.DEFAULT_CALLBACK_SERVER_ACCEPT_TIMEOUT   # changes it there
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


register_output_converter(proto.REFERENCE_TYPE,
                          lambda target_id, gateway_client: JavaObject(target_id, gateway_client))
