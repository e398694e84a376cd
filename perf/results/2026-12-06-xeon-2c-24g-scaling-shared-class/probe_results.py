"""Which result kinds scale over two free-threaded Python threads (the probe of report.md).

Each thread calls its own object's method in a loop for 0.5 s; 5 rounds of 1 and 2
threads; prints one thread's throughput, two threads' over it, and the process's cores
(CPU time / wall time) at 2 threads.

    python probe_results.py      # on a free-threaded CPython with py4jni installed
"""
import threading, time, sys
from py4jni import JavaGateway
gw = JavaGateway()
def op_for(kind):
    j = gw.jvm.java
    if kind == "bytes16k":
        bb = j.nio.ByteBuffer.allocate(16384); return lambda: bb.array()
    if kind == "bytes16":
        bb = j.nio.ByteBuffer.allocate(16); return lambda: bb.array()
    if kind == "str16":
        sb = j.lang.StringBuilder("0123456789abcdef"); return lambda: sb.toString()
    if kind == "obj":
        sb = j.lang.StringBuilder("x"); return lambda: sb.reverse().reverse()
    if kind == "newobj":
        O = j.lang.Object; return lambda: O()
    if kind == "int":
        bb = j.nio.ByteBuffer.allocate(16); return lambda: bb.capacity()
def run(kind, n, secs=0.5):
    ops = [op_for(kind) for _ in range(n)]
    counts = [0] * n; stop = False
    def work(i):
        f = ops[i]; c = 0
        while not stop:
            for _ in range(200): f()
            c += 200
        counts[i] = c
    ts = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    t0 = time.perf_counter(); c0 = time.process_time()
    for t in ts: t.start()
    time.sleep(secs); stop = True
    for t in ts: t.join()
    wall = time.perf_counter() - t0; cpu = time.process_time() - c0
    return sum(counts) / wall, cpu / wall
for kind in ("int", "str16", "bytes16", "bytes16k", "newobj"):
    r = {}
    for rnd in range(5):
        for n in (1, 2):
            r.setdefault(n, []).append(run(kind, n))
    import statistics as st
    one = st.median(x[0] for x in r[1]); two = st.median(x[0] for x in r[2])
    cores = st.median(x[1] for x in r[2])
    print(f"{kind:9s} 1t {one:,.0f}/s  2t {two/one:.2f}x  ({cores:.2f} cores at 2t)")
