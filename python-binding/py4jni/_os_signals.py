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


_faults_chained = False

#: The signals HotSpot uses for itself (jni/jsig.c): its handlers stay installed and
#: chain to the program's.
_FAULT_SIGNALS = ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE")


def chain_faults() -> None:
    """Keeps HotSpot's SIGSEGV/SIGBUS/SIGILL/SIGFPE handlers first when the program
    changes those signals' handlers after the JVM started (once, in every mode):
    ``faulthandler.enable``/``disable`` and ``signal.signal`` are wrapped, and after
    each the handler the program installed becomes the one HotSpot chains to (as the
    JDK's libjsig arranges), so pytest's faulthandler plugin putting the default
    handlers back at the end of a run no longer leaves the JVM without its own."""
    global _faults_chained
    if _faults_chained or not _py4jni._jsig_active():
        return
    _faults_chained = True
    # _signal, not signal (which imports enum): signal.signal calls _signal.signal
    mod: Any = sys.modules.get("_signal") or __import__("_signal")
    faults = [getattr(mod, name) for name in _FAULT_SIGNALS if hasattr(mod, name)]
    adopt = _py4jni._jsig_adopt
    for sig in faults:  # what was installed since the JVM started (before this call)
        adopt(sig, 0)
    original_signal = mod.signal

    def signal(signalnum: Any, handler: Any, /) -> Any:
        old = original_signal(signalnum, handler)
        adopt(int(signalnum), 0)
        return old

    _like(signal, original_signal, "signal")
    mod.signal = signal

    import faulthandler
    original_enable, original_disable = faulthandler.enable, faulthandler.disable

    def enable(*args: Any, **kwargs: Any) -> Any:
        for sig in faults:
            adopt(sig, 1)
        try:
            return original_enable(*args, **kwargs)
        finally:
            for sig in faults:
                adopt(sig, 0)

    def disable() -> Any:
        try:
            return original_disable()
        finally:
            for sig in faults:
                adopt(sig, 2)

    _like(enable, original_enable, "enable")
    _like(disable, original_disable, "disable")
    faulthandler.enable = enable
    faulthandler.disable = disable


def _like(wrapper: Any, original: Any, name: str) -> None:
    """Gives ``wrapper`` the name, documentation and module of ``original``."""
    wrapper.__doc__ = original.__doc__
    wrapper.__qualname__ = name
    wrapper.__name__ = name
    wrapper.__module__ = original.__module__
    wrapper.__wrapped__ = original

