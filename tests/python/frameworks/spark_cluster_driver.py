"""A PySpark driver for tests/python/frameworks/test_spark_cluster.py:

    python spark_cluster_driver.py MODE MASTER [env]

MODE ``py4jni`` embeds the driver JVM (py4jni.pyspark.enable()), ``stock`` is PySpark's
own spark-submit + py4j. With ``env`` the driver prints the driver JVM's environment and
system properties and stops; otherwise it runs a job on MASTER: a Python UDF, an RDD
map/reduce, a broadcast, collect, and where each Python worker ran (the executor JVM it
descends from). Prints one line ``RESULT <json>``.
"""
from __future__ import annotations

import json
import os
import sys


def _executor_of_this_worker() -> str:
    """The main class of the nearest java process among this process's ancestors."""
    pid = os.getppid()
    while pid > 1:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = [a.decode(errors="replace") for a in fh.read().split(b"\0") if a]
        if argv and os.path.basename(argv[0]) == "java":
            cls = [a for a in argv if a.startswith("org.apache.spark.")]
            return cls[0] if cls else "java"
        with open(f"/proc/{pid}/stat") as fh:
            pid = int(fh.read().rsplit(")", 1)[1].split()[1])
    return "none"


def main(mode: str, master: str, what: str) -> None:
    if mode == "py4jni":
        import py4jni.pyspark
        py4jni.pyspark.enable()
    from pyspark.sql import SparkSession
    from pyspark.sql.functions import udf
    builder = (SparkSession.builder.master(master).appName("cluster-test")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false"))
    if master.startswith(("spark://", "local-cluster")):
        builder = builder.config("spark.executor.memory", "512m") \
                         .config("spark.executor.cores", "1")
    spark = builder.getOrCreate()
    sc = spark.sparkContext
    out: dict = {}
    if what == "env":
        system = sc._jvm.java.lang.System
        out["env"] = {str(k): str(v) for k, v in dict(system.getenv()).items()}
        props = system.getProperties()
        out["props"] = {str(k): str(props.getProperty(k))
                        for k in list(props.stringPropertyNames())}
        out["python_env"] = dict(os.environ)
    else:
        triple = udf(lambda x: x * 3, "long")
        out["udf"] = [r[0] for r in spark.range(20).select(triple("id")).collect()]
        out["reduce"] = sc.parallelize(range(1000), 4).map(lambda x: x * x).reduce(
            lambda a, b: a + b)
        names = sc.broadcast({0: "zero", 1: "one", 2: "two"})
        out["broadcast"] = sc.parallelize(range(9), 3).map(
            lambda x: names.value[x % 3]).collect()
        out["collect"] = [tuple(r) for r in spark.range(5).selectExpr(
            "id", "id * id AS sq").collect()]
        driver_pid = os.getpid()
        out["workers"] = sorted(set(sc.parallelize(range(4), 4).map(
            lambda _: (_executor_of_this_worker(), os.getpid() != driver_pid)).collect()))
    spark.stop()
    print("RESULT " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "job")
