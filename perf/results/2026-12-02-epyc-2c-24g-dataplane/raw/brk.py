import sys, time, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))  # perf/
import py4jni.pyspark; py4jni.pyspark.enable()
import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.util import _load_from_socket
from pyspark.sql.pandas.serializers import ArrowCollectSerializer
from dataplane_ab import scala_object
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.driver.memory", "6g").getOrCreate())
n = int(sys.argv[1])
df = spark.range(n).selectExpr("id", "id * 2 AS x")
jvm = spark._jvm; conf = spark._jconf; tz = conf.sessionLocalTimeZone()
AC = scala_object(jvm, "org.apache.spark.sql.execution.arrow.ArrowConverters")
res = {"spark": [], "mem": []}
for i in range(8):
    t0 = time.perf_counter()
    info = df._jdf.collectAsArrowToPython()
    t1 = time.perf_counter()
    with _load_from_socket((info[0], info[1]), ArrowCollectSerializer()) as s:
        b = list(s)
    t2 = time.perf_counter()
    tb = pa.Table.from_batches(b).to_pandas(); t3 = time.perf_counter()
    res["spark"].append((t1-t0, t2-t1, t3-t2))
    t0 = time.perf_counter()
    arr = df._jdf.toArrowBatchRdd(conf.arrowMaxRecordsPerBatch(), tz, True, False).collect()
    t1 = time.perf_counter()
    raw = list(arr)
    t1b = time.perf_counter()
    schema = pa.ipc.open_stream(AC.createEmptyArrowBatch(df._jdf.schema(), tz, True, False)).schema
    b = [pa.ipc.read_record_batch(pa.py_buffer(x), schema) for x in raw]
    t2 = time.perf_counter()
    tb = pa.Table.from_batches(b).to_pandas(); t3 = time.perf_counter()
    res["mem"].append((t1-t0, t1b-t1, t2-t1b, t3-t2))
for k, v in res.items():
    print(k, "min", [round(min(x[j] for x in v[1:]), 3) for j in range(len(v[0]))],
          "med", [round(sorted(x[j] for x in v[1:])[3], 3) for j in range(len(v[0]))], file=sys.stderr)
print("batches", len(raw), "bytes", sum(len(x) for x in raw), file=sys.stderr)
