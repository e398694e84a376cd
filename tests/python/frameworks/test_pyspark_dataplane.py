"""toPandas()/toArrow() with Arrow in-process: py4jni's in-memory collect
(py4jni/frameworks/spark_dataplane.py) against PySpark's own socket path, in one PySpark
session (tests/python/frameworks/pyspark_dataplane_driver.py in a child process: a process holds one
JVM). Every case runs both ways; frames and tables must be equal (values, dtypes, names,
index), errors the same (class and message), and the in-memory path must be the one
taken: no ``_load_from_socket`` and no socket connection from Python. A SIGINT during an
in-memory collect cancels the job (a second child). Skipped without
pyspark or pyarrow (tests/requirements-pyspark.txt installs both).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed "
                    "(pip install -r tests/requirements-pyspark.txt)")
pytest.importorskip("pyarrow", reason="pyarrow is not installed "
                    "(pip install -r tests/requirements-pyspark.txt)")

pytestmark = pytest.mark.inproc_only("PySpark's driver JVM embedded in-process")

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "pyspark_dataplane_driver.py")

RESULT_CASES = ("types_and_nulls", "timestamps_session_timezone", "empty_dataframe",
                "empty_to_arrow", "many_partitions_and_batches", "self_destruct",
                "large_var_types_to_arrow", "observe_metrics", "job_group")
ERROR_CASES = ("error_in_job", "python_udf_error")
NO_ARROW_COLLECT = ("fallback_enabled", "fallback_disabled_error")


@pytest.fixture(scope="module")
def res() -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    env["PYSPARK_PYTHON"] = sys.executable
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([sys.executable, DRIVER, tmp], capture_output=True, text=True,
                              env=env, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, f"driver printed no result, rc={proc.returncode}:\n" \
                  f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    results: dict[str, Any] = json.loads(lines[-1][len("RESULT "):])
    return results


def _no_error(entry: dict[str, Any]) -> None:
    for path in ("in_memory", "stock"):
        err = entry[path]["error"]
        assert err is None, f"{path} raised {err['type']}: {err['message']}\n{err['trace']}"


def test_spark_has_the_writer(res):
    assert res["writer_found"] is True


@pytest.mark.parametrize("name", RESULT_CASES)
def test_same_result_as_pysparks_socket_path(res, name):
    entry = res[name]
    _no_error(entry)
    assert entry["equal"], f"{name}: in-memory {entry['in_memory']['value']} != " \
                           f"stock {entry['stock']['value']}"


@pytest.mark.parametrize("name", RESULT_CASES + ERROR_CASES)
def test_in_memory_path_is_taken_without_a_socket(res, name):
    mem, stock = res[name]["in_memory"]["calls"], res[name]["stock"]["calls"]
    assert mem == {"in_memory": 1, "load_from_socket": 0, "socket_connects": 0}
    # the stock run of the same case does go through the socket (the counters count)
    assert stock["in_memory"] == 0 and stock["load_from_socket"] == 1
    assert stock["socket_connects"] >= 1


def test_frames_have_the_expected_shape(res):
    # the comparison above is of real data, not of two empty results
    assert res["types_and_nulls"]["in_memory"]["value"]["rows"] == 2000
    assert len(res["types_and_nulls"]["in_memory"]["value"]["columns"]) == 12
    assert res["many_partitions_and_batches"]["in_memory"]["value"]["rows"] == 20000
    assert res["empty_dataframe"]["in_memory"]["value"] == {
        "rows": 0, "columns": ["id", "s"], "dtypes": res["empty_dataframe"]["stock"]["value"]
        ["dtypes"]}
    assert res["empty_to_arrow"]["in_memory"]["value"]["rows"] == 0
    assert "large_string" in res["large_var_types_to_arrow"]["in_memory"]["value"]["schema"]
    ts = res["timestamps_session_timezone"]["in_memory"]["value"]["dtypes"]
    assert ts[1].startswith("datetime64") and ts[2].startswith("datetime64")


def test_observe_metrics_arrive(res):
    # the job runs inside Spark's withAction: the query listener fills the Observation
    assert res["observe_metrics"]["in_memory"]["value"] == {
        "rows": 1000, "metrics": {"n": 1000, "mx": 999}}


def test_job_runs_in_the_callers_job_group(res):
    assert res["job_group"]["in_memory"]["value"] == "1"


@pytest.mark.parametrize("name", ERROR_CASES)
def test_job_errors_are_raised_as_by_pyspark(res, name):
    mem, stock = res[name]["in_memory"]["error"], res[name]["stock"]["error"]
    assert mem is not None and stock is not None
    assert (mem["type"], mem["module"], mem["message"]) == \
        (stock["type"], stock["module"], stock["message"])


def test_error_classes(res):
    assert res["error_in_job"]["in_memory"]["error"]["type"] == "ArithmeticException"
    assert res["python_udf_error"]["in_memory"]["error"]["type"] == "PythonException"
    assert "boom at 42" in res["python_udf_error"]["in_memory"]["error"]["trace"]


def test_arrow_fallback_unchanged(res):
    # a type PySpark's Arrow conversion refuses (a year-month interval): with fallback
    # toPandas goes on without Arrow (collect(), which cannot convert it either in
    # PySpark 4.3), without fallback PySpark's Arrow error; both as stock, and neither
    # reaches an Arrow collect
    fb, nofb = res["fallback_enabled"], res["fallback_disabled_error"]
    assert fb["in_memory"]["error"]["message"] == fb["stock"]["error"]["message"]
    assert "YearMonthIntervalType" in fb["in_memory"]["error"]["message"]
    assert nofb["in_memory"]["error"]["type"] == nofb["stock"]["error"]["type"] == \
        "PySparkTypeError"
    assert nofb["in_memory"]["error"]["message"] == nofb["stock"]["error"]["message"]
    assert "UNSUPPORTED_DATA_TYPE_FOR_ARROW_CONVERSION" in nofb["in_memory"]["error"]["message"]
    for name in NO_ARROW_COLLECT:
        for path in ("in_memory", "stock"):
            calls = res[name][path]["calls"]
            assert calls["in_memory"] == 0 and calls["load_from_socket"] == 0


# ---------------------------------------------------------------- the two pieces alone

def test_byte_chunks_keeps_every_write_in_order(inproc_gateway):
    out = inproc_gateway.jvm.org.py4jni.ByteChunks()
    big = bytes(range(256)) * 4000  # 1 MB: spans chunks
    expected = bytearray()
    for piece in (b"ab", big, b"c" * 70000, b"", b"tail", big):
        out.write(piece, 0, len(piece))
        expected += piece
    out.write(7)
    expected.append(7)
    out.write(big, 5, 10)  # a slice of the array
    expected += big[5:15]
    assert out.size() == len(expected)
    got = [bytes(c) for c in out.chunks()]
    assert b"".join(got) == bytes(expected)
    sizes = [len(c) for c in got]
    # full chunks of 64 KiB doubling (up to 4 MiB), the last trimmed
    assert sizes[:-1] == [65536 << i for i in range(len(sizes) - 1)]
    assert 0 < sizes[-1] <= 65536 << (len(sizes) - 1)
    assert out.size() == 0 and len(out.chunks()) == 0  # handed out: empty again


def test_byte_chunks_refuses_a_bad_range(inproc_gateway):
    from py4jni.protocol import Py4JJavaError
    out = inproc_gateway.jvm.org.py4jni.ByteChunks()
    with pytest.raises(Py4JJavaError, match="IndexOutOfBoundsException"):
        out.write(b"abc", 2, 5)


def test_chunk_reader_reads_across_chunks():
    from py4jni.frameworks.spark_dataplane import ChunkReader
    chunks = [b"0123", b"", b"45", b"6789abcdef", b"g"]
    whole = b"".join(chunks)
    for sizes in ([1] * 17, [3, 3, 3, 3, 3, 3], [4, 2, 10, 1], [5, 100], [17], [0, 2, -1]):
        r = ChunkReader(chunks)
        got = b""
        for n in sizes:
            piece = r.read(n)
            assert len(piece) <= max(n, 0) or n < 0
            got += bytes(piece)
        assert got == whole[:len(got)]
        assert got == whole or bytes(r.read()) == whole[len(got):]
        assert r.read(1) == b""  # at the end
    r = ChunkReader([b"abcdef"])
    view = r.read(3)
    assert isinstance(view, memoryview) and bytes(view) == b"abc"  # in place, no copy


SIGINT_DRIVER = r'''
import os, signal, threading, time
import py4jni.pyspark
py4jni.pyspark.enable()
from pyspark.sql import SparkSession, functions as F
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.driver.host", "127.0.0.1").getOrCreate())
spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
def slow(x):
    import time
    time.sleep(0.2)
    return x
df = spark.range(0, 400, 1, 2).select(F.udf(slow, "long")("id").alias("v"))  # ~40 s
sent = []
def interrupt():
    sent.append(time.monotonic())
    os.kill(os.getpid(), signal.SIGINT)
threading.Timer(5.0, interrupt).start()
try:
    df.toPandas()
    print("RESULT finished")
except KeyboardInterrupt:
    late = time.monotonic() - sent[0]
    deadline = time.monotonic() + 15.0  # the job would run ~30 s more on its own
    while True:
        jobs = list(spark.sparkContext.statusTracker().getActiveJobsIds())
        if not jobs or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    print(f"RESULT KeyboardInterrupt {late:.3f} {jobs}")
spark.stop()
'''


def test_sigint_during_an_arrow_collect_cancels_the_job():
    # the job runs in the caller's Java call: py4jni's interrupt reaches it, PySpark's
    # SIGINT handler cancels the job, and KeyboardInterrupt is what the caller sees
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    env["PYSPARK_PYTHON"] = sys.executable
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    proc = subprocess.run([sys.executable, "-c", SIGINT_DRIVER], capture_output=True,
                          text=True, env=env, timeout=300)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, f"rc={proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    words = lines[-1].split(" ", 3)
    assert words[1] == "KeyboardInterrupt", lines[-1]
    # Interrupted, not run to its end: the job had ~35 s of work left at the SIGINT, so
    # 20 s is a "does not hang" bound, loose enough for any load (how soon it comes is a
    # figure of docs/performance.md, not a test's)
    assert float(words[2]) < 20.0, lines[-1]
    assert words[3] == "[]", lines[-1]  # cancelled: no job left running
