"""ARR-1M-recv-view in instructions, py4jni against JPype: a numpy view of a Java direct
ByteBuffer of 1,000,000 doubles, as perf/scenarios.py makes it for each backend.

    valgrind --tool=callgrind --dump-before=getppid --callgrind-out-file=out/cg.%p \\
        python arr_view_callgrind.py py4jni|jpype

os.getppid() brackets each segment, so dumps 2, 6 and 10 hold 2,000 views each and
dumps 4, 8 and 12 the same loop doing nothing (the loop's own turn)."""
import os
import sys

import numpy as np

N = 1_000_000
backend = sys.argv[1]
if backend == "jpype":
    import jpype
    jpype.startJVM("-Xbatch")
    JC = jpype.JClass
    bb = JC("java.nio.ByteBuffer").allocateDirect(8 * N).order(
        JC("java.nio.ByteOrder").nativeOrder())
    view = memoryview
else:
    import py4jni
    jvm = py4jni.JavaGateway().jvm
    bb = jvm.java.nio.ByteBuffer.allocateDirect(8 * N).order(jvm.java.nio.ByteOrder.nativeOrder())
    view = py4jni.as_memoryview
frombuffer, f8 = np.frombuffer, np.float64


def run(k: int) -> None:
    for _ in range(k):
        frombuffer(view(bb), dtype=f8)


def pad(k: int) -> None:
    for _ in range(k):
        pass


run(20000)  # warm: the JIT and every cache settled before the segments
for _ in range(3):
    for fn in (run, pad):
        os.getppid()
        fn(2000)
        os.getppid()
