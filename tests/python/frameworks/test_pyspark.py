"""PySpark's driver with the JVM embedded by py4jni (py4jni.pyspark.enable()), and stock
PySpark on py4jni's socket mode.

One in-process session runs every step of tests/python/frameworks/pyspark_driver.py in a child
process (a process holds one JVM, and this pytest process has its own); the same steps
run on stock PySpark (spark-submit + py4j) and on stock PySpark under
``python -m py4jni run --socket`` (spark-submit, its py4j imports answered by py4jni's
pinned-thread socket client) at the same time, and the results must be equal. Skipped
when pyspark is not installed (tests/setup_env.sh installs it from
tests/requirements-pyspark.txt).
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from typing import Any, Iterator

import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed "
                    "(pip install -r tests/requirements-pyspark.txt)")

from conftest import run_python  # noqa: E402
from driver_steps import ok  # noqa: E402

pytestmark = pytest.mark.inproc_only("PySpark's driver JVM embedded in-process")

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyspark_driver.py")
# What the driver leaves in its temp directory on purpose (the streaming step's input).
OWN_FILES = {"stream-in", "stream-ckpt"}
# Spark binds its driver to this address (tests use loopback only; it also spares Spark's
# lookup of the machine's own name, which fails where that name does not resolve).
LOOPBACK = "127.0.0.1"


MODES = ("py4jni", "stock", "socket")


def _start(mode: str, tmp: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    env["PYSPARK_PYTHON"] = sys.executable  # stock: workers need this venv's pyarrow too
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    env.setdefault("SPARK_LOCAL_IP", LOOPBACK)
    # socket: stock PySpark whose py4j is py4jni's socket mode (the py4j switch)
    switch = ["-m", "py4jni", "run", "--socket"] if mode == "socket" else []
    return subprocess.Popen([sys.executable, *switch, DRIVER, mode, tmp],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _finish(mode: str, proc: subprocess.Popen, tmp: str) -> dict[str, Any]:
    out, err = proc.communicate(timeout=600)
    lines = [ln for ln in out.splitlines() if ln.startswith("RESULT ")]
    assert lines, f"driver ({mode}) printed no result, rc={proc.returncode}:\n" \
                  f"{out[-3000:]}\n{err[-5000:]}"
    return {"results": json.loads(lines[-1][len("RESULT "):]), "rc": proc.returncode,
            "stderr": err, "left": sorted(set(os.listdir(tmp)) - OWN_FILES)}


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, dict[str, Any]]]:
    """The three drivers, run concurrently once for the module."""
    with contextlib.ExitStack() as stack:
        tmps = {m: stack.enter_context(tempfile.TemporaryDirectory()) for m in MODES}
        procs = {m: _start(m, tmps[m]) for m in MODES}
        try:
            results = {m: _finish(m, procs[m], tmps[m]) for m in MODES}
        finally:  # a driver that failed must not leave the others running
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
                    p.communicate()
        yield results


@pytest.fixture(scope="module")
def res(runs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The in-process driver's step results."""
    return runs["py4jni"]["results"]


def test_driver_runs_in_process(res):
    assert ok(res, "gateway") == "py4jni.clientserver.ClientServer"
    assert ok(res, "conf")["spark.app.name"] == "pyspark-shell"  # pyspark-shell default
    assert ok(res, "conf")["spark.submit.deployMode"] == "client"
    assert ok(res, "jvm_heap_mb") <= 1024  # spark.driver.memory's default, -Xmx1g


def test_dataframe_sql_rdd(res):
    assert ok(res, "dataframe") == [{"odd": 0, "s": 18.0, "c": 4}, {"odd": 1, "s": 13.5, "c": 3}]
    assert ok(res, "sql") == [["n0", 0], ["n1", 2], ["n2", 4], ["n3", 6]]
    assert ok(res, "rdd") == sum(x * x for x in range(100) if x * x % 3 == 0)


def test_python_udf_runs_in_spark_workers(res):
    assert ok(res, "udf") == ["N0!", "N1!", "N2!"]


def test_accumulator_updates_reach_the_driver(res):
    assert ok(res, "accumulator") == 45


def test_broadcast_and_ml_pipeline(res):
    assert ok(res, "broadcast") == [1, 2, 1]
    assert ok(res, "ml_pipeline") == [[0.0, 1.0], [1.0, 2.0], [0.0, 3.0]]


@pytest.mark.parametrize("mode", ["py4jni", "socket"])
def test_gateway_shutdown_then_calls_raise_py4jerror(runs, mode):
    assert ok(runs[mode]["results"], "gateway_shutdown") == {"after_shutdown": "Py4JError",
                                                              "py4j_error": True}
    # py4j's ClientServer lets the refused reconnection's OSError out (a row of
    # docs/deviations.md)
    assert runs["stock"]["results"]["gateway_shutdown"] == {
        "after_shutdown": "ConnectionRefusedError", "py4j_error": False}


def test_collect_and_to_pandas(res):
    rows = ok(res, "collect")
    assert rows == [[i, f"n{i}", i * 0.5] for i in range(20)]
    expected = {"id": list(range(20)), "name": [f"n{i}" for i in range(20)],
                "half": [i * 0.5 for i in range(20)]}
    assert ok(res, "to_pandas") == expected


def test_to_pandas_with_arrow(res):
    pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    assert ok(res, "to_pandas_arrow") == ok(res, "to_pandas")


def test_input_converters_for_dates_timestamps_intervals(res):
    assert ok(res, "lit_date_timestamp") == ["2024-02-29", "2024-02-29 12:30:05",
                                             "1 day, 0:00:03"]


def test_other_python_threads_and_pinned_local_properties(res):
    assert ok(res, "threads") == {"plain_count": 50, "plain_prop": None,
                                  "inherit_prop": "main", "main_prop_after": "main"}


def test_missing_table_raises_pysparks_analysis_exception(res):
    assert ok(res, "missing_table") == {"type": "AnalysisException", "is_analysis": True,
                                        "condition": "TABLE_OR_VIEW_NOT_FOUND"}


def test_java_errors_go_through_pysparks_handler(res):
    # PySpark's handler converts every Java error it knows, also from raw _jvm calls
    assert res["java_error"]["error"].endswith("captured.NumberFormatException")


def test_foreach_batch_and_streaming_listener_call_python(res):
    assert ok(res, "foreach_batch_and_listener") == {"batches": [[0, 1, 2, 3, 4]],
                                                     "started": True}


def test_stop_and_new_session_in_the_same_process(res):
    assert ok(res, "stop_and_new_session") == {"count": 7, "same_gateway": True}


def test_log_level_is_warn_as_in_the_shell(runs):
    err = runs["py4jni"]["stderr"]
    assert 'Setting default log level to "WARN"' in err
    assert " INFO " not in err


@pytest.mark.parametrize("mode", ["py4jni", "socket"])
def test_results_equal_stock_pyspark(runs, mode):
    mine, stock = runs[mode]["results"], runs["stock"]["results"]
    assert stock["gateway"] == "py4j.clientserver.ClientServer"
    for name in stock:
        if name in ("gateway", "local_dirs", "gateway_shutdown"):  # differ by design
            continue
        a, b = mine[name], stock[name]
        if isinstance(b, dict) and "error" in b:  # same exception class, same message
            a, b = (a.get("error"), a.get("message")), (b.get("error"), b.get("message"))
        elif name == "conf":
            a = {k: v for k, v in a.items() if k != "spark.local.dir"}
            b = {k: v for k, v in b.items() if k != "spark.local.dir"}
        assert a == b, f"step {name}: {mode} {a!r} != stock {b!r}"


def test_stock_pyspark_runs_on_py4jnis_socket_mode(runs):
    res = runs["socket"]["results"]
    assert ok(res, "gateway") == "py4jni.clientserver.ClientServer"
    assert ok(res, "foreach_batch_and_listener") == {"batches": [[0, 1, 2, 3, 4]],
                                                     "started": True}


@pytest.mark.parametrize("mode", MODES)
def test_interpreter_exit_is_clean(runs, mode):
    err = runs[mode]["stderr"]
    assert runs[mode]["rc"] == 0, err[-3000:]
    for sign in ("Traceback (most recent call last)", "Exception ignored", "Fatal Python"):
        assert sign not in err, err[-3000:]  # nothing raised or crashed at exit


@pytest.mark.parametrize("mode", MODES)
def test_exit_removes_sparks_temp_directories(runs, mode):
    # Spark deletes them in JVM shutdown hooks: in-process py4jni runs them at interpreter
    # exit; spark-submit's JVM (stock, socket) exits when the driver's stdin pipe closes
    assert runs[mode]["left"] == []


def error_of(setup: str, action: str, after: str = "") -> str:
    """Runs ``setup``, ``action`` (one line) and ``after`` in a fresh interpreter;
    returns the output, where what ``action`` raised reads ``ERR <class> <message>``."""
    r = run_python(setup + "try:\n    " + action + "\nexcept Exception as e:\n"
                   "    print('ERR', type(e).__name__, e)\n" + after)
    return r.stdout + r.stderr[-3000:]


def test_jvm_started_with_another_classpath_is_a_clear_error():
    out = error_of("from py4jni import JavaGateway\nimport py4jni.pyspark\nJavaGateway()\n"
                   "py4jni.pyspark.enable()\nfrom pyspark.sql import SparkSession\n",
                   "SparkSession.builder.master('local[1]').getOrCreate()")
    assert "ERR Py4JError py4jni.pyspark: this process's JVM was already started" in out, out


def test_enable_after_a_stock_gateway_is_refused():
    out = error_of("from pyspark.core.context import SparkContext\n"
                   "SparkContext._gateway = object()  # as if PySpark had launched its own\n"
                   "import py4jni.pyspark\n", "py4jni.pyspark.enable()")
    assert "ERR Py4JError py4jni.pyspark.enable() must run before the first SparkContext" \
        in out, out


def test_enable_without_pyspark_says_so():
    out = error_of("import sys\nsys.modules['pyspark'] = None  # as if not installed\n"
                   "import py4jni.pyspark\n",
                   "py4jni.pyspark.enable()", "print('enabled', py4jni.pyspark.enabled())\n")
    assert "ERR Py4JError py4jni.pyspark: pyspark is not installed" in out, out
    assert "enabled False" in out, out


def test_driver_options_from_the_conf(monkeypatch):
    import py4jni.pyspark as pp
    from pyspark import SparkConf
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    conf = SparkConf(loadDefaults=False).setAll([
        ("spark.driver.memory", "2g"),
        ("spark.driver.extraJavaOptions", "-Dx.y='a b' -XX:+UseSerialGC"),
        ("spark.driver.extraClassPath", "/opt/extra.jar"),
        ("spark.driver.extraLibraryPath", "/opt/native"),
        ("spark.master", "local[3]")])
    props = pp._driver_props(conf)
    opts = pp.driver_jvm_options(props)
    assert opts[0] == "-Xmx2g"
    assert "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED" in opts
    assert "-Dx.y=a b" in opts and "-XX:+UseSerialGC" in opts
    libpath = [o for o in opts if o.startswith("-Djava.library.path=")]
    assert libpath and libpath[0].startswith("-Djava.library.path=/opt/native:")
    assert libpath[0].endswith(":/usr/lib")
    assert "-Dspark.master=local[3]" in opts and "-Dspark.app.name=pyspark-shell" in opts
    cp = pp.driver_classpath(props)
    assert cp[0] == "/opt/extra.jar"
    assert any(os.path.basename(p).startswith("spark-core_") for p in cp)


def test_unsupported_submit_args_are_named(monkeypatch):
    import py4jni.pyspark as pp
    from py4jni import Py4JError
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS",
                       "--driver-memory 3g --properties-file f pyspark-shell")
    with pytest.raises(Py4JError, match="--properties-file .* is not supported in-process"):
        pp._driver_props(None)
    # what SparkSubmit's own parsing takes after the JVM starts is accepted
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS",
                       "--packages a:b:1 --repositories file:///r --jars x.jar pyspark-shell")
    props = pp._driver_props(None)
    assert props["spark.jars"] == "x.jar" and "spark.jars.packages" not in props
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--driver-memory 3g --conf spark.x=1 pyspark-shell")
    props = pp._driver_props(None)
    assert props["spark.driver.memory"] == "3g" and props["spark.x"] == "1"


def test_spark_defaults_file_is_read(monkeypatch, tmp_path):
    import py4jni.pyspark as pp
    (tmp_path / "spark-defaults.conf").write_text(
        "# comment\nspark.driver.memory   3g\nspark.executor.cores=2\n\n"
        "spark.driver.extraJavaOptions -Da=1 -Db=2\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    props = pp._driver_props(None)
    assert props["spark.driver.memory"] == "3g" and props["spark.executor.cores"] == "2"
    assert props["spark.driver.extraJavaOptions"] == "-Da=1 -Db=2"
    assert str(tmp_path) in pp.driver_classpath(props)  # the conf directory, as spark-submit


SWITCHED_APP = """
import sys
before = "py4jni.pyspark" in sys.modules
import pyspark
import py4jni.pyspark
import pyspark.java_gateway as pjg
print("before", before, "enabled", py4jni.pyspark.enabled(),
      "launcher", pjg.launch_gateway is py4jni.pyspark._launch_gateway)
"""


@pytest.mark.parametrize("mode,enabled", [("inproc", True), ("socket", False)])
def test_py4j_switch_enables_pyspark_on_import(tmp_path, mode, enabled):
    # python -m py4jni run (PY4JNI_AS_PY4J=1 installs the same switch): importing pyspark
    # enables py4jni.pyspark in in-process mode; nothing of it is imported before
    app = tmp_path / "app.py"
    app.write_text(SWITCHED_APP)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    out = subprocess.run([sys.executable, "-m", "py4jni", "run", f"--{mode}", str(app)],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["before", "False", "enabled", str(enabled),
                                  "launcher", str(enabled)], out.stdout + out.stderr


def test_enable_after_pyspark_imports_adopts_py4j_names_hook_and_converters():
    out = run_python(
        "import pyspark.sql.types, pyspark.core.context as ctx\n"
        "import py4j.protocol\n"
        "import py4jni, py4jni.pyspark\n"
        "py4jni.pyspark.enable()\n"
        "import py4j.java_gateway\n"
        "print('module', py4j.java_gateway.__name__)\n"
        "print('rebound', ctx.JavaObject is py4jni.JavaObject, ctx.JVMView is py4jni.JVMView)\n"
        "print('converters', *[type(c).__name__ for c in py4jni.protocol.INPUT_CONVERTER])\n"
        "from pyspark.errors.exceptions.captured import install_exception_handler\n"
        "install_exception_handler()\n"
        "from py4jni import java_gateway\n"
        "print('hook', java_gateway.get_return_value.__qualname__)\n")
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines())
    assert lines.get("module") == "py4jni.java_gateway", out.stdout + out.stderr
    assert lines["rebound"] == "True True"
    # py4j's order after pyspark.sql.types: numpy arrays first, py4j's own, then pyspark's
    assert lines["converters"].split() == [
        "NumpyArrayConverter", "SetConverter", "MapConverter", "ListConverter",
        "DatetimeNTZConverter", "DatetimeConverter", "DateConverter", "TimeConverter",
        "DayTimeIntervalTypeConverter", "NumpyScalarConverter"]
    assert lines["hook"] == "capture_sql_exception.<locals>.deco"  # the hook C calls
