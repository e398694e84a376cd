#!/usr/bin/env python3
"""PySpark start-up and data paths in phases: stock PySpark (spark-submit + py4j) against
PySpark on py4jni in-process, on the JDK of ``--java-home``.

    python perf/spark_phases.py [--java-home DIR] [--reps N] [--rows N,...] [--out DIR]
                                [--backends stock,py4jni,...] [--label TEXT]

Every repetition is a fresh process per backend (one Spark JVM at a time, under
``nice``). The child times, on its own clock from the parent's spawn: python start,
``import pyspark``, the gateway (stock: spark-submit's scripts, the launcher JVM, the
driver JVM up to its GatewayServer; in-process: ``JNI_CreateJavaVM`` and py4jni's
start), the JavaSparkContext, the SparkSession, the first job. The driver runs with
``-Xlog:startuptime,class+load`` to a file: HotSpot's "Create VM" time, and how many
classes were loaded and from where (the JDK's CDS archive, a py4jni archive, the jrt
image, jars).

Data paths (``--rows``): collect(), toPandas() without and with Arrow,
createDataFrame(pandas) with Arrow, sc.parallelize and broadcast, each split into the
Java call (plan and job), the socket or temp file (bytes, time blocked reading the
socket, time writing the temp file) and Python (deserialisation, pandas).

Backends: ``stock``, ``py4jni`` (in-process: the class-path archive, spark-submit's
environment), ``py4jni-before`` (in-process as before both: py4jni's own archive only),
``py4jni-nocds`` (``PY4JNI_CDS=0``), ``py4jni:OPTIONS`` (``py4jni`` with these JVM options
too, space-separated, e.g. ``py4jni:-XX:TieredStopAtLevel=1``). Results: phases-<jdk>.json in --out; ``--report FILES`` writes
phases.md and phases.png from them. Before the measured runs each py4jni backend runs
once in a fresh cache directory and the archive it leaves is waited for: that first use
is reported apart.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------- child side

class _CountingFile:
    """A socket file whose reads are counted (bytes) and timed (seconds blocked)."""

    def __init__(self, inner, stats):
        self._inner, self._stats = inner, stats

    def read(self, *a):
        t = time.perf_counter()
        data = self._inner.read(*a)
        self._stats["socket_read_s"] += time.perf_counter() - t
        self._stats["bytes"] += len(data) if data else 0
        return data

    def readinto(self, buf):
        t = time.perf_counter()
        n = self._inner.readinto(buf)
        self._stats["socket_read_s"] += time.perf_counter() - t
        self._stats["bytes"] += n or 0
        return n

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _instrument(stats):
    """Counts what crosses PySpark's loopback sockets and temp files into ``stats``."""
    import pyspark.util as pu
    from pyspark.core import context as pcx
    real_connect = pu.local_connect_and_auth

    def connect(conn_info, auth_secret):
        f, s = real_connect(conn_info, auth_secret)
        return _CountingFile(f, stats), s

    pu.local_connect_and_auth = connect
    real_ser = pcx.SparkContext._serialize_to_jvm

    def serialize_to_jvm(self, data, serializer, reader_func, server_func):
        def reader(path):
            stats["file_write_s"] += time.perf_counter() - t0  # python serialise + write
            stats["bytes"] += os.path.getsize(path)
            t = time.perf_counter()
            try:
                return reader_func(path)
            finally:
                stats["jvm_read_s"] += time.perf_counter() - t
        t0 = time.perf_counter()
        return real_ser(self, data, serializer, reader, server_func)

    pcx.SparkContext._serialize_to_jvm = serialize_to_jvm


def _cpu(spark) -> float:
    """CPU seconds used so far by the driver: this process (all threads: in-process,
    the JVM's too) plus, stock, the driver JVM's process."""
    cpu = time.process_time()
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    if proc is not None:
        with open(f"/proc/{proc.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        cpu += sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return cpu


def _loopback_mb_s(nbytes: int) -> float:
    """MB/s of ``nbytes`` through a loopback TCP connection, read in 64 KiB chunks as
    PySpark's socket files do (the hop alone: no producer, no consumer work)."""
    import socket
    import threading
    srv = socket.create_server(("127.0.0.1", 0))
    payload = b"x" * (1 << 20)

    def send():
        c, _ = srv.accept()
        left = nbytes
        while left > 0:
            c.sendall(payload[:min(left, len(payload))])
            left -= len(payload)
        c.close()
    th = threading.Thread(target=send)
    th.start()
    s = socket.create_connection(srv.getsockname())
    f = s.makefile("rb", 65536)
    t = time.perf_counter()
    got = 0
    while chunk := f.read(65536):
        got += len(chunk)
    dt = time.perf_counter() - t
    th.join()
    s.close()
    srv.close()
    return got / dt / 1e6


def _data_paths(spark, rows: int, reps: int) -> dict:
    """Each data path ``reps`` times (after one unmeasured run at 1/10 the size), split
    in phases; every figure is the minimum over the repetitions (wall and CPU)."""
    import pickle

    import pandas as pd

    from pyspark.serializers import BatchedSerializer, CPickleSerializer
    sc = spark.sparkContext
    stats: dict = {}
    counters = {"socket_read_s": 0.0, "bytes": 0, "file_write_s": 0.0, "jvm_read_s": 0.0}
    _instrument(counters)

    def measured(name, fn):
        runs = []
        for _ in range(reps):
            for k in counters:
                counters[k] = 0 if k == "bytes" else 0.0
            c = _cpu(spark)
            t = time.perf_counter()
            extra = fn() or {}
            total = time.perf_counter() - t
            runs.append({"total_s": total, "cpu_s": _cpu(spark) - c, **counters, **extra})
        stats[name] = {k: min(r[k] for r in runs) for k in runs[0]}
        stats[name]["runs_total_s"] = [r["total_s"] for r in runs]

    df = spark.range(rows).selectExpr("id", "id * 2 AS x")
    pdf = pd.DataFrame({"id": range(rows), "x": range(0, 2 * rows, 2)})
    values = list(range(rows))
    small = spark.range(max(rows // 10, 1)).selectExpr("id", "id * 2 AS x")
    small.collect()
    spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
    small.toPandas()
    spark.createDataFrame(pdf.head(max(rows // 10, 1))).count()

    def collect():
        from pyspark.util import _load_from_socket
        t = time.perf_counter()
        info = df._jdf.collectToPython()  # plan and job: rows held in the driver
        jvm = time.perf_counter() - t
        t = time.perf_counter()
        with _load_from_socket(info, BatchedSerializer(CPickleSerializer())) as stream:
            got = list(stream)  # Java pickles and sends while Python unpickles
        read = time.perf_counter() - t
        assert len(got) == rows
        return {"jvm_call_s": jvm, "read_and_deserialise_s": read}

    def to_pandas(arrow):
        def run():
            spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", str(arrow).lower())
            out = df.toPandas()
            assert len(out) == rows
        return run

    def arrow_phases():
        import pyarrow as pa
        spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
        t = time.perf_counter()
        batches = df._collect_as_arrow()  # job, Arrow conversion in Java, socket, batches
        collect_s = time.perf_counter() - t
        t = time.perf_counter()
        out = pa.Table.from_batches(batches).to_pandas()
        assert len(out) == rows
        return {"collect_as_arrow_s": collect_s, "arrow_to_pandas_s": time.perf_counter() - t}

    def create_df():
        spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
        t = time.perf_counter()
        d = spark.createDataFrame(pdf)  # pandas -> Arrow, temp file, JVM reads it
        made = time.perf_counter() - t
        t = time.perf_counter()
        assert d.count() == rows
        return {"create_s": made, "count_s": time.perf_counter() - t}

    def parallelize():
        t = time.perf_counter()
        r = sc.parallelize(values, 2)  # pickled batches to a temp file, JVM reads it
        made = time.perf_counter() - t
        t = time.perf_counter()
        assert r.count() == rows
        return {"create_s": made, "count_s": time.perf_counter() - t}

    def broadcast():
        t = time.perf_counter()
        b = sc.broadcast(values)  # pickled to a temp file the JVM reads
        made = time.perf_counter() - t
        assert sc.parallelize([0, 1], 2).map(lambda i: len(b.value)).collect() == [rows, rows]
        b.unpersist()
        return {"create_s": made}

    measured("collect", collect)
    measured("toPandas", to_pandas(False))
    measured("toPandas-arrow", to_pandas(True))
    measured("toPandas-arrow-phases", arrow_phases)
    measured("createDataFrame-arrow", create_df)
    measured("parallelize", parallelize)
    measured("broadcast", broadcast)
    # the pieces alone: Python unpickling collect()'s bytes from memory, pickling the
    # broadcast value and writing it to a temp file, the loopback hop for collect's bytes
    import io
    import tempfile
    from pyspark.util import _create_local_socket
    f, s = _create_local_socket(df._jdf.collectToPython())
    raw = f._inner.read()
    f.close()
    s.close()
    t = time.perf_counter()
    n = sum(1 for _ in BatchedSerializer(CPickleSerializer()).load_stream(io.BytesIO(raw)))
    stats["collect-deserialise-in-memory"] = {"total_s": time.perf_counter() - t, "rows": n,
                                              "bytes": len(raw)}
    t = time.perf_counter()
    with tempfile.NamedTemporaryFile(dir=sc._temp_dir) as fh:
        pickle.dump(values, fh, 5)
        fh.flush()
        stats["broadcast-pickle-and-write"] = {"total_s": time.perf_counter() - t,
                                               "bytes": fh.tell()}
    stats["loopback"] = {"mb_s": _loopback_mb_s(len(raw))}
    return stats


def _arrow_small(spark, reps: int) -> dict:
    """toPandas() with Arrow of 100k rows x 2 (the report's S7), ``reps`` times: wall and
    CPU of each (the 0.7x of an earlier report)."""
    df = spark.range(100000).selectExpr("id", "id * 2 AS x")
    spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
    df.toPandas()
    walls, cpus = [], []
    for _ in range(reps):
        c = _cpu(spark)
        t = time.perf_counter()
        df.toPandas()
        walls.append(time.perf_counter() - t)
        cpus.append(_cpu(spark) - c)
    return {"wall_s": walls, "cpu_s": cpus}


# HotSpot's thread names (their first 15 characters, /proc's comm) by kind of work
THREAD_KINDS = (("jit", ("C1 CompilerThre", "C2 CompilerThre")),
                ("gc", ("G1 ", "GC Thread", "VM Periodic")), ("vm", ("VM Thread",)))


def _cpu_by_thread(pid: int) -> dict:
    """CPU seconds of the live threads of the driver JVM's process ``pid`` by kind:
    the JIT compilers, the garbage collector, the VM thread (safepoints, class
    redefinition...); the rest of the driver's CPU is Java's and Python's own work."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {kind: 0.0 for kind, _ in THREAD_KINDS}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as fh:
                text = fh.read()
        except OSError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        cpu = sum(int(x) for x in text.rsplit(")", 1)[1].split()[11:13]) / tick
        for kind, prefixes in THREAD_KINDS:
            if name.startswith(prefixes):
                out[kind] += cpu
    return out


def _class_log(path: str) -> dict:
    """Counts of the class+load log by source, and HotSpot's Create VM time."""
    counts: dict = {}
    create_vm = None
    first_app = None
    n = 0
    try:
        fh = open(path, errors="replace")
    except OSError:
        return {}
    with fh:
        for line in fh:
            if "[startuptime]" in line and "Create VM" in line:
                create_vm = float(line.rsplit(",", 1)[1].split()[0])
            if "[class,load" not in line or " source: " not in line:
                continue
            n += 1
            src = line.split(" source: ", 1)[1].strip()
            if src.startswith("shared objects file"):
                kind = "CDS " + src[len("shared objects file"):].strip(" ()")
                kind = kind.strip()
            elif src.startswith("jrt:/"):
                kind = "jrt (JDK image, parsed)"
            elif src.startswith(("file:", "jar:")):
                kind = "jar or directory (parsed)"
            else:  # named by the class defining it: lambdas, proxies, hidden classes
                kind = "generated at run time"
            counts[kind] = counts.get(kind, 0) + 1
            if first_app is None and (" org.apache.spark." in line):
                first_app = float(line[1:line.index("s]")])
    return {"classes": n, "by_source": counts, "create_vm_s": create_vm,
            "first_spark_class_uptime_s": first_app}


def child(mode: str, t_spawn: float, log: str, rows: list[int]) -> None:
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    ph = {"python_start_s": time.time() - t_spawn}
    t = time.time()
    if mode == "py4jni-before":  # as before the class-path archive and spark_env
        from py4jni import _cds
        from py4jni.frameworks import spark_env
        _cds._classpath_options = lambda jar, libjvm, cp, opts: _cds._archive_options(jar, libjvm)
        spark_env.for_jvm_start = lambda home: (lambda: None)
    if mode.startswith("py4jni"):
        import py4jni.pyspark
        py4jni.pyspark.enable()
    import pyspark  # noqa: F401
    from pyspark.core.context import SparkContext
    from pyspark.sql import SparkSession
    ph["imports_s"] = time.time() - t
    marks: dict = {}
    real_init = SparkContext._ensure_initialized.__func__
    real_ctx = SparkContext._initialize_context

    def ensure(cls, *a, **k):
        t0 = time.time()
        try:
            return real_init(cls, *a, **k)
        finally:
            if "gateway_s" not in marks:
                marks["gateway_s"] = time.time() - t0
                marks["gateway_end"] = time.time()

    def init_ctx(self, jconf):
        t0 = time.time()
        try:
            return real_ctx(self, jconf)
        finally:
            marks["java_spark_context_s"] = time.time() - t0

    SparkContext._ensure_initialized = classmethod(ensure)
    SparkContext._initialize_context = init_ctx
    t = time.time()
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.extraJavaOptions",
                     f"-Xlog:startuptime,class+load=info:file={log} "
                     + mode.partition(":")[2])
             .getOrCreate())
    session_total = time.time() - t
    ph["gateway_s"] = marks["gateway_s"]
    jvm_start_ms = spark.sparkContext._jvm.java.lang.management.ManagementFactory \
        .getRuntimeMXBean().getStartTime()
    # stock: spark-submit's scripts and the launcher JVM ran before the driver JVM's start
    ph["before_driver_jvm_s"] = max(jvm_start_ms / 1000.0 - t, 0.0)
    ph["java_spark_context_s"] = marks["java_spark_context_s"]
    ph["session_rest_s"] = session_total - ph["gateway_s"] - ph["java_spark_context_s"]
    t = time.time()
    spark.range(1).count()
    ph["first_job_s"] = time.time() - t
    ph["cold_total_s"] = time.time() - t_spawn
    # CPU seconds to the first job, load-independent: this process (all its threads,
    # the JVM's included in-process) plus, stock, the driver JVM process (with its
    # waited-for children: the launcher JVM)
    ph["cpu_s"] = time.process_time()
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    if proc is not None:
        with open(f"/proc/{proc.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        ph["cpu_s"] += sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    jvm_pid = proc.pid if proc is not None else os.getpid()
    ph.update({f"cpu_{k}_s": v for k, v in _cpu_by_thread(jvm_pid).items()})
    res = {"phases": ph, "classes": _class_log(log), "data": {}}
    for n in rows:
        res["data"][str(n)] = _data_paths(spark, n, 3 if n <= 1000000 else 1)
    if rows:
        res["data"]["arrow-100k"] = _arrow_small(spark, 15)
    out.write(json.dumps(res) + "\n")
    spark.stop()


# ---------------------------------------------------------------- parent side

def run_child(mode: str, java_home: str, log: str, rows: list[int], cache: str) -> dict:
    env = dict(os.environ, JAVA_HOME=java_home, PYSPARK_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1", XDG_CACHE_HOME=cache)
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    if mode == "py4jni-nocds":
        env["PY4JNI_CDS"] = "0"
    if os.path.exists(log):
        os.unlink(log)
    args = ["nice", "-n", "10", sys.executable, os.path.abspath(__file__), "--child", mode,
            "--t-spawn", repr(time.time()), "--log", log,
            "--rows", ",".join(map(str, rows)) or "0"]
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=1800)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        raise RuntimeError(f"{mode} failed (rc={r.returncode}): {r.stderr[-3000:]}")
    return json.loads(lines[-1])


PHASES = [("python_start_s", "python start"), ("imports_s", "import pyspark"),
          ("gateway_s", "gateway (JVM start)"), ("java_spark_context_s", "JavaSparkContext"),
          ("session_rest_s", "SparkSession"), ("first_job_s", "first job")]
DATA = ["collect", "toPandas", "toPandas-arrow", "createDataFrame-arrow", "parallelize",
        "broadcast"]


def _med(xs):
    import statistics
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


def report(files: list[str], out_dir: str, note: str) -> str:
    """phases.md (and phases.png) from phases-*.json files: one section per JDK."""
    lines = [f"# PySpark start-up and data paths in phases ({note})", ""]
    charts = []
    for path in files:
        with open(path) as fh:
            d = json.load(fh)
        jdk = os.path.basename(d["java_home"].rstrip("/"))
        runs = d["runs"]
        backends = [b for b in ("stock", "py4jni-before", "py4jni") if b in runs] + sorted(
            b for b in runs if b not in ("stock", "py4jni-before", "py4jni"))
        n = {b: len(runs[b]) for b in backends}
        title = f"{jdk} ({d['label']})" if d.get("label") else jdk
        lines += [f"## {title}", "",
                  "COLD-session, fresh process to the first job answered: median of "
                  + ", ".join(f"{n[b]} {b}" for b in backends) + " runs (wall seconds; "
                  "CPU: all the driver's processes, load-independent).", "",
                  "| phase | " + " | ".join(backends) + " |", "|---|" + "---|" * len(backends)]
        for key, label in PHASES + [("cold_total_s", "**total (wall)**"),
                                    ("cpu_s", "**CPU seconds**"),
                                    ("cpu_jit_s", "of the CPU: JIT compiler threads"),
                                    ("cpu_gc_s", "of the CPU: GC threads"),
                                    ("cpu_vm_s", "of the CPU: VM thread"),
                                    ("before_driver_jvm_s", "of the gateway: before the "
                                     "driver JVM (scripts, launcher JVM)")]:
            cells = [f"{_med([r['phases'].get(key) for r in runs[b]]):.2f}" for b in backends]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        for key, label in (("classes", "classes loaded"), ("create_vm_s", "HotSpot Create VM (s)")):
            cells = [f"{_med([r['classes'].get(key) for r in runs[b]]):.3g}" for b in backends]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        sources = sorted({k for b in backends for r in runs[b] for k in r["classes"].get(
            "by_source", {})})
        for src in sources:
            cells = [f"{_med([r['classes']['by_source'].get(src, 0) for r in runs[b]]):.0f}"
                     for b in backends]
            lines.append(f"| classes from {src} | " + " | ".join(cells) + " |")
        lines.append("")
        if "stock" in runs:
            for b in backends[1:]:
                w = _med([r["phases"]["cold_total_s"] for r in runs[b]]) / _med(
                    [r["phases"]["cold_total_s"] for r in runs["stock"]])
                c = _med([r["phases"].get("cpu_s") for r in runs[b]]) / _med(
                    [r["phases"].get("cpu_s") for r in runs["stock"]])
                lines.append(f"- {b} / stock: wall {w:.2f}x, CPU {c:.2f}x")
            lines.append("")
        for b, prep in d.get("prepare", {}).items():
            lines.append(f"- first use, {b}: the recording session took "
                         f"{prep['first_session']['cold_total_s']:.1f} s wall / "
                         f"{prep['first_session'].get('cpu_s', float('nan')):.1f} s CPU to "
                         f"its first job; the archive was ready "
                         f"{prep['archive_ready_after_exit_s']:.0f} s after it exited "
                         f"(background dump under nice): {', '.join(prep['archives'])}")
        lines.append("")
        data = {b: runs[b][0].get("data", {}) for b in ("stock", "py4jni") if b in runs}
        sizes = sorted({k for v in data.values() for k in v if k.isdigit()}, key=int)
        for size in sizes:
            lines += [f"### Data paths, {int(size):,} rows x 2 longs ({jdk})", "",
                      "Minimum of 3 runs. hop: the bytes through loopback TCP at the rate a "
                      "bare loopback connection moved them in the same process; its share "
                      "is of the stock total.", "",
                      "| path | stock | py4jni | stock / py4jni | CPU stock / py4jni | bytes "
                      "| blocked reading the socket (py4jni) | temp file write (py4jni) "
                      "| hop alone | hop share |", "|---" * 10 + "|"]
            for name in DATA:
                st, me = data["stock"][size].get(name), data["py4jni"][size].get(name)
                if not st or not me:
                    continue
                mbs = data["py4jni"][size].get("loopback", {}).get("mb_s") or float("nan")
                via_socket = name in ("collect", "toPandas", "toPandas-arrow")
                nbytes = me["bytes"] if name != "broadcast" else data["py4jni"][size].get(
                    "broadcast-pickle-and-write", {}).get("bytes", 0)
                hop = nbytes / 1e6 / mbs if via_socket else me.get("file_write_s", 0.0)
                lines.append(
                    f"| {name} | {st['total_s']:.3f} | {me['total_s']:.3f} | "
                    f"{st['total_s'] / me['total_s']:.2f}x | "
                    f"{st.get('cpu_s', float('nan')) / me.get('cpu_s', float('nan')):.2f}x | "
                    f"{nbytes / 1e6:.1f} MB | {me['socket_read_s']:.3f} | "
                    f"{me['file_write_s']:.3f} | {hop:.3f} | "
                    f"{100 * hop / st['total_s']:.1f}% |")
            me = data["py4jni"][size]
            extra = []
            if "collect-deserialise-in-memory" in me:
                extra.append(f"Python alone unpickles collect()'s "
                             f"{me['collect-deserialise-in-memory'].get('bytes', 0) / 1e6:.1f} MB "
                             f"from memory in {me['collect-deserialise-in-memory']['total_s']:.2f} s")
            if "collect" in me:
                extra.append(f"collect(): the Java call (plan, job) {me['collect']['jvm_call_s']:.2f} s, "
                             f"reading and unpickling {me['collect']['read_and_deserialise_s']:.2f} s")
            if "toPandas-arrow-phases" in me:
                ph = me["toPandas-arrow-phases"]
                extra.append(f"toPandas(Arrow): batches collected in {ph['collect_as_arrow_s']:.3f} s "
                             f"(job, Arrow in Java, socket), Arrow to pandas {ph['arrow_to_pandas_s']:.3f} s")
            if "broadcast-pickle-and-write" in me:
                extra.append(f"broadcast: pickling and writing its "
                             f"{me['broadcast-pickle-and-write']['bytes'] / 1e6:.1f} MB temp file "
                             f"{me['broadcast-pickle-and-write']['total_s']:.3f} s")
            if "loopback" in me:
                extra.append(f"bare loopback TCP in this process: {me['loopback']['mb_s']:.0f} MB/s")
            lines += ["", *[f"- {e}" for e in extra], ""]
        small = {b: data[b].get("arrow-100k") for b in data if data[b].get("arrow-100k")}
        if len(small) == 2:
            lines += [f"### toPandas(Arrow), 100k rows x 2, 15 runs each ({jdk})", "",
                      "| | stock | py4jni |", "|---|---|---|",
                      f"| wall median [min-max] (ms) | "
                      + " | ".join(f"{_med(small[b]['wall_s']) * 1e3:.1f} "
                                   f"[{min(small[b]['wall_s']) * 1e3:.1f}-"
                                   f"{max(small[b]['wall_s']) * 1e3:.1f}]"
                                   for b in ("stock", "py4jni")) + " |",
                      f"| CPU median (ms) | "
                      + " | ".join(f"{_med(small[b]['cpu_s']) * 1e3:.1f}"
                                   for b in ("stock", "py4jni")) + " |", ""]
        charts.append((title, backends, {b: [_med([r["phases"].get(k) for r in runs[b]])
                                           for k, _ in PHASES] for b in backends}))
    text = "\n".join(lines + ["![COLD-session phases](phases.png)", ""])
    with open(os.path.join(out_dir, "phases.md"), "w") as fh:
        fh.write(text)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, len(charts), figsize=(5 * len(charts), 4.5), squeeze=False)
        for ax, (jdk, backends, meds) in zip(axes[0], charts):
            bottom = [0.0] * len(backends)
            for i, (_, label) in enumerate(PHASES):
                vals = [meds[b][i] for b in backends]
                ax.bar(backends, vals, bottom=bottom, label=label)
                bottom = [x + y for x, y in zip(bottom, vals)]
            ax.set_title(f"COLD-session phases, {jdk}")
            ax.set_ylabel("seconds (median, wall)")
            ax.tick_params(axis="x", labelsize=8)
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "phases.png"), dpi=100)
        plt.close(fig)
    except ImportError:
        pass
    return text


def _slug(backend: str) -> str:
    """``backend`` as a file name part -Xlog accepts (no ':' or '=')."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in backend)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--java-home", default=os.environ.get("JAVA_HOME",
                                                         "/usr/lib/jvm/java-17-openjdk-amd64"))
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--rows", default="")
    p.add_argument("--backends", default="stock,py4jni")
    p.add_argument("--out", default=None)
    p.add_argument("--label", default="")
    p.add_argument("--cache", default=None, help="XDG_CACHE_HOME of the py4jni runs "
                   "(default <out>/cache: archives made afresh, their first use timed)")
    p.add_argument("--report", nargs="+", help="write phases.md and phases.png in --out "
                   "from these phases-*.json files")
    p.add_argument("--note", default="", help="the report's title note (machine, load)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--t-spawn", type=float, help=argparse.SUPPRESS)
    p.add_argument("--log", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    rows = [int(x) for x in a.rows.split(",") if x and x != "0"]
    if a.child:
        child(a.child, a.t_spawn, a.log, rows)
        return 0
    out = a.out or os.path.join(HERE, "results", "spark-phases-scratch")
    os.makedirs(out, exist_ok=True)
    if a.report:
        print(report(a.report, out, a.note))
        return 0
    results: dict = {"java_home": a.java_home, "label": a.label, "runs": {}, "prepare": {}}
    backends = a.backends.split(",")
    cache = a.cache or os.path.join(out, "cache")
    for b in backends:  # first use: py4jni's archives made (timed), before the measured runs
        if not b.startswith("py4jni") or b == "py4jni-nocds":
            continue
        log = os.path.join(out, f"classes-{_slug(b)}-first.log")
        t0 = time.time()
        r = run_child(b, a.java_home, log, [], cache)
        t_exit = time.time()
        directory = os.path.join(cache, "py4jni")
        while any(n.endswith(".lock") for n in os.listdir(directory)):
            if time.time() - t_exit > 900:
                raise RuntimeError(f"{b}: the archive's background dump was not done 900 s "
                                   "after the first session exited")
            time.sleep(1)
        made = sorted(n for n in os.listdir(directory) if n.endswith((".jsa", ".aot")))
        results["prepare"][b] = {"first_session": r["phases"], "session_wall_s": t_exit - t0,
                                 "archive_ready_after_exit_s": time.time() - t_exit,
                                 "archives": made,
                                 "failed": [n for n in os.listdir(directory)
                                            if n.endswith(".failed")]}
        print(f"prepared {b}: {json.dumps(results['prepare'][b])}", file=sys.stderr, flush=True)
    for rep in range(a.reps):
        for b in (backends if rep % 2 == 0 else backends[::-1]):
            log = os.path.join(out, f"classes-{_slug(b)}.log")
            data = rows if rep == 0 and b in ("stock", "py4jni") else []
            r = run_child(b, a.java_home, log, data, cache)
            results["runs"].setdefault(b, []).append(r)
            print(f"{b} rep {rep + 1}: cold {r['phases']['cold_total_s']:.2f} s "
                  f"{json.dumps(r['phases'])}", file=sys.stderr, flush=True)
    name = os.path.basename(a.java_home.rstrip("/")) + (f"-{a.label}" if a.label else "")
    with open(os.path.join(out, f"phases-{name}.json"), "w") as fh:
        json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
