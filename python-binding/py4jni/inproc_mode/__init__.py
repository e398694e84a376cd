"""In-process mode's Python: the JVM embedded in this process through JNI.

- ``transport``: the in-process transport and the client it opens (the JVM's start);
- ``callbacks``: Java calling Python in-process: proxies, the Python entry point,
  natives.

The C side of the same transport is python-binding/src/inproc/ and bridge/inproc/.
"""
