"""py4j's ``finalizer`` module: callbacks run when a weakly referenced object dies.

py4j keeps the weak references it uses to release Java objects here. py4jni releases
Java objects from C when their Python wrapper dies, so its own objects do not use this
module; it is kept, with py4j's behaviour, for code that registers its own finalizers.
"""
from __future__ import absolute_import, annotations, unicode_literals

from _thread import RLock  # threading.RLock is this C lock; importing threading costs ms

TYPE_CHECKING = False  # typing's constant without importing typing (~5 ms)
if TYPE_CHECKING:
    from typing import Any

from .compat import items  # noqa: F401 - py4j exports it


def _clear(finalizers: dict[Any, Any], clear_all: bool) -> None:
    """Drops the weak references whose referent died (all with ``clear_all``)."""
    if clear_all:
        finalizers.clear()
        return
    for key, ref in list(finalizers.items()):
        if ref() is None:
            del finalizers[key]


class ThreadSafeFinalizer:
    """Finalizers kept under a lock: ``add_finalizer(id, weak_ref)`` keeps the weak
    reference (whose callback does the work) alive until ``remove_finalizer(id)``."""

    finalizers: dict[Any, Any] = {}
    lock = RLock()

    @classmethod
    def add_finalizer(cls, id: Any, weak_ref: Any) -> None:  # noqa: A002 - py4j's name
        """Keeps ``weak_ref`` under ``id``."""
        with cls.lock:
            cls.finalizers[id] = weak_ref

    @classmethod
    def remove_finalizer(cls, id: Any) -> None:  # noqa: A002
        """Forgets the weak reference under ``id`` (called by its callback)."""
        with cls.lock:
            cls.finalizers.pop(id, None)

    @classmethod
    def clear_finalizers(cls, clear_all: bool = False) -> None:
        """Forgets finalizers whose referent died (all of them with ``clear_all``)."""
        with cls.lock:
            _clear(cls.finalizers, clear_all)


class Finalizer:
    """Like ThreadSafeFinalizer without a lock (py4j's single-threaded variant)."""

    finalizers: dict[Any, Any] = {}

    @classmethod
    def add_finalizer(cls, id: Any, weak_ref: Any) -> None:  # noqa: A002
        """Keeps ``weak_ref`` under ``id``."""
        cls.finalizers[id] = weak_ref

    @classmethod
    def remove_finalizer(cls, id: Any) -> None:  # noqa: A002
        """Forgets the weak reference under ``id``."""
        cls.finalizers.pop(id, None)

    @classmethod
    def clear_finalizers(cls, clear_all: bool = False) -> None:
        """Forgets finalizers whose referent died (all of them with ``clear_all``)."""
        _clear(cls.finalizers, clear_all)


def clear_finalizers(clear_all: bool = False) -> None:
    """Clears both finalizer tables (see ThreadSafeFinalizer.clear_finalizers)."""
    ThreadSafeFinalizer.clear_finalizers(clear_all)
    Finalizer.clear_finalizers(clear_all)
