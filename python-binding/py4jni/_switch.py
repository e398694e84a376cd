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
import os
import sys
from typing import Any, NamedTuple

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


class _Finder(importlib.abc.MetaPathFinder):
    """Answers ``py4j`` and ``py4j.*`` imports with py4jni's modules (before any
    installed py4j)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "py4j" and not fullname.startswith("py4j."):
            return None
        real = "py4jni" + fullname[len("py4j"):]
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


def _listening(address: str, port: int) -> bool:
    """True when something accepts a TCP connection on (address, port) within 0.5 s."""
    import socket
    try:
        with socket.create_connection((address, port), timeout=0.5):
            return True
    except OSError:
        return False


def mode_for(parameters: Any) -> str | None:
    """The switch's mode for a gateway the program constructs with ``parameters``
    (GatewayParameters / JavaParameters, or None), or None when the switch is off.

    The launcher rule: in in-process mode, a gateway given the port of a py4j server
    that is listening (a JVM the program, or a framework without an adapter, started
    itself) connects to it in socket mode, and one line on stderr says so; otherwise the
    gateway is the embedded JVM. Launches the switch understands are taken over before
    a gateway is made: py4j's ``launch_gateway`` (its command line is py4j's own) and
    the frameworks of py4jni.frameworks."""
    switch = settings()
    if switch is None:
        return None
    if switch.mode != "inproc" or parameters is None:
        return switch.mode
    address = getattr(parameters, "address", None) or "127.0.0.1"
    port = getattr(parameters, "port", None)
    if not isinstance(port, int) or port <= 0 or not _listening(address, port):
        return switch.mode
    print(f"py4jni: a py4j server this program started listens on {address}:{port}; "
          "connecting to it in socket mode instead of embedding a second JVM",
          file=sys.stderr, flush=True)
    return "socket"
