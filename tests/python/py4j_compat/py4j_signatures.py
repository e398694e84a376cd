"""py4j's public callables against py4jni's same-named ones, by ``inspect.signature``:
every public module-level function, every class (its constructor) and every public
method a py4j class defines or inherits from py4j's own classes, in each py4j module.

``differences()`` compares the py4j that this interpreter imports (the main venv's
0.10.9.9, PyFlink's venv's 0.10.9.7) with the py4jni on its path and returns what
differs; run as a script it prints ``{"version": ..., "differences": ...}`` as JSON
(tests/python/py4j_compat/test_py4j_surface.py runs it with PyFlink's interpreter). A parameter is
its name, kind (positional, keyword-only, ``*args``, ``**kwargs``) and default (its
repr); an instance method's first parameter (``self``) is left out.
"""
from __future__ import annotations

import importlib
import inspect
import json
import types
from typing import Any

MODULES = ["java_gateway", "protocol", "java_collections", "clientserver", "finalizer",
           "signals", "compat", "version"]

Parameter = tuple[str, str, str | None]  # name, kind, repr of the default (None: none)


def _from_py4j(obj: Any) -> bool:
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "py4j"


def public_callables(module: types.ModuleType) -> dict[str, tuple[Any, bool]]:
    """``{"Name" or "Class.method": (callable, is_instance_method)}`` of a py4j module:
    its public functions and classes defined in py4j, and their public methods (those
    of the class and of its py4j bases; properties and attributes left out)."""
    found: dict[str, tuple[Any, bool]] = {}
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, types.ModuleType) or \
                not callable(value) or not _from_py4j(value):
            continue
        found[name] = (value, False)
        if not isinstance(value, type):
            continue
        for base in value.__mro__:
            if not _from_py4j(base):
                continue
            for member, raw in vars(base).items():
                if member.startswith("_") or f"{name}.{member}" in found:
                    continue
                if isinstance(raw, (staticmethod, classmethod)):
                    found[f"{name}.{member}"] = (getattr(value, member), False)
                elif isinstance(raw, types.FunctionType):
                    found[f"{name}.{member}"] = (getattr(value, member), True)
    return found


def parameters(fn: Any, drop_self: bool) -> list[Parameter] | None:
    """The parameters of ``fn`` (None when it has no signature, as a C function
    without a text signature)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if drop_self and params:
        params = params[1:]
    return [(p.name, p.kind.name, None if p.default is p.empty else repr(p.default))
            for p in params]


def show(params: list[Parameter] | None) -> str:
    """A parameter list as a signature's text, e.g. ``(a, b=1, *, c=None)``."""
    if params is None:
        return "(no signature)"
    parts, star = [], False
    for name, kind, default in params:
        if kind == "KEYWORD_ONLY" and not star:
            parts.append("*")
            star = True
        prefix = {"VAR_POSITIONAL": "*", "VAR_KEYWORD": "**"}.get(kind, "")
        star = star or kind == "VAR_POSITIONAL"
        parts.append(prefix + name + ("" if default is None else "=" + default))
        if kind == "POSITIONAL_ONLY" and (len(parts) == len(params) or
                                          params[len(parts)][1] != "POSITIONAL_ONLY"):
            parts.append("/")
    return "(" + ", ".join(parts) + ")"


def lookup(module: types.ModuleType, qualname: str) -> Any:
    """``module.A.b`` for ``"A.b"``, or None when a part is missing."""
    obj: Any = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def differences() -> dict[str, dict[str, Any]]:
    """``{"module.qualname": {"py4j": [...], "py4jni": [...] or None}}`` for every py4j
    callable whose py4jni counterpart has other parameters, or is missing (None)."""
    found: dict[str, dict[str, Any]] = {}
    for name in MODULES:
        theirs = importlib.import_module("py4j." + name)
        try:
            ours = importlib.import_module("py4jni." + name)
        except ImportError:
            found[name] = {"py4j": [], "py4jni": None}
            continue
        for qualname, (fn, method) in sorted(public_callables(theirs).items()):
            expected = parameters(fn, method)
            counterpart = lookup(ours, qualname)
            got = None if counterpart is None else parameters(counterpart, method)
            if counterpart is None or got != expected:
                found[f"{name}.{qualname}"] = {"py4j": expected, "py4jni": got,
                                               "missing": counterpart is None}
    return found


def main() -> None:
    """Prints the py4j version and the differences as JSON (for another interpreter)."""
    import py4j.version
    print(json.dumps({"version": py4j.version.__version__, "differences": differences()}))


if __name__ == "__main__":
    main()
