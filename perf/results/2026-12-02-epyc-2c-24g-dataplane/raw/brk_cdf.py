import sys, time, os, io
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))  # perf/
import py4jni.pyspark; py4jni.pyspark.enable()
import pandas as pd
from pyspark.sql import SparkSession
from pyspark.core.context import SparkContext
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.driver.memory", "6g").getOrCreate())
n = int(sys.argv[1])
pdf = pd.DataFrame({"id": range(n), "x": range(0, 2 * n, 2)})
spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
real = SparkContext._serialize_to_jvm
ph = {}
def ser(self, data, serializer, reader_func, server_func):
    ph["before_ser"] = time.perf_counter() - T[0]
    t = time.perf_counter()
    def rf(path):
        ph["write"] = time.perf_counter() - t
        t2 = time.perf_counter()
        try: return reader_func(path)
        finally: ph["jvm_read"] = time.perf_counter() - t2
    r = real(self, data, serializer, rf, server_func)
    ph["after_t"] = time.perf_counter()
    return r
SparkContext._serialize_to_jvm = ser
rs = []
for i in range(6):
    T = [time.perf_counter()]
    d = spark.createDataFrame(pdf)
    t1 = time.perf_counter(); ph["toDataFrame"] = t1 - ph["after_t"]
    d.count(); ph["count"] = time.perf_counter() - t1
    ph["total"] = time.perf_counter() - T[0]
    rs.append({k: round(v, 3) for k, v in ph.items() if k != "after_t"})
for r in rs: print(r, file=sys.stderr)
