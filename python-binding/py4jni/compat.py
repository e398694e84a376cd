"""py4j's ``compat`` module: its Python 2/3 helpers, for Python 3 only.

py4j code imports these names (``from py4j.compat import long, basestring``); under
py4jni they keep py4j's Python 3 meaning.
"""
from __future__ import absolute_import, annotations, unicode_literals

from sys import version_info  # noqa: F401

TYPE_CHECKING = False  # typing's constant without importing typing (~5 ms)
if TYPE_CHECKING:
    from threading import Thread
    from typing import Any, Iterator

    class CompatThread(Thread):
        """What type checkers see of CompatThread (made on first use, below)."""

range = range  # noqa: A001 - py4j's name
long = int
basestring = str
unicode = str
bytearray2 = bytearray
unichr = chr
bytestr = bytes


def items(d: dict[Any, Any]) -> Any:
    """The items of a mapping (a view)."""
    return d.items()


def iteritems(d: dict[Any, Any]) -> Iterator[Any]:
    """An iterator over the items of a mapping."""
    return iter(d.items())


def next(x: Iterator[Any]) -> Any:  # noqa: A001 - py4j's name
    """The next item of an iterator (``x.__next__()``)."""
    return x.__next__()


def tobytestr(s: str) -> bytes:
    """``s`` as ASCII bytes."""
    return bytes(s, "ascii")


def isbytestr(s: Any) -> bool:
    """True for ``bytes``."""
    return isinstance(s, bytes)


def ispython3bytestr(s: Any) -> bool:
    """True for ``bytes`` (py4j sends them as a byte array)."""
    return isinstance(s, bytes)


def isbytearray(s: Any) -> bool:
    """True for ``bytearray``."""
    return isinstance(s, bytearray)


def bytetoint(b: int) -> int:
    """A byte of a ``bytes`` object is already an int in Python 3."""
    return b


def bytetostr(b: bytes) -> str:
    """ASCII bytes as a str."""
    return str(b, encoding="ascii")


def strtobyte(s: str) -> bytes:
    """A str as ASCII bytes."""
    return bytes(s, encoding="ascii")


def hasattr2(obj: Any, attr: str) -> bool:
    """``hasattr`` (py4j's Python 2 workaround, not needed in Python 3)."""
    return hasattr(obj, attr)


def _compat_thread() -> type:
    """Defines ``CompatThread`` (a threading.Thread subclass) on first use."""
    from threading import Thread

    class CompatThread(Thread):
        """A Thread whose constructor takes py4j's arguments (``daemon`` keyword)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)

    CompatThread.__module__ = __name__
    return CompatThread


def __getattr__(name: str) -> Any:
    """py4j's re-exported ``Thread``, ``Queue``, ``Empty`` and ``CompatThread``, made
    on first use: threading and queue cost milliseconds at ``import py4jni``."""
    if name == "Thread":
        from threading import Thread
        return Thread
    if name in ("Queue", "Empty"):
        import queue
        return getattr(queue, name)
    if name == "CompatThread":
        cls = globals()["CompatThread"] = _compat_thread()
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
