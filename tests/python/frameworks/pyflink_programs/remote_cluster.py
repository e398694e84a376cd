"""PyFlink program run against a standalone Flink cluster (remote execution: the
cluster's REST port in FLINK_REST_PORT): a Table API GROUP BY job and a Python UDF job,
each collected. The client's JVM is PyFlink's own (in this process under py4jni); the
UDF runs in a Python worker the cluster's TaskManager starts: PyFlink's
``_python_worker_execution_mode=process`` (as PyFlink's own test cases set it; without
it a client that was made for the local target may serve the UDF from a loopback server
in this process)."""
import glob
import os
import sys

os.environ["_python_worker_execution_mode"] = "process"

import pyflink  # noqa: E402
from pyflink.common import Configuration  # noqa: E402
from pyflink.java_gateway import get_gateway  # noqa: E402
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment  # noqa: E402
from pyflink.table.expressions import col  # noqa: E402
from pyflink.table.udf import udf  # noqa: E402

TASK_MANAGER = "org.apache.flink.runtime.taskexecutor.TaskManagerRunner"


@udf(result_type=DataTypes.BIGINT())
def times_three(x):
    return x * 3


@udf(result_type=DataTypes.STRING())
def worker_parent(x):
    """Where this Python worker runs: "task-manager" when a TaskManager is among its
    ancestors (its parent is PyFlink's pyflink-udf-runner.sh)."""
    pid = os.getppid()
    while pid > 1:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            if TASK_MANAGER.encode() in fh.read():
                return "task-manager"
        with open(f"/proc/{pid}/stat") as fh:
            pid = int(fh.read().rsplit(")", 1)[1].split()[1])
    return "elsewhere"


def main():
    conf = Configuration()
    conf.set_string("execution.target", "remote")
    conf.set_string("rest.address", "127.0.0.1")
    conf.set_string("rest.port", os.environ["FLINK_REST_PORT"])
    conf.set_string("parallelism.default", "1")
    # the cluster runs the UDF with this venv's Python and Flink's Python operators from
    # the jar the wheel ships in opt/ (its lib/ holds none)
    conf.set_string("python.executable", sys.executable)
    home = os.path.dirname(os.path.abspath(pyflink.__file__))
    conf.set_string("pipeline.jars", "file://" + glob.glob(
        os.path.join(home, "opt", "flink-python*.jar"))[0])
    t_env = TableEnvironment.create(
        EnvironmentSettings.new_instance().in_batch_mode().with_configuration(conf).build())
    pid = get_gateway().jvm.java.lang.ProcessHandle.current().pid()
    print("jvm-in-this-process", pid == os.getpid())
    t = t_env.from_elements([(i, f"k{i % 3}") for i in range(30)], ["v", "k"])
    rows = t.group_by(col("k")).select(col("k"), col("v").sum.alias("total"),
                                       col("v").count.alias("n")).execute().collect()
    with rows:
        print("table-api", sorted(tuple(r) for r in rows))
    rows = t.select(col("v"), times_three(col("v")), worker_parent(col("v"))) \
        .execute().collect()
    with rows:
        print("python-udf", sorted(tuple(r) for r in rows))


if __name__ == "__main__":
    main()
