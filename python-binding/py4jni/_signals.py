"""Ctrl-C into Java calls, and Java's shutdown hooks on SIGTERM/SIGHUP, in-process.

``install()`` runs once, when this process's JVM has started with ``-Xrs``: the C side
(jni/include/jvm_signals.h) puts py4jni's handlers over SIGINT, SIGTERM and SIGHUP where
they apply, and Python's ``signal.signal`` (``_signal.signal``, which ``signal.signal``
calls) is wrapped so that every change of a disposition is seen there: a new Python
handler for SIGINT gets py4jni's in front of it again (it calls Python's, then
interrupts the main thread's Java call), SIG_DFL for SIGINT/SIGTERM/SIGHUP gets Java's
shutdown hooks before the default action, SIG_IGN and a program's own SIGTERM/SIGHUP
handler are left as they are. What ``signal.signal`` and ``signal.getsignal`` return is
Python's own record, unchanged.
"""
from __future__ import annotations

import _thread
import os
import sys
TYPE_CHECKING = False  # typing's constant without importing typing

if TYPE_CHECKING:
    from typing import Any

from . import _py4jni

_installed = False


def _main_thread_ident() -> int:
    """Python's main thread (the one that runs signal handlers), 0 when unknown here."""
    threading = sys.modules.get("threading")
    if threading is not None:
        return threading.main_thread().ident or 0
    # threading not imported (import py4jni does not import it): no Python thread has
    # been started through it, and the process's first thread is Python's main one
    return _thread.get_ident() if _thread.get_native_id() == os.getpid() else 0


def install() -> None:
    """Puts py4jni's signal handlers in place and wraps ``_signal.signal`` (once)."""
    global _installed
    if _installed:
        return
    _installed = True
    _py4jni._signals_install(_main_thread_ident())
    mod: Any = sys.modules.get("_signal") or __import__("_signal")
    original = mod.signal

    def signal(signalnum: Any, handler: Any, /) -> Any:
        old = original(signalnum, handler)  # raises off the main thread, as Python's
        _py4jni._signal_changed(signalnum, _thread.get_ident())
        return old

    signal.__doc__ = original.__doc__
    signal.__qualname__ = "signal"
    signal.__module__ = original.__module__
    signal.__wrapped__ = original  # type: ignore[attr-defined]
    mod.signal = signal
