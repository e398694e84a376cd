"""What every framework adapter shares: the framework's JVM embedded in this process.

A framework written on py4j (PySpark, PyFlink) launches a JVM of its own (a launcher
script, a main class starting a py4j server) and connects to it by port. An adapter
replaces that launcher: it computes what the launcher would have given the JVM (a
``Launch``: class path, JVM options, system properties, environment) from the
framework's own helpers, and ``Adapter.embed`` starts the JVM here with it. Written
once, here:

- embedding: ``embed`` (one JVM per process; a JVM already started with other options
  is an error naming the framework), the environment first (the JVM's ``System.getenv``
  and the Python workers the framework starts inherit it);
- the import alias: ``adopt_py4j`` (the framework's ``py4j`` imports resolve to py4jni's
  modules; names its modules imported before are rebound), so the framework's exception
  hook (it replaces ``py4j.java_gateway.get_return_value``) is py4jni's error hook and
  its converters (``register_input_converter``) are py4jni's, those registered before
  carried over;
- shutdown hooks and exit: nothing of the framework's own; the embedded JVM's shutdown
  hooks run at interpreter exit (py4jni's atexit handler), so the framework's temp
  directories and worker processes go with them, and the exit status is Python's;
- callbacks: ``InProcessCallbacks`` stands where a framework looks for py4j's callback
  server (Java calls Python proxies directly in-process).
"""
from __future__ import annotations

import importlib
import os
import sys
import threading
from types import ModuleType
from typing import Any, Iterable, NamedTuple

from .. import _switch, protocol
from ..protocol import Py4JError

#: why a framework's adapter is off on a free-threaded CPython
FREE_THREADED_REASON = ("its in-process mode needs a CPython with the GIL (this one is "
                        "free-threaded: the framework's own extension modules and wheels "
                        "are built for GIL builds)")


def free_threaded() -> bool:
    """Whether this CPython is a free-threaded build (Py_GIL_DISABLED)."""
    import sysconfig
    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))

__all__ = ["Adapter", "Launch", "InProcessCallbacks", "adopt_py4j", "system_property_options",
           "replace_name"]


class Launch(NamedTuple):
    """What a framework's launcher gives its JVM, computed by the adapter."""

    classpath: list[str]
    jvm_options: list[str]  #: without the system properties
    system_properties: dict[str, str]
    environment: dict[str, str]  #: set in os.environ before the JVM starts
    main_class: str  #: the class the launcher runs (its set-up is the adapter's)


def system_property_options(props: dict[str, str]) -> list[str]:
    """``-Dkey=value`` for each property, in order."""
    return [f"-D{key}={value}" for key, value in props.items()]


class InProcessCallbacks:
    """Stands where a framework looks for py4j's callback server: in-process, Java calls
    Python proxies directly (py4jni.inproc_mode.callbacks), so there is no server and no socket.
    Its address and port are what a framework passes to Java's
    ``GatewayServer.resetCallbackClient``; no connection is ever made to them."""

    port = 0

    def get_listening_address(self) -> str:
        """The loopback address (never connected to)."""
        return "127.0.0.1"

    def get_listening_port(self) -> int:
        """0: no server listens."""
        return self.port

    def shutdown(self) -> None:
        """Nothing to stop."""


def replace_name(modules: Iterable[str], name: str, value: Any) -> None:
    """Sets ``name`` to ``value`` in each loaded module of ``modules`` that defines or
    imported it (a launcher function the framework's modules call by that name)."""
    for modname in modules:
        mod = sys.modules.get(modname)
        if mod is not None and hasattr(mod, name):
            setattr(mod, name, value)


def _from_py4j(value: Any) -> bool:
    """True for a module, class or function of py4j itself (not of py4jni)."""
    owner = value.__name__ if isinstance(value, ModuleType) else \
        getattr(value, "__module__", None)
    return isinstance(owner, str) and (owner == "py4j" or owner.startswith("py4j."))


def _carry_converters(real_protocol: ModuleType | None) -> None:
    """Converters registered with py4j's ``register_input_converter`` /
    ``register_output_converter`` before the alias (pyspark.sql.types registers its
    dates, timestamps, intervals and numpy converters at import) move to py4jni's
    registries, in their order; py4j's own converters are py4jni's same-named ones."""
    if real_protocol is None:
        return
    mine = protocol.INPUT_CONVERTER
    own = {type(c).__name__: c for c in mine}
    ordered: list[Any] = []
    for conv in getattr(real_protocol, "INPUT_CONVERTER", ()):
        conv = own.get(type(conv).__name__) if _from_py4j(type(conv)) else conv
        if conv is not None and conv not in ordered:
            ordered.append(conv)
    mine[:] = ordered + [c for c in mine if c not in ordered]  # in place: clients hold it
    for letter, conv in getattr(real_protocol, "OUTPUT_CONVERTER", {}).items():
        if not _from_py4j(conv):
            protocol.OUTPUT_CONVERTER[letter] = conv


def adopt_py4j(package: str) -> None:
    """From now on ``py4j`` / ``py4j.*`` imports resolve to py4jni's modules (the py4j
    switch's import alias), so the framework's exception handler patches py4jni's
    ``get_return_value`` (the hook every Java error passes through), ``JavaClass(fqn,
    client)`` is py4jni's and ``register_input_converter`` fills py4jni's registry.
    Modules of ``package`` imported before have their py4j names (classes, functions,
    modules) rebound to py4jni's same-named ones, and converters already registered
    with py4j move over."""
    real = {name: mod for name, mod in list(sys.modules.items())
            if (name == "py4j" or name.startswith("py4j.")) and isinstance(mod, ModuleType)
            and _from_py4j(mod)}
    _switch.alias()
    swap: dict[int, Any] = {}
    for name, mod in real.items():
        try:
            mine = importlib.import_module(_switch.counterpart(name))
        except ImportError:  # e.g. py4j.tests: no py4jni counterpart
            continue
        swap[id(mod)] = mine
        for attr, value in list(vars(mod).items()):
            if attr.startswith("__") or not _from_py4j(value):
                continue
            new = getattr(mine, attr, None)
            if new is not None:
                swap.setdefault(id(value), new)
    _carry_converters(real.get("py4j.protocol"))
    for modname, mod in list(sys.modules.items()):
        if not (modname == package or modname.startswith(package + ".")) or mod is None:
            continue
        namespace = getattr(mod, "__dict__", {})
        for name, value in list(namespace.items()):
            new = swap.get(id(value))
            if new is not None:
                namespace[name] = new


class Adapter:
    """One framework's integration. A subclass names the framework's top-level
    ``package`` and its public module (``public``, for messages), and provides
    ``check`` (the framework is importable and has not started a py4j JVM yet) and
    ``patch`` (its launcher becomes the in-process one, which calls ``embed``)."""

    package = ""
    public = ""
    hint = ""  #: how to start the framework and other gateways in one process

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.is_enabled = False
        self.gateway: Any = None

    def check(self) -> None:
        """Raises Py4JError when the framework cannot be enabled now."""
        raise NotImplementedError

    def patch(self) -> None:
        """Replaces the framework's launcher with the in-process one."""
        raise NotImplementedError

    def enable(self) -> None:
        """Makes the framework start its JVM in this process (before its first
        gateway; calling again does nothing). Raises Py4JError when the framework is
        not installed or already runs on a py4j gateway."""
        with self.lock:
            if self.is_enabled:
                return
            if free_threaded():
                raise Py4JError(f"{self.public}: {FREE_THREADED_REASON}")
            self.check()
            adopt_py4j(self.package)
            self.patch()
            self.is_enabled = True

    def embed(self, launch: Launch, gateway_class: Any, **gateway_kwargs: Any) -> Any:
        """Starts (or joins) this process's JVM with ``launch`` and returns the
        gateway ``gateway_class(**gateway_kwargs)`` made on it, in-process."""
        for key, value in launch.environment.items():
            os.environ[key] = value
        options = [*launch.jvm_options, *system_property_options(launch.system_properties)]
        try:
            return gateway_class(classpath=launch.classpath, jvm_options=options,
                                 mode="inproc", **gateway_kwargs)
        except Py4JError as exc:
            if "already running with" in str(exc):
                raise Py4JError(
                    f"{self.public}: this process's JVM was already started by another "
                    f"py4jni gateway with a different classpath or options than "
                    f"{self.package}'s JVM needs; a process holds one JVM. {self.hint}"
                ) from None
            raise
