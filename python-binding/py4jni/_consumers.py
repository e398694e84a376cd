"""py4j's ``OutputConsumer`` and ``ProcessConsumer`` threads (``py4jni.java_gateway``
exports them; this module is imported on first use, with threading)."""
from __future__ import annotations

from collections import deque
from queue import Queue
from typing import Any, Callable

from .compat import CompatThread
from ._base import quiet_close
from .protocol import smart_decode


class OutputConsumer(CompatThread):
    """A thread copying the lines of ``stream`` (bytes) to ``redirect``: a Queue
    (``put``), a deque (``appendleft``) or anything with ``write``."""

    def __init__(self, redirect: Any, stream: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.redirect = redirect
        self.stream = stream
        self.redirect_func: Callable[[Any], Any]
        if isinstance(redirect, Queue):
            self.redirect_func = redirect.put
        elif isinstance(redirect, deque):
            self.redirect_func = redirect.appendleft
        else:
            self.redirect_func = redirect.write

    def run(self) -> None:
        for line in iter(self.stream.readline, b""):
            self.redirect_func(smart_decode(line))


class ProcessConsumer(CompatThread):
    """A thread that waits for ``proc`` to end, then closes its output streams and the
    closables given."""

    def __init__(self, proc: Any, closable_list: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.proc = proc
        self.closable_list = list(closable_list or [])

    def run(self) -> None:
        self.proc.wait()
        for closable in [self.proc.stdout, self.proc.stderr, *self.closable_list]:
            quiet_close(closable)
