"""Frameworks that launch their own JVM, embedded in this process instead.

A framework written on py4j starts a JVM of its own (a launcher script or main class
that opens a py4j server) and connects to it by port. For the frameworks in
``ADAPTERS`` an adapter module replaces that launcher: the JVM is embedded here with
what the launcher would have given it, and every driver call is a JNI call. The shared
part (embedding, the import alias, converters, the in-process callback marker) is
py4jni/frameworks/adapter.py; each adapter (py4jni/frameworks/pyspark.py,
py4jni/frameworks/pyflink.py) computes its framework's launch from the framework's own
helpers and has ``enable()`` / ``enabled()``.

Under the py4j switch in in-process mode (``python -m py4jni run``,
``PY4JNI_AS_PY4J=1``; py4jni._switch), ``watch()`` makes importing a framework's
package call its adapter's ``enable()`` once the package is loaded; other imports pay a
dictionary lookup. A program, or a framework with no adapter, that starts a JVM itself
and connects to it by port is served by the switch's launcher rule (py4jni._switch):
socket mode to that JVM, said in one line.
"""
from __future__ import annotations

import importlib
import importlib.abc
import sys
from typing import Any

from .. import _switch

__all__ = ["ADAPTERS", "adapter_module", "watch"]

#: top-level package of a framework -> the module of its adapter
ADAPTERS: dict[str, str] = {
    "pyspark": "py4jni.frameworks.pyspark",
    "pyflink": "py4jni.frameworks.pyflink",
}


def adapter_module(package: str) -> Any:
    """The adapter module for a framework's top-level package, or None."""
    name = ADAPTERS.get(package)
    return importlib.import_module(name) if name else None


class _ThenEnable:
    """Loads a framework's package with its own loader, then calls its adapter's
    ``enable()`` (other loader attributes are the loader's)."""

    def __init__(self, loader: Any, package: str) -> None:
        self._loader = loader
        self._package = package

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        adapter_module(self._package).enable()


class _Finder(importlib.abc.MetaPathFinder):
    """Under the switch in in-process mode, wraps the loader of a framework package
    that has an adapter; None (the import proceeds as usual) otherwise."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in ADAPTERS:
            return None
        switch = _switch.settings()
        if switch is None or switch.mode != "inproc":
            return None
        # deferred: the adapters' common code, for the in-process switch only
        from .adapter import FREE_THREADED_REASON, free_threaded
        if free_threaded():  # said once; the import goes on as without the switch
            if fullname not in _SAID:
                _SAID.add(fullname)
                print(f"py4jni: {fullname} is not run in-process: {FREE_THREADED_REASON}",
                      file=sys.stderr)
            return None
        for other in sys.meta_path:
            find = getattr(other, "find_spec", None)
            if other is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _ThenEnable(spec.loader, fullname)
                return spec
        return None


_WATCHING: list[_Finder] = []
_SAID: set[str] = set()  # frameworks told they are not run in-process


def watch() -> None:
    """From now on, importing a framework of ``ADAPTERS`` under the switch in in-process
    mode enables its adapter (idempotent)."""
    if not _WATCHING:
        _WATCHING.append(_Finder())
        sys.meta_path.insert(0, _WATCHING[0])
