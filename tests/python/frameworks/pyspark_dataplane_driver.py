"""Child process of test_pyspark_dataplane.py: one in-process PySpark session
(py4jni.pyspark.enable()) that runs each case twice, through py4jni's in-memory Arrow
collect (what enable() installs) and through PySpark's own socket path (the stock
``_collect_as_arrow``), and prints one ``RESULT {json}`` line: per case, whether the two
pandas frames / Arrow tables are equal (values, dtypes, column names, index), their
dtypes, the exception each raised, and how many times each path ran (Python calls of
py4jni's collect, of PySpark's ``_load_from_socket`` in the conversion module, and
socket connections this process made).

    python pyspark_dataplane_driver.py TMPDIR
"""
from __future__ import annotations

import json
import socket
import sys
import traceback
import warnings
from typing import Any, Callable

import py4jni.pyspark

py4jni.pyspark.enable()

import pandas as pd  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql.pandas import conversion  # noqa: E402
from pyspark.sql.pandas.conversion import PandasConversionMixin  # noqa: E402

from py4jni.frameworks import spark_dataplane  # noqa: E402

warnings.simplefilter("ignore")
tmp = sys.argv[1]
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.driver.host", "127.0.0.1")
         .config("spark.local.dir", tmp).getOrCreate())
sc = spark.sparkContext
jvm = sc._jvm

installed = PandasConversionMixin._collect_as_arrow
stock = installed._py4jni_stock
counts = {"in_memory": 0, "load_from_socket": 0, "socket_connects": 0}

real_collect = spark_dataplane.collect_as_arrow
real_load = conversion._load_from_socket


def counted_collect(*a: Any, **k: Any) -> Any:
    counts["in_memory"] += 1
    return real_collect(*a, **k)


def counted_load(*a: Any, **k: Any) -> Any:
    counts["load_from_socket"] += 1
    return real_load(*a, **k)


spark_dataplane.collect_as_arrow = counted_collect
conversion._load_from_socket = counted_load


real_connect = socket.socket.connect


def counted_connect(self: socket.socket, address: Any) -> Any:
    counts["socket_connects"] += 1
    return real_connect(self, address)


socket.socket.connect = counted_connect  # type: ignore[method-assign]


def run(path: str, fn: Callable[[], Any]) -> dict[str, Any]:
    PandasConversionMixin._collect_as_arrow = installed if path == "in_memory" else stock
    before = dict(counts)
    try:
        value: Any = fn()
        error = None
    except Exception as exc:  # noqa: BLE001 - the exception is the result
        value, error = None, {"type": type(exc).__name__, "module": type(exc).__module__,
                              "message": str(exc).split("\n")[0][:300],
                              "trace": traceback.format_exc()[-2000:]}
    finally:
        PandasConversionMixin._collect_as_arrow = installed
    return {"value": value, "error": error,
            "calls": {k: counts[k] - before[k] for k in counts}}


def same(a: Any, b: Any) -> bool:
    if isinstance(a, pd.DataFrame):
        try:
            pd.testing.assert_frame_equal(a, b, check_exact=True)
        except AssertionError:
            return False
        return list(a.dtypes.astype(str)) == list(b.dtypes.astype(str))
    if hasattr(a, "equals"):  # pyarrow Table
        return bool(a.equals(b)) and a.schema == b.schema
    return bool(a == b)


def describe(v: Any) -> Any:
    if isinstance(v, pd.DataFrame):
        return {"rows": len(v), "columns": list(v.columns),
                "dtypes": [str(d) for d in v.dtypes]}
    if hasattr(v, "schema"):
        return {"rows": v.num_rows, "schema": str(v.schema)}
    return repr(v)


cases: dict[str, Callable[[], Any]] = {}


def case(name: str) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    def deco(fn: Callable[[], Any]) -> Callable[[], Any]:
        cases[name] = fn
        return fn
    return deco


def conf(**settings: str) -> None:
    for k, v in settings.items():
        spark.conf.set("spark.sql.execution.arrow." + k.replace("_", "."), v)


def arrow_on() -> None:
    conf(pyspark_enabled="true", pyspark_fallback_enabled="false",
         pyspark_selfDestruct_enabled="false", maxRecordsPerBatch="10000",
         useLargeVarTypes="false")


@case("types_and_nulls")
def _types() -> Any:
    arrow_on()
    return spark.sql(
        "SELECT id, IF(id % 3 = 0, NULL, id * 2) AS maybe, CAST(id AS INT) AS i, "
        "id / 7 AS d, IF(id % 5 = 0, NULL, CONCAT('s', id)) AS s, id % 2 = 0 AS b, "
        "CAST(id AS DECIMAL(12, 2)) AS dec, DATE'2024-02-29' + CAST(id AS INT) AS day, "
        "ARRAY(id, id + 1) AS arr, NAMED_STRUCT('a', id, 'b', CONCAT('x', id)) AS st, "
        "MAP('k', id) AS m, CAST(CONCAT('b', id) AS BINARY) AS bin "
        "FROM RANGE(2000)").toPandas()


@case("timestamps_session_timezone")
def _timestamps() -> Any:
    arrow_on()
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try:
        return spark.sql(
            "SELECT id, TIMESTAMP'2024-03-10 01:30:00' + MAKE_INTERVAL(0, 0, 0, 0, id) AS ts, "
            "TIMESTAMP_NTZ'2024-03-10 01:30:00' + MAKE_INTERVAL(0, 0, 0, 0, id) AS ntz, "
            "IF(id = 1, NULL, TIMESTAMP'1900-01-01 00:00:00') AS old "
            "FROM RANGE(5)").toPandas()
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


@case("empty_dataframe")
def _empty() -> Any:
    arrow_on()
    return spark.sql("SELECT id, CONCAT('s', id) AS s FROM RANGE(10) WHERE id < 0").toPandas()


@case("empty_to_arrow")
def _empty_arrow() -> Any:
    arrow_on()
    return spark.sql("SELECT id, CAST(id AS STRING) AS s FROM RANGE(10) WHERE id < 0").toArrow()


@case("many_partitions_and_batches")
def _partitions() -> Any:
    arrow_on()
    conf(maxRecordsPerBatch="97")
    # partitions finish in any order: the batch order indices put them back
    df = spark.range(0, 20000, 1, 37).withColumn("sq", F.col("id") * F.col("id"))
    return df.repartition(23, "id").sortWithinPartitions("id").toPandas()


@case("self_destruct")
def _self_destruct() -> Any:
    arrow_on()
    conf(pyspark_selfDestruct_enabled="true", maxRecordsPerBatch="1000")
    return spark.range(0, 5000, 1, 3).selectExpr("id", "CAST(id AS STRING) AS s").toPandas()


@case("large_var_types_to_arrow")
def _large() -> Any:
    arrow_on()
    conf(useLargeVarTypes="true")
    return spark.range(300).selectExpr("id", "CONCAT('v', id) AS s").toArrow()


@case("fallback_enabled")
def _fallback() -> Any:
    arrow_on()
    conf(pyspark_fallback_enabled="true")
    # a type PySpark's Arrow conversion refuses: toPandas falls back to collect()
    return spark.sql("SELECT id, INTERVAL '1-2' YEAR TO MONTH AS ym FROM RANGE(3)").toPandas()


@case("fallback_disabled_error")
def _no_fallback() -> Any:
    arrow_on()
    return spark.sql("SELECT id, INTERVAL '1-2' YEAR TO MONTH AS ym FROM RANGE(3)").toPandas()


@case("error_in_job")
def _error() -> Any:
    arrow_on()
    spark.conf.set("spark.sql.ansi.enabled", "true")
    try:  # a division by zero in the executors
        return spark.range(0, 100, 1, 4).selectExpr("id", "10 DIV (id - 57) AS q").toPandas()
    finally:
        spark.conf.unset("spark.sql.ansi.enabled")


@case("python_udf_error")
def _udf_error() -> Any:
    arrow_on()

    def boom(x: int) -> int:
        if x == 42:
            raise ValueError("boom at 42")
        return x
    f = F.udf(boom, "long")
    return spark.range(0, 100, 1, 2).select(f("id").alias("v")).toPandas()


@case("observe_metrics")
def _observe() -> Any:
    from pyspark.sql import Observation
    arrow_on()
    obs = Observation("dp")
    pdf = spark.range(0, 1000, 1, 3).observe(obs, F.count(F.lit(1)).alias("n"),
                                             F.max("id").alias("mx")).toPandas()
    return {"rows": len(pdf), "metrics": obs.get}  # needs the SQL execution's listener


groups = iter(range(1000))


@case("job_group")
def _job_group() -> Any:
    arrow_on()
    group = f"dp-group-{next(groups)}"  # one per run
    sc.setJobGroup(group, "dp description")
    try:
        spark.range(0, 100, 1, 2).toPandas()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    return len(sc.statusTracker().getJobIdsForGroup(group))  # the job ran in the group


results: dict[str, Any] = {"writer_found": spark_dataplane.writer(sc._gateway) is not None}
for name, fn in cases.items():
    mem = run("in_memory", fn)
    sto = run("stock", fn)
    entry = {
        "equal": (mem["error"] is None and sto["error"] is None
                  and same(mem["value"], sto["value"])),
        "in_memory": {"value": describe(mem["value"]), "error": mem["error"],
                      "calls": mem["calls"]},
        "stock": {"value": describe(sto["value"]), "error": sto["error"],
                  "calls": sto["calls"]},
    }
    if isinstance(mem["value"], dict) and mem["error"] is None:  # observe: plain values
        entry["in_memory"]["value"] = mem["value"]
        entry["stock"]["value"] = sto["value"]
    results[name] = entry
print("RESULT " + json.dumps(results, default=str), flush=True)
spark.stop()
