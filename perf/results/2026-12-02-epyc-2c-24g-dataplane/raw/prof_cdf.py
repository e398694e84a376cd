import sys, time, cProfile, pstats
import py4jni.pyspark; py4jni.pyspark.enable()
import pandas as pd
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.driver.memory", "6g").getOrCreate())
n = int(sys.argv[1])
pdf = pd.DataFrame({"id": range(n), "x": range(0, 2 * n, 2)})
spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
for i in range(2):
    t = time.perf_counter(); d = spark.createDataFrame(pdf); t1 = time.perf_counter(); c = d.count(); t2 = time.perf_counter()
    print("create", t1 - t, "count", t2 - t1, file=sys.stderr)
pr = cProfile.Profile(); pr.enable(); d = spark.createDataFrame(pdf); pr.disable()
pstats.Stats(pr).sort_stats("cumulative").print_stats(25)
