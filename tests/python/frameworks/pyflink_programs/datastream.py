"""PyFlink program 3: the DataStream API, from_collection().map().execute_and_collect()
(the map runs in Flink's Python workers)."""
import os

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.java_gateway import get_gateway


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    stream = env.from_collection([(1, "a"), (2, "bb"), (3, "ccc")],
                                 type_info=Types.TUPLE([Types.INT(), Types.STRING()]))
    mapped = stream.map(lambda e: (e[0] * 10, e[1] * 2),
                        output_type=Types.TUPLE([Types.INT(), Types.STRING()]))
    with mapped.execute_and_collect() as results:
        print("datastream", sorted(tuple(r) for r in results))
    pid = get_gateway().jvm.java.lang.ProcessHandle.current().pid()
    print("jvm-in-this-process", pid == os.getpid())


if __name__ == "__main__":
    main()
