"""One PySpark session for tests/python/frameworks/test_pyspark_packages.py, run in a child process.

``python pyspark_packages_driver.py py4jni|stock TMPDIR FIXTURES``: the driver's jars
given every way spark-submit takes them. ``$PYSPARK_SUBMIT_ARGS`` (set by the test) asks
for ``--packages`` of the fixture's Maven repository, resolved by Spark's Ivy through
``spark.jars.ivySettings`` with ``spark.jars.ivy`` under TMPDIR; ``spark.jars`` holds a
``file://`` URL; then ``ADD JAR`` and ``SparkContext.addJar`` in the running session,
each after a lookup of its class that failed. With ``py4jni`` the driver JVM is embedded
(``py4jni.pyspark.enable()``), with ``stock`` it is spark-submit's. The last stdout line
is ``RESULT <json>``: each step's result, or ``{"error": ...}`` when it raised.
"""
from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any, Callable

MODE, TMP, FIXTURES = sys.argv[1], sys.argv[2], sys.argv[3]
from driver_steps import results, step  # noqa: E402

if MODE == "py4jni":
    import py4jni.pyspark
    py4jni.pyspark.enable()

from pyspark.sql import SparkSession  # noqa: E402

spark = (SparkSession.builder.master("local[1]")
         .config("spark.ui.enabled", "false")
         .config("spark.local.dir", TMP)
         .config("spark.driver.extraJavaOptions",
                 f"-Djava.io.tmpdir={TMP} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
         .config("spark.jars", "file://" + os.path.join(FIXTURES, "url.jar"))
         .config("spark.jars.ivy", os.path.join(TMP, "ivy"))
         .config("spark.jars.ivySettings", os.path.join(FIXTURES, "ivysettings.xml"))
         .getOrCreate())
sc = spark.sparkContext
jvm = sc._jvm
fixture = jvm.org.py4jni.fixture


def names(comma_list: str) -> list[str]:
    return sorted(os.path.basename(p) for p in comma_list.split(",") if p)


def lookup(call: Callable[[], Any]) -> Any:
    """The call's result, or the name of the error it raised (a class not found yet)."""
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - the error's type is the result
        return type(exc).__name__


@step("package")
def _package() -> Any:
    return fixture.pkg.Greeter.greet("py")


@step("package_in_a_job")
def _package_in_job() -> Any:
    return spark.sql("SELECT reflect('org.py4jni.fixture.pkg.Greeter', 'greet', 'job')") \
        .collect()[0][0]


@step("url_jar")
def _url_jar() -> Any:
    return fixture.url.Shout.shout("url")


@step("other_thread")
def _other_thread() -> Any:
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(fixture.pkg.Greeter.greet("thread")))
    t.start()
    t.join()
    return out


@step("driver_loader")
def _driver_loader() -> Any:
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    return {"class": loader.getClass().getName(),
            "jars": sorted(os.path.basename(u.getPath()) for u in loader.getURLs())}


@step("conf")
def _conf() -> Any:
    conf = sc.getConf()
    return {"spark.jars": names(conf.get("spark.jars", "")),
            "spark.submit.pyFiles": names(conf.get("spark.submit.pyFiles", "")),
            "spark.jars.packages": conf.get("spark.jars.packages", "")}


@step("ivy_cache")
def _ivy_cache() -> Any:
    return sorted(os.listdir(os.path.join(TMP, "ivy", "jars")))


@step("add_jar")
def _add_jar() -> Any:
    before = lookup(lambda: fixture.added.Late.late())
    spark.sql("ADD JAR " + os.path.join(FIXTURES, "late.jar"))
    return {"before": before, "after": lookup(lambda: fixture.added.Late.late()),
            "in_a_job": spark.sql("SELECT reflect('org.py4jni.fixture.added.Late', 'late')")
            .collect()[0][0]}


@step("context_add_jar")
def _context_add_jar() -> Any:
    before = lookup(lambda: fixture.context.Added.added())
    sc._jsc.addJar(os.path.join(FIXTURES, "context.jar"))
    return {"before": before, "after": lookup(lambda: fixture.context.Added.added()),
            "listed": names(sc._jsc.sc().listJars().mkString(","))}


spark.stop()
print("RESULT " + json.dumps(results, sort_keys=True, default=str))
