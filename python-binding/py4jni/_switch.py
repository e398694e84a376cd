"""py4j -> py4jni: the switch that runs a program written for py4j on py4jni.

``python -m py4jni run [--inproc|--socket] [--classpath CP] [--entry-point CLASS]
script.py args...`` (see ``py4jni.__main__``), or ``PY4JNI_AS_PY4J=1`` in the
environment of any Python program (read by the ``py4jni-as-py4j.pth`` hook installed
with the package), makes every ``import py4j`` / ``py4j.<module>`` resolve to the
same-named py4jni module. ``PY4JNI_MODE`` (``inproc``, the default, or ``socket``)
decides what the program's ``JavaGateway()`` / ``ClientServer()`` becomes: in-process,
the embedded JVM with ``PY4JNI_CLASSPATH`` and the entry point class
``PY4JNI_ENTRY_POINT`` (its parameters' ports are then not used); in socket mode,
py4j's own behaviour (a GatewayServer must be listening). In in-process mode, importing
``pyspark`` calls ``py4jni.pyspark.enable()`` once the package is loaded (Spark's
driver JVM is then embedded; see py4jni.pyspark); other imports pay one string
comparison. In socket mode PySpark keeps its launcher (spark-submit), and the
``ClientServer`` it makes is py4jni's pinned-thread socket client.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys
from typing import Any, NamedTuple, Sequence

ENV_SWITCH = "PY4JNI_AS_PY4J"
_ACTIVE = False  # the switch: the alias, gateway settings, pyspark hook
_ALIASED = False  # the import alias alone (py4jni.pyspark.enable() sets it too)


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


class _ThenEnablePySpark:
    """Loads the ``pyspark`` package with its own loader, then calls
    ``py4jni.pyspark.enable()`` (other loader attributes are the loader's)."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        from .pyspark import enable
        enable()


def _pyspark_spec(finder: Any, path: Any, target: Any) -> Any:
    """The spec the other finders give ``pyspark``, its loader wrapped so that the
    switch in in-process mode enables py4jni.pyspark; None (the import proceeds as
    usual) otherwise."""
    switch = settings()
    if switch is None or switch.mode != "inproc":
        return None
    for other in sys.meta_path:
        find = getattr(other, "find_spec", None)
        if other is finder or find is None:
            continue
        spec = find("pyspark", path, target)
        if spec is not None:
            if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = _ThenEnablePySpark(spec.loader)
            return spec
    return None


class _Finder(importlib.abc.MetaPathFinder):
    """Answers ``py4j`` and ``py4j.*`` imports with py4jni's modules (before any
    installed py4j); under the switch, hooks ``pyspark``'s import."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "py4j" and not fullname.startswith("py4j."):
            return _pyspark_spec(self, path, target) if fullname == "pyspark" else None
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
    """Installs the switch in this process (idempotent): the import alias, the
    settings gateways read, and the pyspark hook."""
    global _ACTIVE
    if _ACTIVE:
        return
    _ACTIVE = True
    alias()


def install_from_env() -> None:
    """Called by the .pth hook at interpreter start when PY4JNI_AS_PY4J=1."""
    try:
        install()
    except Exception as exc:  # noqa: BLE001 - never break interpreter start-up
        print(f"py4jni: PY4JNI_AS_PY4J=1 but the switch failed: {exc}", file=sys.stderr)


def run(argv: Sequence[str]) -> int:
    """``python -m py4jni run``: parses the options, sets the environment (children
    inherit it) and runs the script as ``__main__`` with the switch installed."""
    import argparse
    import runpy
    parser = argparse.ArgumentParser(
        prog="python -m py4jni run",
        description="Run a program written for py4j on py4jni (py4j imports resolve to "
                    "py4jni).")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--inproc", dest="mode", action="store_const", const="inproc",
                      help="embed the JVM in this process (default)")
    mode.add_argument("--socket", dest="mode", action="store_const", const="socket",
                      help="talk to a py4j GatewayServer, as py4j does")
    parser.add_argument("--classpath", help="classpath of the embedded JVM")
    parser.add_argument("--entry-point", help="class whose no-argument instance is the "
                        "gateway's entry_point (in-process)")
    parser.add_argument("script", help="the Python program")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the program's arguments")
    opts = parser.parse_args(argv)
    os.environ[ENV_SWITCH] = "1"
    os.environ["PY4JNI_MODE"] = opts.mode or os.environ.get("PY4JNI_MODE") or "inproc"
    if opts.classpath:
        os.environ["PY4JNI_CLASSPATH"] = opts.classpath
    if opts.entry_point:
        os.environ["PY4JNI_ENTRY_POINT"] = opts.entry_point
    install()
    sys.argv = [opts.script, *opts.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(opts.script)))
    runpy.run_path(opts.script, run_name="__main__")
    return 0
