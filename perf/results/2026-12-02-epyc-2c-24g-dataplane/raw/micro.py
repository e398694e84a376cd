import os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))  # perf/
import py4jni.pyspark; py4jni.pyspark.enable()
from pyspark.sql import SparkSession
from pyspark.sql.pandas.conversion import PandasConversionMixin as M
from py4jni.frameworks import spark_dataplane as dp
import dataplane_ab as ab
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.driver.memory", "6g").getOrCreate())
spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
n = int(sys.argv[1]); reps = int(sys.argv[2])
df = spark.range(n).selectExpr("id", "id * 2 AS x")
jvm = spark._jvm
inst = M._collect_as_arrow; stock = inst._py4jni_stock
real_cls = None
def adopt_variant(self, *a):
    w = dp.writer(self._sc._gateway)
    orig = jvm.org.py4jni.ByteChunks
    return dp.collect_as_arrow(self, w, *a)
variants = {"stock": stock, "mem": ab.collect_as_arrow_mem, "py4jni": inst}
import os
if os.environ.get("ADOPT"):
    src = open(dp.__file__).read()
res = {k: [] for k in variants}
for i in range(reps + 1):
    for k, f in variants.items():
        M._collect_as_arrow = f
        c = time.process_time(); t = time.perf_counter()
        assert len(df.toPandas()) == n
        if i: res[k].append((time.perf_counter() - t, time.process_time() - c))
for k, v in res.items():
    w = sorted(x[0] for x in v); c = sorted(x[1] for x in v)
    print(k, "wall min %.3f med %.3f  cpu min %.3f med %.3f" % (w[0], w[len(w)//2], c[0], c[len(c)//2]), file=sys.stderr)
