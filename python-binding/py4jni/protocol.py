"""py4j's error classes (module name kept so ``from py4jni.protocol import ...`` works)."""
from __future__ import annotations

from typing import Any


class Py4JError(Exception):
    """A py4jni failure: no such method/field/class, bad argument, gateway shut down."""

    def __init__(self, args: Any = None, cause: BaseException | None = None) -> None:
        super().__init__(args) if args is not None else super().__init__()
        self.cause = cause


class Py4JNetworkError(Py4JError):
    """Socket mode: the connection to the GatewayServer failed or was lost."""


class Py4JAuthenticationError(Py4JError):
    """Socket mode: the GatewayServer refused the auth token."""


class Py4JJavaError(Py4JError):
    """A Java exception thrown by a call; ``java_exception`` is the Throwable (a JavaObject).

    ``str()`` ends with the Java stack trace, fetched on first use (one Java call).
    """

    def __init__(self, msg: str, java_exception: Any) -> None:
        super().__init__(msg, java_exception)
        self.errmsg = msg
        self.java_exception = java_exception
        self._trace: str | None = None

    def _stack_trace(self) -> str:
        if self._trace is None:
            client = self.java_exception._gateway_client
            try:
                self._trace = client.stack_trace(self.java_exception)
            except Py4JError as exc:  # e.g. the gateway was shut down since
                self._trace = f"<stack trace unavailable: {exc}>"
        return self._trace

    def __str__(self) -> str:
        return f"{self.errmsg}: {self._stack_trace()}"
