"""The top-level package ``py4j`` under the py4j switch (py4jni/_switch.py): as py4j's
own package it holds ``version`` and ``__version__`` (py4j's release, from
py4jni.version); its submodules are py4jni's (the switch's finder answers
``py4j.<module>`` imports), and any other name is read from py4jni."""
from __future__ import annotations

import py4jni

from . import version

__version__ = version.__version__
__path__ = list(py4jni.__path__)  # where `py4j.<module>` is found when the finder declines


def __getattr__(name: str) -> object:
    """Names of py4jni's package (e.g. its submodules, once imported)."""
    return getattr(py4jni, name)
