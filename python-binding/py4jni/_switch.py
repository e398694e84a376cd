"""py4j -> py4jni: the switch that runs a program written for py4j on py4jni.

``python -m py4jni run [--inproc|--socket] [--classpath CP] [--entry-point CLASS]
script.py args...`` (see ``py4jni.__main__``; the entry points are py4jni/_run.py), or ``PY4JNI_AS_PY4J=1`` in the
environment of any Python program (read by the ``py4jni-as-py4j.pth`` hook installed
with the package), makes every ``import py4j`` / ``py4j.<module>`` resolve to the
same-named py4jni module. ``PY4JNI_MODE`` (``inproc``, the default, or ``socket``)
decides what the program's ``JavaGateway()`` / ``ClientServer()`` becomes: in-process,
the embedded JVM with ``PY4JNI_CLASSPATH`` and the entry point class
``PY4JNI_ENTRY_POINT`` (its parameters' ports are then not used); in socket mode,
py4j's own behaviour (a GatewayServer must be listening). ``mode_for`` holds the
launcher rule for a program that starts a JVM of its own. This module knows no
framework: the entry points also install py4jni.frameworks' import hooks, by which
importing ``pyspark`` or ``pyflink`` in in-process mode embeds that framework's JVM.
In socket mode frameworks keep their launchers, and the gateways they make are
py4jni's socket clients.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import _thread
import os
import sys
from typing import Any, Callable, NamedTuple

ENV_SWITCH = "PY4JNI_AS_PY4J"
_ACTIVE = False  # the switch: the alias and the gateway settings
_ALIASED = False  # the import alias alone (framework adapters set it too)


class Settings(NamedTuple):
    """The switch's choices for gateways the program constructs."""

    mode: str
    classpath: str | None
    entry_point: str | None


def settings() -> Settings | None:
    """The switch's settings while it is installed, else None."""
    if not _ACTIVE:
        return None
    mode = os.environ.get("PY4JNI_MODE", "inproc") or "inproc"
    return Settings(mode, os.environ.get("PY4JNI_CLASSPATH") or None,
                    os.environ.get("PY4JNI_ENTRY_POINT") or None)


class _Alias(importlib.abc.Loader):
    """Loads ``py4j.X`` as the module object ``py4jni.X`` (one module, two names)."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: Any) -> Any:
        return importlib.import_module(self.target)

    def exec_module(self, module: Any) -> None:
        pass  # already executed under its py4jni name


def counterpart(name: str) -> str:
    """The py4jni module that stands for py4j's module ``name`` (``py4j`` itself: the
    package py4jni/_as_py4j.py, holding py4j's ``__version__``)."""
    return "py4jni._as_py4j" if name == "py4j" else "py4jni" + name[len("py4j"):]


class _Finder(importlib.abc.MetaPathFinder):
    """Answers ``py4j`` and ``py4j.*`` imports with py4jni's modules (before any
    installed py4j)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "py4j" and not fullname.startswith("py4j."):
            return None
        real = counterpart(fullname)
        if importlib.util.find_spec(real) is None:
            return None  # e.g. py4j.tests: no py4jni counterpart
        return importlib.util.spec_from_loader(fullname, _Alias(real),
                                               is_package=fullname == "py4j")


def alias() -> None:
    """From now on ``py4j`` / ``py4j.*`` imports resolve to py4jni's modules
    (idempotent); py4j modules imported before leave ``sys.modules`` (what holds them
    keeps them). The switch's gateway settings are not applied."""
    global _ALIASED
    if _ALIASED:
        return
    _ALIASED = True
    sys.meta_path.insert(0, _Finder())
    for name in [n for n in sys.modules if n == "py4j" or n.startswith("py4j.")]:
        if not getattr(sys.modules[name], "__name__", "").startswith("py4jni"):
            del sys.modules[name]


def install() -> None:
    """Installs the switch's py4j part in this process (idempotent): the import alias
    and the settings gateways read. The entry points (py4jni/_run.py) add the framework
    adapters' import hooks."""
    global _ACTIVE
    if _ACTIVE:
        return
    _ACTIVE = True
    alias()


#: py4j's port of a GatewayServer (and of a ClientServer's JavaServer): a gateway that
#: names it stands for "the py4j server", which the switch gives the program.
_PY4J_DEFAULT_PORT = 25333

#: ``mode_for``'s answer for a gateway whose port nothing serves (see there).
UNSERVED = "unserved"


class InProcessServer(NamedTuple):
    """A py4j server that a program taken over in-process runs in this process's JVM
    (its GatewayServer registered its entry point instead of opening its port)."""

    #: What serves the port, for messages (e.g. the program's main class).
    name: str
    #: ``open(parameters)``, given the gateway's GatewayParameters / JavaParameters,
    #: makes what one gateway needs: ``(client, entry_point)``, a new in-process py4jni
    #: client (the gateway's ``shutdown()`` ends that client only) and the entry point
    #: the program's GatewayServer was given, a JavaObject on that client, or None.
    #: Raises as py4j's server refuses a connection (Py4JAuthenticationError for a
    #: wrong token).
    open: Callable[[Any], tuple[Any, Any]]
    #: py4j's ``shutdown()`` of a gateway over it: asks that server to shut down.
    shutdown: Callable[[], None]
    #: ``gateway_server(client)``: the Java GatewayServer object as a JavaObject of that
    #: client (the gateway's ``java_gateway_server``), or None when there is none.
    gateway_server: Callable[[Any], Any] | None = None


_SERVED: dict[int, InProcessServer] = {}  # port -> its server in this process
_SERVED_LOCK = _thread.allocate_lock()
_LOOPBACK = frozenset(("127.0.0.1", "localhost", "::1", "0.0.0.0", ""))


def register_in_process_server(port: int, server: InProcessServer) -> None:
    """Makes ``server`` the one that serves ``port`` in this process (a loopback
    address), until ``unregister_in_process_server``. Raises ValueError when another
    serves it."""
    with _SERVED_LOCK:
        if _SERVED.get(port, server) is not server:
            raise ValueError(f"py4jni: port {port} is served in this process already "
                             f"({_SERVED[port].name})")
        _SERVED[port] = server


def unregister_in_process_server(port: int, server: InProcessServer) -> bool:
    """Ends ``server``'s registration for ``port``; False when it had none."""
    with _SERVED_LOCK:
        if _SERVED.get(port) is not server:
            return False
        del _SERVED[port]
        return True


def served_in_process(address: str, port: int) -> InProcessServer | None:
    """The server that this process runs for ``(address, port)`` in its JVM, or None:
    the one place a gateway asks whether a program taken over in-process serves a port
    (registered with ``register_in_process_server``: py4j's ``launch_gateway`` under the
    switch, py4jni/launcher.py ``EmbeddedGatewayServer``). Only loopback addresses are
    served in this process.

    Consulted under the switch in in-process mode when a gateway is constructed with
    parameters naming a port (``mode_for``), and again, while nothing served that port,
    by that gateway at its first use (``JavaGateway._settle``), so that a gateway made
    before the program registered reaches it in-process afterwards. Any thread; it does
    not block."""
    if address not in _LOOPBACK and not address.startswith("127."):
        return None
    with _SERVED_LOCK:
        return _SERVED.get(port)


def probe(address: str, port: int) -> OSError | None:
    """None when something accepts a TCP connection on (address, port) within 0.5 s,
    else the OSError of the attempt (py4j's cause of "cannot connect")."""
    import socket
    try:
        with socket.create_connection((address, port), timeout=0.5):
            return None
    except OSError as exc:
        return exc


def say_socket(address: str, port: int) -> None:
    """The launcher rule's one stderr line for a port a py4j server listens on."""
    print(f"py4jni: a py4j server this program started listens on {address}:{port}; "
          "connecting to it in socket mode instead of embedding a second JVM",
          file=sys.stderr, flush=True)


def mode_for(parameters: Any) -> str | InProcessServer | None:
    """The switch's choice for a gateway the program constructs with ``parameters``
    (GatewayParameters / JavaParameters, or None): None when the switch is off, else
    ``"inproc"`` (the embedded JVM), ``"socket"``, an ``InProcessServer``, or
    ``UNSERVED``.

    The launcher rule, in in-process mode, for parameters naming a port P (socket mode:
    always ``"socket"``; no parameters: py4j's default port's server when a program
    taken over in-process serves it, else the embedded JVM):

    1. a program taken over in-process serves P (``served_in_process``): that server;
    2. a py4j server listens on P (a JVM the program, or a framework without an adapter,
       started itself): socket mode to it, said in one line on stderr;
    3. nothing serves P: the embedded JVM when P is py4j's default port (25333: "the py4j
       server", which the switch gives the program) or when the switch names what the
       program needs (PY4JNI_CLASSPATH or PY4JNI_ENTRY_POINT); otherwise ``UNSERVED``:
       the gateway behaves as py4j's with no server there (Py4JNetworkError at
       construction under ``eager_load``, else at its first call) and asks again at each
       call until the port is served, never a silent empty JVM.

    Launches the switch understands are taken over before a gateway is made: py4j's
    ``launch_gateway`` (its command line is py4j's own) and the frameworks of
    py4jni.frameworks."""
    switch = settings()
    if switch is None:
        return None
    if switch.mode != "inproc":
        return switch.mode
    if parameters is None:  # py4j's defaults: the py4j server on its default port
        return served_in_process("127.0.0.1", _PY4J_DEFAULT_PORT) or switch.mode
    address = getattr(parameters, "address", None) or "127.0.0.1"
    port = getattr(parameters, "port", None)
    if not isinstance(port, int) or port <= 0:
        return switch.mode
    served = served_in_process(address, port)
    if served is not None:
        return served
    if probe(address, port) is None:
        say_socket(address, port)
        return "socket"
    if port == _PY4J_DEFAULT_PORT or switch.classpath or switch.entry_point:
        return switch.mode
    return UNSERVED
