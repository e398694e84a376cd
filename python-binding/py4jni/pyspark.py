"""``py4jni.pyspark``: PySpark's driver JVM in this process, ``py4jni.pyspark.enable()``.

The public name of the PySpark adapter, py4jni/frameworks/pyspark.py: importing this
module gives that module itself (one module, two names)."""
from __future__ import annotations

import sys

from .frameworks import pyspark as _adapter

sys.modules[__name__] = _adapter
