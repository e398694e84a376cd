"""py4j's ``signals`` module: a small signal/receiver mechanism.

``Signal.connect(receiver, sender=None, unique_id=None)`` registers a callable;
``send(sender, **params)`` calls every receiver registered for that sender (or for any
sender) with ``signal=``, ``sender=`` and the parameters, and returns their answers.
py4jni's gateways send py4j's server signals (``py4jni.java_gateway.server_started``...).
"""
from __future__ import annotations

from _thread import allocate_lock as Lock  # threading's Lock, without importing threading

TYPE_CHECKING = False  # typing's constant without importing typing (~5 ms)
if TYPE_CHECKING:
    from typing import Any, Callable

range = range  # noqa: A001 - py4j's name


class _Bound:
    def method(self) -> None:
        pass


#: types.MethodType, as the types module makes it, without importing types (~0.3 ms of
#: `import py4jni`)
MethodType = type(_Bound().method)


def ismethod(obj: Any) -> bool:
    """True for a bound method (inspect.ismethod, without importing inspect)."""
    return isinstance(obj, MethodType)


def make_id(func: Any) -> Any:
    """An identifier for a receiver or sender: bound methods by (instance, function)."""
    if ismethod(func):
        return (id(func.__self__), id(func.__func__))
    return id(func)


NONE_ID = make_id(None)


class Signal:
    """A named event receivers connect to; ``send`` notifies them synchronously."""

    def __init__(self) -> None:
        self.lock = Lock()
        self.receivers: list[tuple[tuple[Any, Any], Callable[..., Any]]] = []

    def connect(self, receiver: Callable[..., Any], sender: Any = None,
                unique_id: Any = None) -> None:
        """Registers ``receiver`` for signals from ``sender`` (None: any sender);
        registering the same (id, sender) twice keeps one."""
        key = (unique_id if unique_id is not None else make_id(receiver), make_id(sender))
        with self.lock:
            if all(k != key for k, _ in self.receivers):
                self.receivers.append((key, receiver))

    def disconnect(self, receiver: Callable[..., Any], sender: Any = None,
                   unique_id: Any = None) -> bool:
        """Removes a registration; True when one was removed."""
        key = (unique_id if unique_id is not None else make_id(receiver), make_id(sender))
        with self.lock:
            for i, (k, _) in enumerate(self.receivers):
                if k == key:
                    del self.receivers[i]
                    return True
        return False

    def send(self, sender: Any, **params: Any) -> list[tuple[Callable[..., Any], Any]]:
        """Calls the receivers for ``sender`` (and those for any sender); returns
        ``[(receiver, answer), ...]``. A receiver's exception propagates."""
        sender_id = make_id(sender)
        with self.lock:
            targets = [r for (k, r) in self.receivers if k[1] in (NONE_ID, sender_id)]
        return [(r, r(signal=self, sender=sender, **params)) for r in targets]
