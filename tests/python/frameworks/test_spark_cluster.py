"""PySpark's in-process driver (py4jni.pyspark) with spark-submit's environment, against
Spark clusters: ``local-cluster[2,1,1024]`` (a Master and Workers inside the driver JVM,
executors as processes) and a standalone Master and Worker on 127.0.0.1 started from
pyspark's own ``bin/spark-class``.

Every driver runs in a child process (tests/python/frameworks/spark_cluster_driver.py), one Spark
JVM or cluster at a time. The in-process driver's JVM must see the environment and
system properties a stock driver's sees (spark-submit's scripts, read by
py4jni.frameworks.spark_env), but for the differences listed in ENV_ONLY_STOCK and
PROPS_DIFFER; on both clusters the job's results must equal stock's, the Python workers
must run under the executors' JVMs, and the driver must exit with status 0.
Skipped when pyspark is not installed.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed "
                    "(pip install -r tests/requirements-pyspark.txt)")

pytestmark = pytest.mark.inproc_only("PySpark's driver JVM embedded in-process")

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spark_cluster_driver.py")
LOOPBACK = "127.0.0.1"
EXECUTOR = "org.apache.spark.executor.CoarseGrainedExecutorBackend"

# Only in a stock driver's environment: the file py4j's GatewayServer writes its port to
# (PySpark's launch_gateway).
ENV_ONLY_STOCK = {"_PYSPARK_DRIVER_CONN_INFO_PATH"}
# bash's own variables (spark-submit's scripts run in bash, which exports them to the
# java it execs; the in-process JVM has the Python process's, if any).
ENV_SHELL = {"SHLVL", "_", "OLDPWD", "PWD"}
# System properties that differ by nature: the java launcher's (command line, launcher
# name), the class path (py4jni's helper jar first; stock: the launcher's expansion of
# jars/*), the properties SparkSubmit sets from its command line, and per-run values.
PROPS_DIFFER = {"sun.java.command", "sun.java.launcher", "java.class.path", "jdk.debug",
                "sun.rt.java.command", "spark.driver.port", "spark.app.id",
                "spark.app.startTime", "spark.app.submitTime", "spark.driver.host",
                "spark.executor.id", "spark.sql.warehouse.dir", "spark.submit.pyFiles",
                "java.io.tmpdir", "user.dir", "sun.java.launcher.diag"}
PROP_PREFIXES_DIFFER = ("jdk.internal.", "spark.driver.extraJavaOptions")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    env["PYSPARK_PYTHON"] = sys.executable
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    env["SPARK_LOCAL_IP"] = LOOPBACK
    return env


def _drive(mode: str, master: str, what: str = "job") -> tuple[dict[str, Any], float]:
    """Runs the driver to its end: its RESULT and its wall time; asserts exit status 0."""
    t = time.monotonic()
    r = subprocess.run([sys.executable, DRIVER, mode, master, what], capture_output=True,
                       text=True, env=_env(), timeout=900)
    wall = time.monotonic() - t
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    assert r.returncode == 0 and lines, \
        f"{mode} driver on {master}: rc={r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-6000:]}"
    return json.loads(lines[-1][len("RESULT "):]), wall


def _executors_running() -> list[int]:
    """Pids of executor JVMs (of any cluster) running now."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if EXECUTOR.encode() in fh.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def _check_job(res: dict[str, Any]) -> None:
    assert res["udf"] == [3 * i for i in range(20)]
    assert res["reduce"] == sum(i * i for i in range(1000))
    assert res["broadcast"] == ["zero", "one", "two"] * 3
    assert res["collect"] == [[i, i * i] for i in range(5)]
    # every Python worker ran under an executor JVM, in a process other than the driver
    assert res["workers"] == [[EXECUTOR, True]], res["workers"]


def test_spark_env_sh_is_read_by_sparks_own_scripts(tmp_path: Any) -> None:
    """submit_environment() runs Spark's scripts: a spark-env.sh in SPARK_CONF_DIR is
    sourced with its variables exported (as load-spark-env.sh does), unexported shell
    variables of it too, and the caller's environment is not changed."""
    from pyspark.find_spark_home import _find_spark_home

    from py4jni.frameworks import spark_env
    (tmp_path / "spark-env.sh").write_text("FROM_SPARK_ENV=yes\nSPARK_SUBMIT_OPTS=-Da.b=c\n")
    base = {**_env(), "SPARK_CONF_DIR": str(tmp_path)}
    before = dict(os.environ)
    env = spark_env.submit_environment(_find_spark_home(), base)
    assert os.environ == before
    assert env["FROM_SPARK_ENV"] == "yes" and env["SPARK_SUBMIT_OPTS"] == "-Da.b=c"
    assert env["SPARK_CONF_DIR"] == str(tmp_path) and env["SPARK_ENV_LOADED"] == "1"
    assert env["PYTHONHASHSEED"] == "0" and env["SPARK_SCALA_VERSION"]


def test_driver_jvm_has_spark_submits_environment_and_properties() -> None:
    stock, _ = _drive("stock", "local[1]", "env")
    mine, _ = _drive("py4jni", "local[1]", "env")
    env_s, env_m = stock["env"], mine["env"]
    # what spark-submit's scripts export is there (load-spark-env.sh, spark-submit)
    for name in ("SPARK_HOME", "SPARK_CONF_DIR", "SPARK_SCALA_VERSION", "SPARK_ENV_LOADED",
                 "PYTHONHASHSEED"):
        assert env_m.get(name) == env_s.get(name) is not None, name

    def same(key: str) -> bool:
        return key not in PROPS_DIFFER and not key.startswith(PROP_PREFIXES_DIFFER)
    props_s = {k: v for k, v in stock["props"].items() if same(k)}
    props_m = {k: v for k, v in mine["props"].items() if same(k)}
    differences = {
        "env only stock": sorted(k for k in env_s if k not in env_m and k not in ENV_SHELL),
        "env only in-process": sorted(k for k in env_m if k not in env_s
                                      and k not in ENV_SHELL),
        "env values": {k: (env_s[k], env_m[k]) for k in env_s.keys() & env_m.keys()
                       if env_s[k] != env_m[k] and k not in ENV_SHELL},
        "props only stock": sorted(props_s.keys() - props_m.keys()),
        "props only in-process": sorted(props_m.keys() - props_s.keys()),
        "props values": {k: (props_s[k], props_m[k]) for k in props_s.keys() & props_m.keys()
                         if props_s[k] != props_m[k]},
    }
    assert differences == {"env only stock": sorted(ENV_ONLY_STOCK & env_s.keys()),
                           "env only in-process": [], "env values": {},
                           "props only stock": [], "props only in-process": [],
                           "props values": {}}
    # the Python process keeps its own environment (as a stock driver's Python does)
    assert "SPARK_ENV_LOADED" not in mine["python_env"]
    assert mine["python_env"].get("PYTHONHASHSEED") == os.environ.get("PYTHONHASHSEED")


def test_local_cluster() -> None:
    """local-cluster[2,1,1024]: the Master and two Workers in the driver JVM start their
    executors with WorkerCommandBuilder, which needs spark-submit's environment."""
    res, wall = _drive("py4jni", "local-cluster[2,1,1024]")
    _check_job(res)
    print(f"local-cluster in-process driver: {wall:.1f} s")
    deadline = time.monotonic() + 60  # executors end once their driver has gone
    while _executors_running() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _executors_running() == []


class _Standalone:
    """A standalone Master and Worker on 127.0.0.1, from pyspark's bin/spark-class."""

    def __init__(self, tmp: str) -> None:
        from pyspark.find_spark_home import _find_spark_home
        self.home = _find_spark_home()
        self.tmp = tmp
        self.procs: list[subprocess.Popen[bytes]] = []

    def _start(self, name: str, *args: str) -> str:
        log = os.path.join(self.tmp, f"{name}.log")
        env = {**_env(), "SPARK_DAEMON_MEMORY": "256m", "SPARK_LOG_DIR": self.tmp,
               "SPARK_WORKER_DIR": os.path.join(self.tmp, "work")}
        with open(log, "wb") as fh:
            self.procs.append(subprocess.Popen(
                [os.path.join(self.home, "bin", "spark-class"), *args], stdout=fh,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                start_new_session=True))
        return log

    def _wait_for(self, log: str, pattern: str, timeout: float = 180) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(log, errors="replace") as fh:
                found = re.search(pattern, fh.read())
            if found:
                return found
            if any(p.poll() is not None for p in self.procs):
                break
            time.sleep(0.5)
        with open(log, errors="replace") as fh:
            pytest.skip(f"the standalone cluster did not start: {fh.read()[-3000:]}")

    def start(self) -> str:
        log = self._start("master", "org.apache.spark.deploy.master.Master",
                          "--host", LOOPBACK, "--port", "0", "--webui-port", "0")
        url = self._wait_for(log, r"Starting Spark master at (spark://\S+:\d+)").group(1)
        wlog = self._start("worker", "org.apache.spark.deploy.worker.Worker",
                           "--host", LOOPBACK, "--cores", "1", "--memory", "1g",
                           "--webui-port", "0", url)
        self._wait_for(wlog, r"Successfully registered with master")
        return url

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)  # the session start_new_session made
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()


def test_standalone_master_and_worker(tmp_path: Any) -> None:
    cluster = _Standalone(str(tmp_path))
    try:
        url = cluster.start()
        mine, wall_m = _drive("py4jni", url)
        stock, wall_s = _drive("stock", url)
    finally:
        cluster.stop()
    _check_job(mine)
    assert mine == stock
    print(f"standalone: in-process driver {wall_m:.1f} s, stock driver {wall_s:.1f} s")
