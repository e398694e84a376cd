#!/usr/bin/env python3
"""PySpark's data paths in-process: Spark's own hop (loopback socket or temp file) against
the same bytes handed over in memory (A/B), plus stock PySpark for reference.

    python perf/dataplane_ab.py --mode py4jni|stock --rows N[,N...] [--reps R] [--paths P,...]
                                [--out FILE]

Each path runs R times per variant, interleaved (A, B, A, B...), after one unmeasured
warm-up of each variant; wall and CPU seconds (this process's threads: in-process that
includes the JVM's; stock adds the driver JVM's process) of every run are written as JSON.
Variants (``spark``: PySpark's code as shipped; ``mem``: the hop replaced in memory):

- toPandas-arrow: spark = ``collectAsArrowToPython`` + socket + ``ArrowCollectSerializer``;
  mem = the Dataset's Arrow batch RDD collected as ``byte[][]`` through the bridge, read
  by pyarrow with the schema Java wrote (the rest of ``toPandas`` unchanged); py4jni =
  the PySpark adapter's in-memory path when it is installed (spark_dataplane.py: Spark's
  own stream writer into memory, ``ArrowCollectSerializer`` reading it in place).
- createDataFrame-arrow: spark = Arrow stream to a temp file, ``readArrowStreamFromFile``;
  mem = the same stream as one ``byte[]``, read by ``ArrowConverters.getBatchesFromStream``.
- parallelize: spark = pickled batches to a temp file, ``readRDDFromFile``; mem = the same
  bytes as one ``byte[]`` to ``readRDDFromInputStream``.
- collect: spark = ``collectToPython`` + socket + unpickling; mem = ``javaToPython()`` RDD's
  pickled batches collected as ``byte[][]``, unpickled in Python.
- toPandas (no Arrow) and broadcast: spark only, with the temp file's write timed.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time

from spark_phases import _cpu as cpu  # the driver's CPU seconds, both ways


def scala_object(jvm, fqn):
    """The instance of Scala object ``fqn`` (its ``MODULE$``)."""
    return getattr(jvm.java.lang.Class.forName(fqn + "$", True,
                   jvm.java.lang.Thread.currentThread().getContextClassLoader())
                   .getField("MODULE$"), "get")(None)


def collect_as_arrow_mem(df, split_batches=False, empty_list_if_zero_records=True,
                         prefers_large_var_types=False):
    """The Arrow batches of ``df`` in memory: the batch RDD collected as byte[][]."""
    import pyarrow as pa
    jvm = df.sparkSession._jvm
    jdf = df._jdf
    conf = df.sparkSession._jconf
    tz = conf.sessionLocalTimeZone()
    maxrec = conf.arrowMaxRecordsPerBatch()
    jrdd = jdf.toArrowBatchRdd(maxrec, tz, True, prefers_large_var_types)
    arr = jrdd.collect()
    # the schema as Java writes it: an empty batch's stream carries it
    schema_stream = scala_object(jvm, "org.apache.spark.sql.execution.arrow.ArrowConverters").createEmptyArrowBatch(
        jdf.schema(), tz, True, prefers_large_var_types)
    schema = pa.ipc.open_stream(schema_stream).schema
    batches = [pa.ipc.read_record_batch(pa.py_buffer(b), schema) for b in arr]
    if not batches and not empty_list_if_zero_records:
        return [pa.ipc.open_stream(schema_stream).read_next_batch()]
    return batches


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--mode", default="py4jni")
    p.add_argument("--rows", default="1000000")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--paths", default="toPandas-arrow,createDataFrame-arrow,parallelize,"
                   "broadcast,collect,toPandas")
    p.add_argument("--out", default=None)
    a = p.parse_args()
    if a.mode == "py4jni":
        import py4jni.pyspark
        py4jni.pyspark.enable()
    import pandas as pd
    from pyspark.sql import SparkSession
    from pyspark.sql.pandas.conversion import PandasConversionMixin
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "6g").getOrCreate())
    sc = spark.sparkContext
    jvm = sc._jvm
    res: dict = {"mode": a.mode, "load_start": os.getloadavg(), "data": {}}
    installed = PandasConversionMixin._collect_as_arrow  # py4jni's in-memory one, if enabled
    spark_collect_as_arrow = getattr(installed, "_py4jni_stock", installed)
    real_ser = type(sc)._serialize_to_jvm
    tmp_write = {"s": 0.0, "bytes": 0}

    def timed_ser(self, data, serializer, reader_func, server_func):
        def reader(path):
            tmp_write["s"] += time.perf_counter() - t0
            tmp_write["bytes"] += os.path.getsize(path)
            return reader_func(path)
        t0 = time.perf_counter()
        return real_ser(self, data, serializer, reader, server_func)

    for n in [int(x) for x in a.rows.split(",")]:
        df = spark.range(n).selectExpr("id", "id * 2 AS x")
        pdf = pd.DataFrame({"id": range(n), "x": range(0, 2 * n, 2)})
        values = list(range(n))
        data: dict = {}
        res["data"][str(n)] = data

        def tp_arrow(variant):
            PandasConversionMixin._collect_as_arrow = {
                "spark": spark_collect_as_arrow, "mem": collect_as_arrow_mem,
                "py4jni": installed}[variant]
            spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
            try:
                out = df.toPandas()
            finally:
                PandasConversionMixin._collect_as_arrow = spark_collect_as_arrow
            assert len(out) == n

        def cdf_arrow(variant):
            spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
            if variant == "spark":
                d = spark.createDataFrame(pdf)
            else:
                def ser(self, data, serializer, reader_func, server_func):
                    buf = io.BytesIO()
                    serializer.dump_stream(data, buf)
                    ch = jvm.java.nio.channels.Channels.newChannel(
                        jvm.java.io.ByteArrayInputStream(buf.getvalue()))
                    return scala_object(jvm, "org.apache.spark.sql.execution.arrow.ArrowConverters") \
                        .getBatchesFromStream(ch)
                type(sc)._serialize_to_jvm = ser
                try:
                    d = spark.createDataFrame(pdf)
                finally:
                    type(sc)._serialize_to_jvm = real_ser
            assert d.count() == n

        def par(variant):
            if variant == "spark":
                r = sc.parallelize(values, 2)
            else:
                def ser(self, data, serializer, reader_func, server_func):
                    buf = io.BytesIO()
                    serializer.dump_stream(data, buf)
                    return jvm.org.apache.spark.api.python.PythonRDD.readRDDFromInputStream(
                        self._jsc.sc(), jvm.java.io.ByteArrayInputStream(buf.getvalue()), 2)
                type(sc)._serialize_to_jvm = ser
                try:
                    r = sc.parallelize(values, 2)
                finally:
                    type(sc)._serialize_to_jvm = real_ser
            assert r.count() == n

        def bcast(variant):
            b = sc.broadcast(values)
            assert sc.parallelize([0, 1], 2).map(lambda i: len(b.value)).collect() == [n, n]
            b.unpersist()

        def coll(variant):
            if variant == "spark":
                got = df.collect()
            else:
                from pyspark.serializers import CPickleSerializer
                ser = CPickleSerializer()
                arr = df._jdf.javaToPython().rdd().collect()
                got = [r for b in arr for r in ser.loads(b)]
            assert len(got) == n

        def tp_plain(variant):
            spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "false")
            assert len(df.toPandas()) == n

        paths = {"toPandas-arrow": (tp_arrow, ["spark", "mem"] + (
                     ["py4jni"] if installed is not spark_collect_as_arrow else [])),
                 "createDataFrame-arrow": (cdf_arrow, ["spark", "mem"]),
                 "parallelize": (par, ["spark", "mem"]),
                 "broadcast": (bcast, ["spark"]),
                 "collect": (coll, ["spark", "mem"]),
                 "toPandas": (tp_plain, ["spark"])}
        for name in a.paths.split(","):
            fn, variants = paths[name]
            if a.mode == "stock":
                variants = ["spark"]
            reps = a.reps if name not in ("collect", "toPandas") or n <= 1000000 else 2
            runs: dict = {v: [] for v in variants}
            for v in variants:  # warm-up
                fn(v)
            for _ in range(reps):
                for v in variants:
                    type(sc)._serialize_to_jvm = timed_ser
                    tmp_write["s"], tmp_write["bytes"] = 0.0, 0
                    c, t = cpu(spark), time.perf_counter()
                    try:
                        fn(v)
                    finally:
                        if type(sc)._serialize_to_jvm is timed_ser:
                            type(sc)._serialize_to_jvm = real_ser
                    runs[v].append({"wall_s": time.perf_counter() - t, "cpu_s": cpu(spark) - c,
                                    "tmp_write_s": tmp_write["s"],
                                    "tmp_bytes": tmp_write["bytes"]})
            data[name] = runs
            line = " ".join(
                f"{v}: wall min {min(r['wall_s'] for r in rs):.3f} "
                f"med {sorted(r['wall_s'] for r in rs)[len(rs) // 2]:.3f} "
                f"cpu min {min(r['cpu_s'] for r in rs):.3f}" for v, rs in runs.items())
            print(f"{n} {name}: {line}", file=sys.stderr, flush=True)
    res["load_end"] = os.getloadavg()
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(res, fh, indent=1)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
