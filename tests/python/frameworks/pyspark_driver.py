"""One PySpark driver session for tests/python/frameworks/test_pyspark.py, run in a child process.

``python pyspark_driver.py py4jni|stock|socket TMPDIR``: with ``py4jni`` the driver JVM
is embedded by ``py4jni.pyspark.enable()`` (called after pyspark.sql is imported, the
harder case: the names and converters PySpark took from py4j are carried over), with
``stock`` PySpark starts it with spark-submit as usual; ``socket`` is stock run under
``python -m py4jni run --socket`` (its py4j imports are py4jni's socket mode). The same
steps run in all three; the last stdout line is ``RESULT <json>``: each step's result,
or ``{"error": ...}`` when it raised. Spark's local and temp directories go under TMPDIR
(the exit check looks there afterwards).
"""
from __future__ import annotations

import datetime
import json
import os
import sys
import threading
from typing import Any

MODE, TMP = sys.argv[1], sys.argv[2]
from driver_steps import results, step  # noqa: E402

from pyspark import InheritableThread  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

if MODE == "py4jni":  # after pyspark's imports: its py4j names and converters move over
    import py4jni.pyspark
    py4jni.pyspark.enable()

spark = (SparkSession.builder.master("local[2]")
         .config("spark.ui.enabled", "false")
         .config("spark.local.dir", TMP)
         # three drivers run at once on two cores: C1 only and one GC thread spare the
         # JIT's and GC's threads most of their CPU in this short session
         .config("spark.driver.extraJavaOptions",
                 f"-Djava.io.tmpdir={TMP} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
         .config("spark.sql.shuffle.partitions", "2")
         .getOrCreate())
sc = spark.sparkContext
rows = [(i, f"n{i}", i * 0.5) for i in range(20)]
df = spark.createDataFrame(rows, ["id", "name", "half"])


@step("gateway")
def _gateway() -> Any:
    return type(sc._gateway).__module__ + "." + type(sc._gateway).__name__


@step("conf")
def _conf() -> Any:
    conf = sc.getConf()
    return {k: conf.get(k) for k in ("spark.app.name", "spark.master",
                                     "spark.submit.deployMode", "spark.local.dir")}


@step("jvm_heap_mb")
def _heap() -> Any:
    return sc._jvm.java.lang.Runtime.getRuntime().maxMemory() // (1024 * 1024)


@step("dataframe")
def _dataframe() -> Any:
    out = df.where(F.col("id") % 3 == 0).groupBy((F.col("id") % 2).alias("odd")) \
        .agg(F.sum("half").alias("s"), F.count("*").alias("c")).orderBy("odd").collect()
    return [r.asDict() for r in out]


@step("sql")
def _sql() -> Any:
    df.createOrReplaceTempView("t")
    return [tuple(r) for r in spark.sql(
        "SELECT name, id * 2 AS d FROM t WHERE id < 4 ORDER BY id").collect()]


@step("rdd")
def _rdd() -> Any:
    return sc.parallelize(range(100), 4).map(lambda x: x * x).filter(lambda x: x % 3 == 0).sum()


@step("accumulator")
def _accumulator() -> Any:
    # workers' updates reach the driver's accumulator server (auth token of the gateway)
    acc = sc.accumulator(0)
    sc.parallelize(range(10), 2).foreach(lambda x: acc.add(x))
    return acc.value


@step("broadcast")
def _broadcast() -> Any:
    b = sc.broadcast({"a": 1, "b": 2})
    return sc.parallelize(["a", "b", "a"], 2).map(lambda k: b.value[k]).collect()


@step("ml_pipeline")
def _ml() -> Any:
    # pyspark.ml's Java wrappers: _new_java_obj, params through new_array and _py2java
    from pyspark.ml import Pipeline
    from pyspark.ml.feature import StringIndexer, VectorAssembler
    small = spark.createDataFrame([("x", 1.0), ("y", 2.0), ("x", 3.0)], ["k", "v"])
    model = Pipeline(stages=[
        StringIndexer(inputCol="k", outputCol="ki", stringOrderType="alphabetAsc"),
        VectorAssembler(inputCols=["ki", "v"], outputCol="f")]).fit(small)
    return [r.f.toArray().tolist() for r in model.transform(small).orderBy("v").collect()]


@step("udf")
def _udf() -> Any:
    shout = F.udf(lambda s: s.upper() + "!", "string")
    return [r[0] for r in df.where("id < 3").orderBy("id").select(shout("name")).collect()]


@step("collect")
def _collect() -> Any:
    return [tuple(r) for r in df.orderBy("id").collect()]


@step("to_pandas")
def _to_pandas() -> Any:
    spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "false")
    return df.orderBy("id").toPandas().to_dict("list")


@step("to_pandas_arrow")
def _to_pandas_arrow() -> Any:
    import pyarrow  # noqa: F401 - without it this step reports the ImportError
    spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
    spark.conf.set("spark.sql.execution.arrow.pyspark.fallback.enabled", "false")
    try:
        return df.orderBy("id").toPandas().to_dict("list")
    finally:
        spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "false")


@step("lit_date_timestamp")
def _lit() -> Any:
    r = spark.range(1).select(F.lit(datetime.date(2024, 2, 29)).alias("d"),
                              F.lit(datetime.datetime(2024, 2, 29, 12, 30, 5)).alias("t"),
                              F.lit(datetime.timedelta(days=1, seconds=3)).alias("i")).first()
    return [str(r.d), str(r.t), str(r.i)]


@step("threads")
def _threads() -> Any:
    sc.setLocalProperty("py4jni.test", "main")
    seen: dict[str, Any] = {}

    def plain() -> None:
        seen["plain_count"] = spark.range(50).count()
        seen["plain_prop"] = sc.getLocalProperty("py4jni.test")
        sc.setLocalProperty("py4jni.test", "plain")  # this thread's own property

    def inheriting() -> None:
        seen["inherit_prop"] = sc.getLocalProperty("py4jni.test")

    t = threading.Thread(target=plain)
    t.start()
    t.join()
    t2 = InheritableThread(target=inheriting)
    t2.start()
    t2.join()
    seen["main_prop_after"] = sc.getLocalProperty("py4jni.test")
    return seen


@step("missing_table")
def _missing_table() -> Any:
    try:
        spark.sql("SELECT * FROM no_such_table_py4jni").collect()
    except Exception as exc:  # noqa: BLE001
        from pyspark.errors import AnalysisException
        return {"type": type(exc).__name__, "is_analysis": isinstance(exc, AnalysisException),
                "condition": getattr(exc, "getCondition", lambda: None)()}
    return "no error"


@step("java_error")
def _java_error() -> Any:
    from py4j.protocol import Py4JJavaError
    try:
        sc._jvm.java.lang.Integer.parseInt("not a number")
    except Py4JJavaError as exc:
        return str(exc.java_exception.getClass().getName())
    return "no error"


@step("foreach_batch_and_listener")
def _streaming() -> Any:
    from pyspark.sql.streaming import StreamingQueryListener
    src = os.path.join(TMP, "stream-in")
    os.makedirs(src, exist_ok=True)
    with open(os.path.join(src, "a.json"), "w") as fh:
        fh.write("\n".join(json.dumps({"v": i}) for i in range(5)))
    events: list[str] = []

    class Listener(StreamingQueryListener):
        def onQueryStarted(self, event: Any) -> None:
            events.append("started")

        def onQueryProgress(self, event: Any) -> None:
            pass

        def onQueryIdle(self, event: Any) -> None:
            pass

        def onQueryTerminated(self, event: Any) -> None:
            events.append("terminated")

    listener = Listener()
    spark.streams.addListener(listener)
    batches: list[list[int]] = []
    q = (spark.readStream.schema("v INT").json(src).writeStream
         .foreachBatch(lambda bdf, bid: batches.append(sorted(r.v for r in bdf.collect())))
         .option("checkpointLocation", os.path.join(TMP, "stream-ckpt"))
         .trigger(availableNow=True).start())
    q.awaitTermination(120)
    spark.streams.removeListener(listener)
    return {"batches": [b for b in batches if b], "started": "started" in events}


@step("local_dirs")
def _local_dirs() -> Any:
    return sorted(os.listdir(TMP))


@step("stop_and_new_session")
def _new_session() -> Any:
    spark.stop()
    again = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false") \
        .config("spark.local.dir", TMP).getOrCreate()
    n = again.range(7).count()
    same_gateway = again.sparkContext._gateway is sc._gateway
    return {"count": n, "same_gateway": same_gateway}


@step("gateway_shutdown")
def _gateway_shutdown() -> Any:
    SparkSession.getActiveSession().stop()
    gateway = sc._gateway
    gateway.shutdown()  # then Java is unreachable through it; exit stays clean
    try:
        gateway.jvm.java.lang.System.nanoTime()
    except Exception as exc:  # noqa: BLE001 - which error is the result
        return {"after_shutdown": type(exc).__name__,
                "py4j_error": isinstance(exc, __import__("py4j.protocol").protocol.Py4JError)}
    return {"after_shutdown": "answered"}


print("RESULT " + json.dumps(results, default=str), flush=True)
