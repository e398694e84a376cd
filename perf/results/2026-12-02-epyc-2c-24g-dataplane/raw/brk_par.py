import sys, time, os, io
import py4jni.pyspark; py4jni.pyspark.enable()
from pyspark.sql import SparkSession
from pyspark.core.context import SparkContext
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.driver.memory", "6g").getOrCreate())
sc = spark.sparkContext
n = int(sys.argv[1]); values = list(range(n))
real = SparkContext._serialize_to_jvm
ph = {}
def ser(self, data, serializer, reader_func, server_func):
    ph["before_ser"] = time.perf_counter() - T[0]
    t = time.perf_counter()
    buf = io.BytesIO(); serializer.dump_stream(data, buf); ph["pickle_mem"] = time.perf_counter() - t
    t = time.perf_counter()
    def rf(path):
        ph["pickle_write"] = time.perf_counter() - t
        ph["bytes"] = os.path.getsize(path)
        t2 = time.perf_counter()
        try: return reader_func(path)
        finally: ph["jvm_read"] = time.perf_counter() - t2
    r = real(self, data, serializer, rf, server_func)
    ph["after_t"] = time.perf_counter()
    return r
SparkContext._serialize_to_jvm = ser
rs = []
for i in range(7):
    T = [time.perf_counter()]
    r = sc.parallelize(values, 2)
    t1 = time.perf_counter()
    r.count(); ph["count"] = time.perf_counter() - t1
    ph["total"] = time.perf_counter() - T[0] - ph["pickle_mem"]
    rs.append({k: round(v, 3) for k, v in ph.items() if k != "after_t"})
for r in rs: print(r, file=sys.stderr)
