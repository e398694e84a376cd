"""py4j's ``version`` module: ``__version__`` is the py4j release whose Python API this
py4jni implements (py4j programs compare it; py4jni's own version is
``py4jni.__version__``)."""
from __future__ import annotations

__version__ = "0.10.9.9"
