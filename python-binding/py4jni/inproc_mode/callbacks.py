"""Java calls Python, in-process: py4j's callbacks without a callback server.

*Proxies.* A Python object whose class has ``class Java: implements = ["fqn", ...]``,
passed to Java, arrives as a ``java.lang.reflect.Proxy`` implementing those interfaces.
Java's calls enter Python through one JNI upcall (no socket, no server thread): the
Python method of the same name runs with the arguments converted as results are, on
the Java thread that called (holding the GIL for the call), and its result converts to
the method's Java return type. The same Python object passed again is the same Java
object while Java holds it; when Java drops it, a Cleaner releases the Python object.
Java handing a proxy back to Python returns the Python object itself (as py4j does).

A Python exception raised by a proxy method reaches Java as ``org.py4jni.Py4JException``
whose message is py4j's: ``"An exception was raised by the Python Proxy. Return
Message: "`` followed by the traceback text. With
``CallbackServerParameters(propagate_java_exceptions=True)`` a ``Py4JJavaError`` raised
in the callback rethrows the original Java exception instead.

``toString``/``hashCode``/``equals`` call Python methods of those names when the class
defines them; otherwise ``toString`` is ``str(obj)`` and ``hashCode``/``equals`` are
identity-based. A default method of the interface that Python does not define runs its
Java body.

*Threads and nesting.* A callback runs on the Java thread that calls it: Python
threads released the GIL while Java ran and take it back; Java's own threads get a
Python thread state on their first callback, kept until the thread exits. Callbacks
nest (Python -> Java -> Python ...): HotSpot gives the thread that created the JVM a
stack of ``-Xss`` (1 MiB by default), room for about 140 levels; a callback that would
start with too little stack left throws ``java.lang.StackOverflowError`` instead of
crashing (``jvm_options=["-Xss16m"]`` allows thousands of levels). After the gateway
that made a proxy is shut down, or once the interpreter is exiting, calling the proxy
throws ``org.py4jni.Py4JException`` in Java.

*Python entry point.* ``JavaGateway(python_server_entry_point=obj)``: Java obtains it
with ``org.py4jni.PythonEntryPoint.get(new Class[]{...})`` (py4j's
``gatewayServer.getPythonServerEntryPoint``).

*Natives.* ``gateway.register_natives("a.B", {"name": fn, ...})`` implements the
``native`` methods of a Java class with Python callables (see ``register_natives``).
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing's constant without importing typing
if TYPE_CHECKING:
    import weakref
    from typing import Any, Callable, Mapping

from .. import _hooks, _py4jni
from .._py4jni import JavaClass
from ..protocol import Py4JError, Py4JJavaError, _callback_error_text

__all__ = ["register_natives", "set_python_entry_point", "attach", "detach"]

# Clients whose callbacks rethrow a Py4JJavaError's Java exception (py4j's
# CallbackServerParameters.propagate_java_exceptions); made when a gateway first asks
# for it (weakref costs ~1 ms to import, at every JavaGateway()).
_PROPAGATE: "weakref.WeakKeyDictionary[Any, bool] | None" = None


def _error_payload(client: Any, exc: BaseException) -> Any:
    """What Java throws for ``exc`` raised in a callback (called by the C layer): the
    traceback text (py4j's format), or the Java exception itself when propagating."""
    if isinstance(exc, Py4JJavaError) and _PROPAGATE and _PROPAGATE.get(client):
        return exc.java_exception
    return _callback_error_text(exc)


def attach(gateway: Any) -> None:
    """Applies the gateway's callback settings (called when an in-process gateway is
    created): propagate_java_exceptions and the Python entry point."""
    client = gateway._gateway_client
    if not client.caps & _py4jni.CAP_CALLBACKS:
        return
    global _PROPAGATE
    params = getattr(gateway, "callback_server_parameters", None)
    if getattr(params, "propagate_java_exceptions", False):
        if _PROPAGATE is None:
            import weakref
            _PROPAGATE = weakref.WeakKeyDictionary()
        _PROPAGATE[client] = True
    entry = getattr(gateway, "python_server_entry_point", None)
    if entry is not None:
        set_python_entry_point(gateway, entry)


def detach(gateway: Any) -> None:
    """Before shutdown: the Python entry point set by this gateway is withdrawn (Java's
    PythonEntryPoint.get then throws); proxies already in Java throw when called."""
    client = gateway._gateway_client
    if isinstance(client, _py4jni.Client) and client.caps & _py4jni.CAP_CALLBACKS and \
            not client.closed:
        _py4jni.set_python_entry_point(client, None)


_hooks.BEFORE_SHUTDOWN.append(detach)


def set_python_entry_point(gateway: Any, obj: Any) -> None:
    """Makes ``obj`` the Python entry point Java obtains with
    ``org.py4jni.PythonEntryPoint.get(Class[] interfaces)`` (one Java call)."""
    _py4jni.set_python_entry_point(gateway._gateway_client, obj)


def _param_count(signature: str) -> int:
    """Number of parameters in a JNI method descriptor."""
    n, i = 0, 1
    while signature[i] != ")":
        while signature[i] == "[":
            i += 1
        i = signature.index(";", i) + 1 if signature[i] == "L" else i + 1
        n += 1
    return n


def _check_arity(fn: Callable[..., Any], nargs: int, what: str) -> None:
    import inspect  # only for register_natives (costs ms at the first gateway)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # some builtins have none: Python checks at call time
        return
    try:
        sig.bind(*range(nargs))
    except TypeError as exc:
        raise Py4JError(f"py4jni: {fn!r} cannot implement {what}: it must accept {nargs} "
                        f"positional argument{'s' if nargs != 1 else ''} ({exc})") from None


def register_natives(gateway: Any, class_name: Any,
                     mapping: Mapping[str, Callable[..., Any]]) -> None:
    """Implements ``native`` methods of a Java class with Python callables.

    ``mapping`` maps a method name (or ``"name(JNI signature)"`` for an overloaded
    name, e.g. ``"encode([B)[B"``) to a callable. Static natives receive the Java
    arguments; instance natives receive the receiver (a JavaObject) first. Arguments
    convert as Java results do (primitives to bool/int/float/str, String to str,
    byte[] to bytes, other objects to JavaObject or collection wrappers); the result
    converts to the declared return type (None for a primitive, an int out of range or
    a wrong type throw Py4JException in Java).

    Each method is bound through a libffi closure built for its exact JNI signature and
    RegisterNatives: a Java call costs one native transition plus taking the GIL, with
    no boxing, reflection or Proxy. Registration makes a few Java calls; unknown names,
    ambiguous overloads and callables of the wrong arity raise Py4JError here. The
    class must be loadable; bindings last for the process (registering again replaces
    them).
    """
    client = gateway._gateway_client
    if not client.caps & _py4jni.CAP_NATIVES:
        raise Py4JError("py4jni: register_natives needs the in-process gateway")
    if isinstance(class_name, JavaClass):
        cls, name = class_name, class_name._fqn
    else:
        cls, name = client.resolve(None, class_name), class_name
        if cls is None:
            raise Py4JError(f"py4jni: register_natives: class {class_name} not found")
    natives = _py4jni.natives_describe(client, cls)
    known = ", ".join(f"{n}{s}" for n, s, _ in natives)
    entries = []
    for key, fn in mapping.items():
        mname, paren, rest = key.partition("(")
        sig = paren + rest if paren else None
        found = [t for t in natives if t[0] == mname and (sig is None or t[1] == sig)]
        if not found:
            raise Py4JError(f"py4jni: {name} declares no native method {key!r} "
                            f"(its native methods: {known})")
        if len(found) > 1:
            options = ", ".join(repr(f"{n}{s}") for n, s, _ in found)
            raise Py4JError(f"py4jni: native method {name}.{mname} is overloaded: name "
                            f"one with its signature ({options})")
        mname, sig, is_static = found[0]
        if not callable(fn):
            raise TypeError(f"py4jni: the implementation of {name}.{mname} must be callable, "
                            f"not {type(fn).__name__}")
        nargs = _param_count(sig) + (0 if is_static else 1)
        _check_arity(fn, nargs, f"{'static ' if is_static else ''}native {name}.{mname}{sig}"
                     + ("" if is_static else " (the receiver comes first)"))
        entries.append((mname, sig, fn))
    _py4jni.natives_bind(client, cls, entries)
