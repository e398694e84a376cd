"""A plain Python loop calling a C method of a thread-own object, 1 and 2 threads on a
free-threaded CPython: the interpreter's own ceiling for report.md. Each thread looks at the
shared stop flag every 256 calls (every 8 gave 1.17-1.37x at 2 threads here).

    python control_loop.py
"""
import threading, time, random, statistics
def measure(make, threads, seconds=0.4):
    counts=[0]*threads; start=threading.Barrier(threads+1); stop=threading.Event()
    def run(i):
        op=make(); n=0
        for _ in range(3): op()
        start.wait()
        while not stop.is_set():
            for _ in range(256): op()
            n+=256
        counts[i]=n
    ts=[threading.Thread(target=run,args=(i,)) for i in range(threads)]
    for t in ts: t.start()
    start.wait(); t0=time.perf_counter(); time.sleep(seconds); stop.set()
    for t in ts: t.join()
    return sum(counts)/(time.perf_counter()-t0)
for name, make in [("random", lambda: random.Random(1).random), ("listlen", lambda: [1,2].__len__), ("pyfunc", lambda: (lambda: 1))]:
    r={1:[],2:[]}
    for _ in range(7):
        for k in (1,2): r[k].append(measure(make,k))
    one=statistics.median(r[1]); print(name, f"{one:,.0f}/s", f"2t {statistics.median(r[2])/one:.2f}x [{min(r[2])/one:.2f}-{max(r[2])/one:.2f}]")
