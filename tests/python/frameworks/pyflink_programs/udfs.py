"""PyFlink program 2: Python UDFs (Flink's Python workers run them) in SQL and in
select, a UDTF, CREATE FUNCTION ... LANGUAGE PYTHON (Java asks PythonFunctionFactory),
a Java error PyFlink leaves as it is and one its exception handler converts."""
import os

from pyflink.java_gateway import get_gateway
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.catalog import ObjectPath
from pyflink.table.expressions import col
from pyflink.table.udf import udf, udtf


@udf(result_type=DataTypes.BIGINT())
def plus_one(x):
    return x + 1


@udf(result_type=DataTypes.STRING())
def shout(s):
    return s.upper() + "!"


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def split_words(line):
    for word in line.split():
        yield word, len(word)


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.create_temporary_function("plus_one", plus_one)
    t_env.create_temporary_function("split_words", split_words)
    t = t_env.from_elements([(1, "hello world"), (2, "py flink"), (41, "x")], ["id", "line"])
    t_env.create_temporary_view("t", t)
    rows = t_env.execute_sql("SELECT id, plus_one(id) FROM t").collect()
    with rows:
        print("udf-in-sql", sorted(tuple(r) for r in rows))
    picked = t.select(col("id"), shout(col("line")).alias("loud"))
    print("udf-in-select", sorted(tuple(r) for r in picked.execute().collect()))
    rows = t_env.execute_sql("SELECT id, word, size FROM t, "
                             "LATERAL TABLE(split_words(line)) AS w(word, size)").collect()
    with rows:
        print("udtf", sorted(tuple(r) for r in rows))
    t_env.execute_sql(f"CREATE TEMPORARY FUNCTION shout_sql AS '{__name__}.shout' "
                      "LANGUAGE PYTHON")
    rows = t_env.execute_sql("SELECT shout_sql(line) FROM t WHERE id = 2").collect()
    with rows:
        print("create-function", [tuple(r) for r in rows])
    try:
        t_env.execute_sql("SELECT * FROM no_such_table")
    except Exception as exc:  # a ValidationException: PyFlink's handler leaves it
        print("error", type(exc).__name__,
              "no_such_table" in str(exc))
    catalog = t_env.get_catalog(t_env.get_current_catalog())
    try:
        catalog.get_table(ObjectPath("default_database", "no_such_table"))
    except Exception as exc:  # converted by install_exception_handler's hook
        print("converted", type(exc).__module__, type(exc).__name__)
    pid = get_gateway().jvm.java.lang.ProcessHandle.current().pid()
    print("jvm-in-this-process", pid == os.getpid())


if __name__ == "__main__":
    main()
