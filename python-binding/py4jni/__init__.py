"""py4jni: py4j's Python API with the JVM embedded in this process.

``from py4jni import JavaGateway; gw = JavaGateway()`` starts (or joins) the process's
JVM; ``gw.jvm.java.lang.System.currentTimeMillis()`` is then one JNI call.
"""
from __future__ import annotations

from . import _py4jni, java_gateway as _java_gateway, protocol as _protocol
from ._py4jni import JavaClass, JavaMember, JavaObject
from .java_gateway import (CallbackServerParameters, GatewayParameters, as_memoryview,
                           JavaGateway, JavaPackage, JVMView,
                           get_field, get_java_class, get_method, helper_jar_path,
                           is_instance_of, java_import, remove_imports, set_field)
from .protocol import (Py4JAuthenticationError, Py4JError, Py4JJavaError,
                       Py4JNetworkError)

__version__ = "0.1.0"

TYPE_CHECKING = False  # typing's constant without importing typing
if TYPE_CHECKING:  # type checkers see the names __getattr__ below makes on first use
    from . import java_collections
    from .launcher import find_jar_path, launch_gateway
    from .java_collections import (JavaArray, JavaIterator, JavaList, JavaMap, JavaSet,
                                   ListConverter, MapConverter, SetConverter,
                                   to_java_array)

# The collection wrappers (JavaList, ...) register themselves when py4jni.java_collections
# is imported: by JavaGateway() before its first client, or by these names' first use.
_py4jni._register(Py4JError, Py4JJavaError, Py4JNetworkError, Py4JAuthenticationError,
                  gateway_module=_java_gateway, protocol_module=_protocol,
                  object_from_id=_java_gateway._object_from_id)

_COLLECTION_NAMES = frozenset(("JavaList", "JavaSet", "JavaMap", "JavaArray", "JavaIterator",
                               "ListConverter", "SetConverter", "MapConverter",
                               "to_java_array"))


def __getattr__(name: str) -> object:
    """The collection names, from py4jni.java_collections (imported on first use: its
    classes cost ~3 ms at ``import py4jni``), and py4jni.launcher's two (~0.2 ms)."""
    if name in ("launch_gateway", "find_jar_path"):
        return getattr(_java_gateway, name)
    if name in _COLLECTION_NAMES or name == "java_collections":
        import sys  # `from . import java_collections` would recurse into here
        __import__(__name__ + ".java_collections")
        java_collections = sys.modules[__name__ + ".java_collections"]
        return java_collections if name == "java_collections" else getattr(java_collections, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "JavaGateway", "GatewayParameters", "CallbackServerParameters", "JVMView",
    "JavaPackage", "JavaClass", "JavaObject", "JavaMember", "java_import",
    "remove_imports", "get_field", "set_field", "get_method", "is_instance_of",
    "get_java_class", "helper_jar_path", "Py4JError", "Py4JJavaError",
    "Py4JNetworkError", "Py4JAuthenticationError", "launch_gateway", "find_jar_path",
    "JavaList", "JavaSet", "JavaMap", "JavaArray", "JavaIterator", "ListConverter",
    "SetConverter", "MapConverter", "to_java_array", "as_memoryview",
]
