"""Names the scenario code of perf/scenarios.py may use besides the bridge itself.

Everything here runs inside a worker process, next to one bridge. Nothing here imports a
bridge at module level: the JPype classes are made on demand, once the JVM is up.
"""
import os
import random
import threading
import time

# X4 sorts these 100 keys in this fixed order, so every backend sorts the same sequence
# and makes the same number of compareTo calls.
ORDER100 = random.Random(557).sample(range(100), 100)


def payload(n):
    """n bytes of a fixed pattern (the same pattern perf/floor.c sends). The pattern
    repeats every 256 bytes, so large payloads (64 MiB, 256 MiB) are made by repetition."""
    unit = bytes((i * 31 + 7) & 0xFF for i in range(256))
    return (unit * (n // 256 + 1))[:n]


def word_checksum(data):
    """Buffers.sumDirect / sumBytes of the Java fixtures (X9), computed in numpy: the
    wrapping sum of the big-endian 8-byte words of data, plus its trailing bytes."""
    import numpy as np
    words = len(data) // 8
    total = int(np.frombuffer(data, dtype=">i8", count=words).sum(dtype=np.int64))
    total += sum(bytes(data[8 * words:]))
    return (total + 2**63) % 2**64 - 2**63


def text(n):
    """An ASCII str of n characters (so n bytes in UTF-8 and in modified UTF-8)."""
    unit = "py4jni latency curve 0123456789 "
    return (unit * (n // len(unit) + 1))[:n]


def java_string_hash(s):
    """String.hashCode() of s as Java computes it (UTF-16 code units, 32-bit wrap)."""
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def need_numpy():
    """numpy (ARR), or NotApplicable when it is not installed."""
    try:
        import numpy
    except ImportError as e:
        from scenarios import NotApplicable
        raise NotApplicable(f"numpy not installed ({e})") from e
    return numpy


def double_array_hash(a):
    """java.util.Arrays.hashCode(double[]) of a float64 numpy array, as Java computes it
    (doubleToLongBits, no NaNs expected; 32-bit wrap): checks a whole 1 M-element array
    with one Java call."""
    import numpy as np
    n = len(a)
    bits = np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)
    elem = ((bits ^ (bits >> np.uint64(32))) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    factors = np.full(n, 31, dtype=np.uint32)
    if n:
        factors[0] = 1
    powers = np.cumprod(factors, dtype=np.uint32)  # 31**i mod 2**32
    h = int((elem * powers[::-1]).sum(dtype=np.uint64)) if n else 0
    h = (h + (int(powers[-1]) * 31 if n else 1)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def percentile(sorted_values, q):
    """Nearest-rank percentile of an already sorted list (q in 0..100)."""
    if not sorted_values:
        return float("nan")
    rank = max(1, -(-len(sorted_values) * q // 100))
    return sorted_values[int(rank) - 1]


class ThreadTeam:
    """n persistent daemon threads; run() has each call body(i) once, concurrently, and
    returns their results in index order. Threads are made once, so a timed batch does not
    pay for thread creation (nor, for embedded JVMs, for attaching a new thread)."""

    def __init__(self, n, body):
        self.n = n
        self._body = body
        self._go = [threading.Semaphore(0) for _ in range(n)]
        self._done = threading.Semaphore(0)
        self._results = [None] * n
        self._errors = []
        self._stop = False
        self._threads = [threading.Thread(target=self._loop, args=(i,), daemon=True,
                                          name=f"perf-team-{i}") for i in range(n)]
        for t in self._threads:
            t.start()

    def _loop(self, i):
        while True:
            self._go[i].acquire()
            if self._stop:
                return
            try:
                self._results[i] = self._body(i)
            except BaseException as e:  # reported by run() in the calling thread
                self._errors.append(e)
            self._done.release()

    def run(self):
        for go in self._go:
            go.release()
        for _ in range(self.n):
            self._done.acquire()
        if self._errors:
            raise self._errors[0]
        return self._results

    def close(self):
        self._stop = True
        for go in self._go:
            go.release()


class CallTeam(ThreadTeam):
    """X1: `total` calls of f() spread evenly over n threads per run()."""

    def __init__(self, n, total, f):
        shares = [total // n + (1 if i < total % n else 0) for i in range(n)]

        def body(i):
            for _ in range(shares[i]):
                f()

        super().__init__(n, body)


class LatencyTeam(ThreadTeam):
    """X6: n threads x k calls of f() per run(), each call timed on its own; stats()
    returns the percentiles of every latency since the previous stats() call."""

    def __init__(self, n, k, f):
        self._samples = []
        clock = time.perf_counter_ns

        def body(i):
            lat = [0] * k
            for j in range(k):
                t0 = clock()
                f()
                lat[j] = clock() - t0
            return lat

        super().__init__(n, body)

    def run(self):
        for lat in super().run():
            self._samples.extend(lat)

    def stats(self):
        s = sorted(self._samples)
        self._samples = []
        return {"p50_ns": percentile(s, 50), "p99_ns": percentile(s, 99),
                "max_ns": s[-1] if s else float("nan"), "samples": len(s)}


def py4j_comparables():
    """X4 for bridges with py4j's API: (Cmp, CountingCmp), Python classes that Java sees as
    java.lang.Comparable. Java hands `other` back either as the Python object itself or,
    as py4j does, as a JavaObject for the proxy; then its key is read with
    other.hashCode(), which the proxy forwards to Python (one more call and callback).
    CountingCmp.calls counts every callback (compareTo and hashCode)."""

    class Cmp:
        def __init__(self, key):
            self.key = key

        def compareTo(self, other):
            k = self.key
            o = other.key if isinstance(other, Cmp) else other.hashCode()
            return -1 if k < o else (1 if k > o else 0)

        def hashCode(self):
            return self.key

        class Java:
            implements = ["java.lang.Comparable"]

    class CountingCmp(Cmp):
        calls = 0

        def compareTo(self, other):
            CountingCmp.calls += 1
            return Cmp.compareTo(self, other)

        def hashCode(self):
            CountingCmp.calls += 1
            return self.key

        class Java:
            implements = ["java.lang.Comparable"]

    return Cmp, CountingCmp


def jpype_comparables():
    """X4 for JPype: (Cmp, CountingCmp) declared with @JImplements("java.lang.Comparable").
    JPype hands `other` back as the Python object. Needs the JVM to be running."""
    from jpype import JImplements, JOverride

    @JImplements("java.lang.Comparable")
    class Cmp:
        def __init__(self, key):
            self.key = key

        @JOverride
        def compareTo(self, other):
            k = self.key
            o = other.key
            return -1 if k < o else (1 if k > o else 0)

    @JImplements("java.lang.Comparable")
    class CountingCmp:
        calls = 0

        def __init__(self, key):
            self.key = key

        @JOverride
        def compareTo(self, other):
            CountingCmp.calls += 1
            k = self.key
            o = other.key
            return -1 if k < o else (1 if k > o else 0)

    return Cmp, CountingCmp


def rss_bytes():
    """Resident set size of this process (Linux /proc)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
