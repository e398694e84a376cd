"""A Delta Lake session as a user writes it, for tests/python/frameworks/test_delta.py.

``python delta_program.py TMPDIR`` (stock, or under ``python -m py4jni run``): delta-spark's
``configure_spark_with_delta_pip`` asks Spark for Delta's jars (``spark.jars.packages``,
resolved from Maven Central by Spark's Ivy into its usual cache), then a table is
written, read, updated, deleted from, merged into, read at older versions and its
history listed. The last stdout line is ``RESULT <json>``.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any

from delta import configure_spark_with_delta_pip
from delta.tables import DeltaTable
from pyspark.sql import SparkSession

TMP = sys.argv[1]
builder = (SparkSession.builder.master("local[1]").appName("delta")
           .config("spark.ui.enabled", "false")
           .config("spark.local.dir", TMP)
           .config("spark.driver.extraJavaOptions",
                   f"-Djava.io.tmpdir={TMP} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
           .config("spark.sql.shuffle.partitions", "1")
           .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
           .config("spark.sql.catalog.spark_catalog",
                   "org.apache.spark.sql.delta.catalog.DeltaCatalog"))
spark = configure_spark_with_delta_pip(builder).getOrCreate()
path = os.path.join(TMP, "table")


def rows(df: Any) -> list[list[Any]]:
    return [list(r) for r in df.orderBy("id").collect()]


out: dict[str, Any] = {}
spark.createDataFrame([(i, f"n{i}") for i in range(5)], ["id", "name"]) \
    .write.format("delta").save(path)                                     # version 0
out["read"] = rows(spark.read.format("delta").load(path))
table = DeltaTable.forPath(spark, path)
table.update("id = 2", {"name": "'two'"})                                 # version 1
table.delete("id = 4")                                                    # version 2
updates = spark.createDataFrame([(1, "one"), (7, "n7")], ["id", "name"])
(table.alias("t").merge(updates.alias("u"), "t.id = u.id")                # version 3
 .whenMatchedUpdate(set={"name": "u.name"}).whenNotMatchedInsertAll().execute())
out["now"] = rows(table.toDF())
out["version_1"] = rows(spark.read.format("delta").option("versionAsOf", 1).load(path))
out["version_0_sql"] = [list(r) for r in spark.sql(
    f"SELECT id, name FROM delta.`{path}` VERSION AS OF 0 ORDER BY id").collect()]
out["history"] = [[r.version, r.operation] for r in
                  table.history().select("version", "operation").orderBy("version").collect()]
out["detail"] = [list(r) for r in table.detail().select("format", "numFiles").collect()]
out["jvm"] = "in-process" if type(spark.sparkContext._gateway).__module__.startswith("py4jni") \
    else "child"
spark.stop()
print("RESULT " + json.dumps(out))
