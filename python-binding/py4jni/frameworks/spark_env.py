"""The environment spark-submit's scripts give Spark's driver JVM, for a driver JVM
embedded in this process.

Spark's ``spark-submit`` script (in ``$SPARK_HOME``'s ``bin``) exports its variables
(``PYTHONHASHSEED=0``) and execs ``spark-class``, which sources ``load-spark-env.sh``
(``SPARK_CONF_DIR``; the ``spark-env.sh`` of that folder, every variable it sets exported;
``SPARK_SCALA_VERSION``, ``SPARK_ENV_LOADED``), unsets ``YARN_CONF_DIR`` and
``HADOOP_CONF_DIR`` under ``SPARK_TESTING``, and runs the launcher's command. Spark
code that launches JVMs of its own (``WorkerCommandBuilder`` for a local-cluster's or a
standalone worker's executors) reads that environment. ``submit_environment()`` runs
those scripts themselves in ``bash`` (``exec`` of spark-submit replaced by a function
that does what spark-class does before starting the launcher JVM, then prints the
environment), so spark-env.sh and a later Spark's scripts are honoured as they are, not
re-implemented. ``for_jvm_start()`` puts that environment in place for the JVM's start
and gives back a function that restores this process's own environment once the JVM
has taken its copy (``System.getenv()`` is a snapshot), as a stock driver's Python
process keeps its environment too.
"""
from __future__ import annotations

import os
import subprocess
from typing import Callable

__all__ = ["submit_environment", "for_jvm_start", "PYSPARK_LAUNCH_ENV"]

# What PySpark's own launch_gateway adds to the environment of the spark-submit it
# starts (its launch_gateway in pyspark.java_gateway), besides the py4j connection file.
PYSPARK_LAUNCH_ENV = {"SPARK_CONNECT_MODE": "0"}

# spark-class's steps between sourcing load-spark-env.sh and running the launcher that
# touch the environment; then the environment, NUL-separated.
_SCRIPT = r'''
exec() {
  . "$SPARK_HOME/bin/"load-spark-env.sh >/dev/null
  if [ -n "$SPARK_TESTING" ]; then unset YARN_CONF_DIR; unset HADOOP_CONF_DIR; fi
  command env -0 >&3
  command exit 0
}
. "$SPARK_HOME/bin/spark-submit" 3>&1 >/dev/null
'''


def submit_environment(spark_home: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment spark-submit's scripts give the driver JVM when started from
    ``base`` (default: this process's environment) with ``SPARK_HOME=spark_home``.
    Raises OSError when bash or Spark's scripts cannot run."""
    env = dict(os.environ if base is None else base)
    env.update(PYSPARK_LAUNCH_ENV)
    env["SPARK_HOME"] = spark_home
    submit = os.path.join(spark_home, "bin", "spark-submit")
    if not os.path.isfile(submit):
        raise OSError(f"no {submit}")
    # stdin a pipe, as PySpark's Popen of spark-submit gives it (load-spark-env.sh
    # looks at it)
    r = subprocess.run(["bash", "-c", _SCRIPT], env=env, input=b"", capture_output=True,
                       timeout=60)
    if r.returncode != 0:
        raise OSError(f"Spark's scripts failed (exit {r.returncode}): "
                      + r.stderr.decode(errors="replace")[-2000:])
    out: dict[str, str] = {}
    for entry in r.stdout.split(b"\0"):
        key, eq, value = entry.partition(b"=")
        if eq and key:
            out[os.fsdecode(key)] = os.fsdecode(value)
    for name in ("SHLVL", "_", "PWD", "OLDPWD"):  # bash's own, not spark-submit's
        if name in env:
            out[name] = env[name]
        else:
            out.pop(name, None)
    return out


def for_jvm_start(spark_home: str) -> Callable[[], None]:
    """Makes this process's environment spark-submit's (for the driver JVM about to
    start here) and returns the function that restores the previous one; call it once
    the JVM has read its environment (e.g. after one ``System.getenv()``)."""
    before = dict(os.environ)
    wanted = submit_environment(spark_home, before)
    for name in [n for n in os.environ if n not in wanted]:
        del os.environ[name]
    os.environ.update(wanted)

    def restore() -> None:
        for name in [n for n in os.environ if n not in before]:
            del os.environ[name]
        for name, value in before.items():
            if os.environ.get(name) != value:
                os.environ[name] = value
    return restore
