"""Extension points between the gateway core and the layers beside it: a registry.

The gateway calls these; the collections layer (argument conversion, arrays) and the
in-process callback layer fill them in when they are imported, so that neither the
gateway nor this module imports them. Each is the single place the core asks. (Python
proxies, objects whose class has ``Java.implements``, are converted by the C core
before ARG_CONVERTERS are tried: python-binding/src/inproc/py_callbacks.c in-process;
in socket mode python-binding/src/socket/socket_callbacks.c with the client's
``proxy_hook`` from py4jni/socket_mode/callbacks.py.)
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing's constant without importing typing (~5 ms)
if TYPE_CHECKING:
    from typing import Any, Callable

from .protocol import Py4JError

# Converters tried in order for Python arguments the C core does not convert itself.
# Each takes (gateway, obj) and returns a JavaObject, or NotImplemented to pass.
ARG_CONVERTERS: list[Callable[[Any, Any], Any]] = []


class _Unkept:
    """What the converters read of a gateway (``_gateway_client``, ``_auto_convert``),
    for the objects of a gateway nobody keeps (``JavaGateway(...).jvm``): they go on
    converting as their gateway's parameters said, as py4j's client carries them."""

    def __init__(self, client: Any, auto_convert: bool) -> None:
        self._gateway_client = client
        self._auto_convert = auto_convert


def make_converter(gateway: Any) -> Callable[[Any], Any]:
    """The client's converter: tries ARG_CONVERTERS, else raises a clear Py4JError."""
    from _weakref import ref  # weakref.ref, without weakref.py's import (~1 ms)

    # weak: the client holds the converter, and neither may keep the gateway alive
    gw_ref = ref(gateway)
    client_ref = ref(gateway._gateway_client)
    auto_convert = bool(getattr(gateway, "_auto_convert", False))

    def convert(obj: Any) -> Any:
        gw = gw_ref()
        if gw is None:
            client = client_ref()
            gw = _Unkept(client, auto_convert) if client is not None else None
        if gw is not None:
            for conv in ARG_CONVERTERS:
                result = conv(gw, obj)
                if result is not NotImplemented:
                    return result
        if gw is not None and getattr(gw, "_auto_convert", False):
            raise Py4JError(
                f"py4jni: cannot pass a Python {type(obj).__name__} to Java: no input "
                "converter takes it (auto_convert is on: sets, mappings and other "
                "iterables convert; register_input_converter adds others)")
        raise Py4JError(
            f"py4jni: cannot pass a Python {type(obj).__name__} to Java (use a "
            "JavaObject, None, bool, int, float, str, bytes, bytearray or Decimal; "
            "collections need auto_convert=True or a converter)")

    return convert


def new_array(gateway: Any, java_class: Any, *dimensions: int) -> Any:
    """Creates a Java array; provided by the collections layer."""
    raise Py4JError("py4jni: new_array is not available in this build")


#: Called with the gateway by JavaGateway.shutdown and close, before its client closes
#: (the collections layer drops its per-client class cache; the callback layer withdraws
#: the Python entry point it set).
BEFORE_SHUTDOWN: list[Callable[[Any], None]] = []


def before_shutdown(gateway: Any) -> None:
    """Runs BEFORE_SHUTDOWN's steps for ``gateway``, in the order they were added."""
    for step in list(BEFORE_SHUTDOWN):
        step(gateway)
