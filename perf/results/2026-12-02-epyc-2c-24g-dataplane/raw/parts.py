import sys, time
import py4jni.pyspark; py4jni.pyspark.enable()
from pyspark.sql import SparkSession
from py4jni.frameworks import spark_dataplane as dp
from pyspark.sql.pandas.serializers import ArrowCollectSerializer
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.driver.memory", "6g").getOrCreate())
n = int(sys.argv[1]); adopt = sys.argv[2] == "1"
df = spark.range(n).selectExpr("id", "id * 2 AS x")
jvm = spark._jvm; w = dp.writer(spark.sparkContext._gateway)
for i in range(6):
    t0 = time.perf_counter()
    out = jvm.org.py4jni.ByteChunks()
    w(df._jdf, "UTC", False, False, out)
    t1 = time.perf_counter()
    ch = out.chunks()
    t2 = time.perf_counter()
    lst = list(ch)
    t3 = time.perf_counter()
    with dp.ChunkReader(lst) as s:
        b = list(ArrowCollectSerializer().load_stream(s))
    t4 = time.perf_counter()
    print("write %.3f chunks() %.3f list %.3f read %.3f  n=%d" % (t1-t0, t2-t1, t3-t2, t4-t3, len(lst)), file=sys.stderr)
