"""The in-process transport: the JVM embedded in this process through JNI.

``InprocTransport`` is what an in-process gateway does differently (py4jni/_transports.py
says what a transport is): its client (python-binding/src/ over bridge/inproc/) starts
the JVM, or joins the one this process runs, with the helper jar, the class path and
the JVM options, class-data sharing (py4jni/_cds.py) and the signal set-up
(py4jni/_os_signals.py). Java's calls back into Python are py4jni/inproc_mode/callbacks.py.
"""
from __future__ import annotations

import os

TYPE_CHECKING = False  # typing's constant without importing typing
if TYPE_CHECKING:
    from typing import Any

from .. import _py4jni, _transports
from .._base import helper_jar_path
from .._transports import Transport
from ..protocol import ENTRY_POINT_OBJECT_ID, Py4JError


#: The JDK's own -Xss on x86_64 and aarch64 Linux (ThreadStackSize), and the most py4jni
#: gives Java threads by default.
_JDK_STACK = 1 << 20
_MOST_STACK = 16 << 20


_stack_chosen: list[str] | None = None


def _main_stack_options(jvm_options: list[str], joins_by_default: bool) -> list[str]:
    """``-Xss`` of the main thread's stack limit (RLIMIT_STACK, at most 16 MiB), unless
    the options set a stack size: HotSpot gives the process's main thread, attached
    later, a Java stack of -Xss only, and its Java calls share the interpreter's stack
    (Python -> Java -> Python nesting: ~6 KiB a level, 1,000 levels need ~6 MiB). Java
    threads then get that size too (address space; their memory is what they use).
    Decided at the first start, as the CDS options are: a later gateway gets the same,
    or none when it asks for the default JVM (jni/jvm.c compares the options)."""
    global _stack_chosen
    if _stack_chosen is not None:
        return [] if joins_by_default else list(_stack_chosen)
    _stack_chosen = []
    if not any(o.startswith(("-Xss", "-XX:ThreadStackSize=")) for o in jvm_options):
        soft = _py4jni._stack_limit()  # None: unlimited
        size = _MOST_STACK if soft is None else min(soft, _MOST_STACK)
        if size > _JDK_STACK:
            _stack_chosen = [f"-Xss{size // 1024}k"]
    return list(_stack_chosen)


class InprocTransport(Transport):
    """The JVM embedded in this process through JNI."""

    mode = "inproc"

    def connect(self, gateway: Any, classpath: Any, jvm_options: Any, libjvm: Any,
                check_jni: bool, keep_signals: bool, cds: bool | str = True) -> Any:
        from .. import _cds  # deferred: ~1 ms of `import py4jni`, needed once a JVM starts
        if isinstance(classpath, (list, tuple)):
            classpath = os.pathsep.join(classpath)
        classpath = classpath or os.environ.get("CLASSPATH") or None
        if isinstance(classpath, str) and "\0" in classpath:
            raise ValueError("classpath: embedded null character")
        if isinstance(jvm_options, (str, bytes)):  # would be taken a character at a time
            raise TypeError("jvm_options must be a list of str (e.g. ['-Xmx1g']), not "
                            f"{type(jvm_options).__name__} ({jvm_options!r})")
        jvm_options = list(jvm_options)
        for i, option in enumerate(jvm_options):
            if not isinstance(option, str):
                raise TypeError(f"jvm_options[{i}] must be a str (a JVM option such as "
                                f"'-Xmx1g'), not {type(option).__name__} ({option!r})")
            if "\0" in option:  # C would read the option up to it
                raise ValueError(f"jvm_options[{i}]: embedded null character ({option!r})")
        jar = helper_jar_path()
        default = not jvm_options and not check_jni and not keep_signals
        jvm_options += _main_stack_options(jvm_options, default)
        jvm_options[:0] = _cds.options_for_start(jar, libjvm, jvm_options, cds, default,
                                                 classpath)
        client = _py4jni.inproc_client(jar, classpath, jvm_options, libjvm, check_jni,
                                       keep_signals)
        from .. import _os_signals  # deferred: as _cds, needed once a JVM starts
        if not keep_signals:  # -Xrs: SIGINT, SIGTERM and SIGHUP are Python's and ours
            _os_signals.install()
        _os_signals.chain_faults()  # HotSpot's SIGSEGV & co. stay first, chained
        return client

    def attach(self, gateway: Any) -> None:
        # Callback settings and the Python entry point; without either there is nothing
        # to set (its callbacks module costs ~0.4 ms to import at every JavaGateway()).
        params = gateway.callback_server_parameters
        if getattr(params, "propagate_java_exceptions", False) or \
                gateway.python_server_entry_point is not None:
            from . import callbacks  # deferred: see the comment above
            callbacks.attach(gateway)

    def attach_after(self, gateway: Any, start_callback_server: bool,
                     explicit_params: bool) -> None:
        if start_callback_server:
            gateway.start_callback_server(gateway.callback_server_parameters)

    def is_instance_of(self, gateway: Any, java_object: Any, java_class: Any) -> bool:
        return gateway.jvm.org.py4jni.Bridge.isInstanceOf(java_object, java_class)

    def object_from_id(self, target_id: str, client: Any) -> Any:
        ref = getattr(client, "_entry_point", None)
        entry = ref() if ref is not None else None
        if target_id == ENTRY_POINT_OBJECT_ID and entry is not None:
            return entry
        raise Py4JError(f"py4jni: no Java object {target_id!r} can be named in-process "
                        "(keep the JavaObject itself)")


#: The in-process transport (one for every in-process client).
INPROC = InprocTransport()
_transports.TRANSPORTS["inproc"] = INPROC
