"""PyFlink program 1: Table API and SQL with GROUP BY, in batch and streaming mode, and
to_pandas / from_pandas (tests/python/frameworks/test_pyflink.py runs it stock and on py4jni)."""
import os

import pandas as pd
from pyflink.java_gateway import get_gateway
from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "1")
    orders = t_env.from_elements(
        [(1, "apple", 3), (2, "pear", 5), (3, "apple", 4), (4, "fig", 1), (5, "pear", 2)],
        ["id", "fruit", "qty"])
    t_env.create_temporary_view("orders", orders)
    rows = t_env.execute_sql(
        "SELECT fruit, COUNT(*) AS n, SUM(qty) AS total FROM orders GROUP BY fruit").collect()
    with rows:
        print("sql-group-by", sorted(tuple(r) for r in rows))
    agg = orders.group_by(col("fruit")).select(col("fruit"), col("qty").max.alias("most"))
    print("table-api", sorted(tuple(r) for r in agg.execute().collect()))
    frame = orders.filter(col("qty") > 2).to_pandas().sort_values("id")
    print("to-pandas", frame.to_dict("list"))
    back = t_env.from_pandas(pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}))
    print("from-pandas", sorted(tuple(r) for r in back.execute().collect()))

    s_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    s_env.get_config().set("parallelism.default", "1")
    s_env.create_temporary_view("orders", s_env.from_elements(
        [(1, "apple", 3), (2, "pear", 5), (3, "apple", 4)], ["id", "fruit", "qty"]))
    result = s_env.execute_sql("SELECT fruit, SUM(qty) FROM orders GROUP BY fruit")
    changes = sorted((str(r.get_row_kind()), *tuple(r)) for r in result.collect())
    print("streaming", changes)
    pid = get_gateway().jvm.java.lang.ProcessHandle.current().pid()
    print("jvm-in-this-process", pid == os.getpid())


if __name__ == "__main__":
    main()
