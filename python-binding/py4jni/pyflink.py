"""``py4jni.pyflink``: PyFlink's JVM in this process, ``py4jni.pyflink.enable()``.

The public name of the PyFlink adapter, py4jni/frameworks/pyflink.py: importing this
module gives that module itself (one module, two names)."""
from __future__ import annotations

import sys

from .frameworks import pyflink as _adapter

sys.modules[__name__] = _adapter
