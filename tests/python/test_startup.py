"""Start-up cost: what ``import py4jni`` loads, and the class-data-sharing (AppCDS)
archive the first JVM start creates and later starts map (py4jni/_cds.py)."""
from __future__ import annotations

import subprocess
import sys

# Modules that cost milliseconds to import and that neither `import py4jni` nor the
# first call needs (each is imported where it is used).
HEAVY = ["typing", "threading", "re", "collections", "decimal", "logging", "subprocess",
         "socket", "queue", "glob", "weakref", "enum", "functools", "pydoc",
         "py4jni.java_collections", "py4jni.callbacks", "py4jni.socket_callbacks"]


def _loaded_by(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code`` that it did not
    hold before."""
    script = ("import sys; before = set(sys.modules)\n" + code +
              "\nprint(' '.join(sorted(set(sys.modules) - before)))")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return set(r.stdout.split())


def test_import_py4jni_leaves_heavy_modules_unloaded() -> None:
    loaded = _loaded_by("import py4jni")
    assert "py4jni.java_gateway" in loaded  # the check sees what the import loads
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_lazy_names_still_resolve() -> None:
    """py4j's names that are now made on first use are the same objects as before."""
    loaded = _loaded_by(
        "import collections, queue, threading\n"
        "import py4jni\n"
        "from py4jni import JavaList, ListConverter\n"
        "from py4jni.java_gateway import (deque, RLock, Thread, Queue, CompatThread,\n"
        "                                 OutputConsumer, ProcessConsumer)\n"
        "from py4jni.compat import Empty\n"
        "from py4jni import compat, java_collections, _py4jni\n"
        "assert deque is collections.deque and Queue is queue.Queue\n"
        "assert RLock is threading.RLock and Thread is threading.Thread\n"
        "assert Empty is queue.Empty and issubclass(CompatThread, Thread)\n"
        "assert compat.CompatThread is CompatThread\n"
        "assert issubclass(OutputConsumer, CompatThread)\n"
        "assert JavaList is java_collections.JavaList is py4jni.JavaList\n"
        "assert issubclass(JavaList, _py4jni.JavaObject)\n")
    assert "py4jni.java_collections" in loaded
