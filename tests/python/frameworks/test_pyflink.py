"""PyFlink unchanged with its JVM in this process (py4jni/frameworks/pyflink.py), against
stock PyFlink and stock PyFlink on py4jni's socket mode.

Three PyFlink programs (tests/python/frameworks/pyflink_programs/: Table API and SQL with GROUP BY
in batch and streaming mode with to_pandas/from_pandas; Python UDFs in SQL and in
select, a UDTF, CREATE FUNCTION ... LANGUAGE PYTHON, Java errors (one converted by
PyFlink's install_exception_handler); DataStream
from_collection().map().execute_and_collect()) run in child processes of PyFlink's own
venv (apache-flink pins another py4j than the tests' venv; tests/setup_env.sh makes it,
P4J_PYFLINK_PYTHON names its interpreter): stock, under ``python -m py4jni run``
(in-process) and under ``python -m py4jni run --socket``, one process per mode running
the three programs, one JVM at a time. Every program's output must equal stock's
except the line saying where the JVM is; each run must exit with the status the program
gave and leave no process behind; in-process, no file in its temp directory either
(stock's child JVM leaves Flink's extracted planner jar there).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conftest import pyflink_python

HERE = Path(__file__).resolve().parent
PROGRAMS = [HERE / "pyflink_programs" / name
            for name in ("table_sql.py", "udfs.py", "datastream.py")]
RUNNER = HERE / "pyflink_programs" / "run_programs.py"
EXIT_STATUS = 3  # what the runner exits with after the programs


PYFLINK = pyflink_python()
pytestmark = pytest.mark.skipif(
    PYFLINK is None, reason="apache-flink is not installed (tests/setup_env.sh makes "
    ".venv-pyflink unless P4J_NO_PYFLINK=1; P4J_PYFLINK_PYTHON names its python, which "
    "must be this Python version)")


def _leftovers(marker: str) -> list[str]:
    """Command lines of live processes whose environment holds ``marker``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in environ:
            found.append(cmdline.replace(b"\0", b" ").decode(errors="replace"))
    # py4jni's class-data-sharing archive writer (py4jni/_cds.py) is detached on purpose:
    # the first start on a machine spawns it and it ends on its own
    found = [c for c in found if "_cds.py create" not in c and "CdsWarmup" not in c]
    return found


def _run(tmp_path: Path, mode: str | None) -> tuple[str, str, dict[str, list[str]]]:
    """Runs the three programs in one child (``mode``: None for stock); checks its exit
    status and that no process of it is left; returns its stdout, stderr and what it
    left in its temp directory (files; top-level directories by kind)."""
    tmp = tmp_path / f"tmp-{mode or 'stock'}"
    tmp.mkdir()
    marker = f"P4J_PYFLINK_RUN={uuid.uuid4().hex}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PY4JNI_", "PYFLINK"))}
    env.update(TMPDIR=str(tmp), JVM_ARGS=f"-Djava.io.tmpdir={tmp}",
               PATH=os.path.dirname(PYFLINK) + os.pathsep + env.get("PATH", ""),
               P4J_PYFLINK_RUN=marker.split("=", 1)[1])
    head = [PYFLINK] if mode is None else [PYFLINK, "-m", "py4jni", "run", f"--{mode}"]
    out = subprocess.run([*head, str(RUNNER), str(EXIT_STATUS), *map(str, PROGRAMS)],
                         capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert out.returncode == EXIT_STATUS, (mode, out.stdout, out.stderr[-4000:])
    deadline = time.monotonic() + 15  # Flink's workers end with the JVM's shutdown hooks
    while _leftovers(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _leftovers(marker) == [], (mode, _leftovers(marker))
    left = {"files": sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if not p.is_dir()),
            "dirs": sorted(_kind(p.name) for p in tmp.iterdir() if p.is_dir())}
    return out.stdout, out.stderr, left


def _kind(name: str) -> str:
    """A temp directory's name without its random part (Python's tempfile: tmpXXXXXXXX)."""
    return "tmp*" if name.startswith("tmp") and len(name) == 11 else name


def _programs(stdout: str) -> dict[str, list[str]]:
    """Each program's output lines, without the line saying where the JVM is."""
    parts: dict[str, list[str]] = {}
    name = ""
    for line in stdout.splitlines():
        if line.startswith("== "):
            name = line[3:]
            parts[name] = []
        elif name and not line.startswith("jvm-in-this-process"):
            parts[name].append(line)
    return parts


STOCK_LEFT: dict[str, list[str]] = {}


@pytest.fixture(scope="module")
def stock(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    stdout, _, left = _run(tmp_path_factory.mktemp("stock"), None)
    assert stdout.count("jvm-in-this-process False") == 3, stdout
    STOCK_LEFT.update(left)
    return _programs(stdout)


def test_stock_runs_the_three_programs(stock: dict[str, list[str]]) -> None:
    assert list(stock) == [p.name for p in PROGRAMS]
    assert stock["table_sql.py"][0] == \
        "sql-group-by [('apple', 2, 7), ('fig', 1, 1), ('pear', 2, 7)]"
    assert "udf-in-sql [(1, 2), (2, 3), (41, 42)]" in stock["udfs.py"]
    assert "converted pyflink.util.exceptions TableNotExistException" in stock["udfs.py"]
    assert stock["datastream.py"] == ["datastream [(10, 'aa'), (20, 'bbbb'), (30, 'cccccc')]"]


@pytest.mark.parametrize("mode,in_process", [("inproc", True), ("socket", False)])
def test_py4jni_gives_stocks_results(tmp_path: Path, stock: dict[str, list[str]],
                                     mode: str, in_process: bool) -> None:
    stdout, stderr, left = _run(tmp_path, mode)
    assert stdout.count(f"jvm-in-this-process {in_process}") == 3, stdout + stderr[-4000:]
    assert _programs(stdout) == stock
    # Flink's RPC system jar, which its JVM deletes at the end of its own shutdown, is
    # gone as under stock (socket mode's JVM must not be made to exit while this
    # process still runs: its callback server stays until the process ends, as py4j's)
    assert [f for f in left["files"] if f.startswith("flink-rpc-")] == [], left
    if in_process:
        # Java's shutdown hooks and deleteOnExit ran (stock's child JVM leaves its
        # extracted planner jar); the empty directories left are stock's too (Flink's
        # web upload directory, PyFlink's from_pandas directory)
        assert left["files"] == [], left
        assert set(left["dirs"]) <= set(STOCK_LEFT["dirs"]), (left, STOCK_LEFT)


def _child(code: str, *, env_extra: dict[str, str] | None = None,
           args: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PY4JNI_", "PYFLINK"))}
    env.update(env_extra or {})
    return subprocess.run([PYFLINK, *args, "-c", code] if not args else [PYFLINK, *args],
                          capture_output=True, text=True, timeout=120, env=env)


LAUNCH = """
import json, os
from py4jni.frameworks import pyflink
launch = pyflink.gateway_launch()
print(json.dumps({"cp": launch.classpath, "opts": launch.jvm_options,
                  "props": launch.system_properties, "env": launch.environment,
                  "main": launch.main_class}))
"""


def test_the_launch_is_pyflink_launchers(tmp_path: Path) -> None:
    # computed with pyflink_gateway_server's helpers: no JVM is started
    import json
    out = _child(LAUNCH, env_extra={"JVM_ARGS": "-Xmx700m -Dp4j.x=1"})
    assert out.returncode == 0, out.stderr
    launch = json.loads(out.stdout)
    home = os.path.dirname(launch["env"]["FLINK_LIB_DIR"])
    assert launch["env"]["FLINK_CONF_DIR"] == os.path.join(home, "conf")
    names = [os.path.basename(p) for p in launch["cp"]]
    assert any(n.startswith("flink-python") for n in names), names
    assert any(n.startswith("flink-dist") for n in names), names
    assert launch["opts"][:2] == ["-Xmx700m", "-XX:+IgnoreUnrecognizedVMOptions"]
    assert launch["props"]["p4j.x"] == "1"
    assert launch["props"]["log4j.configurationFile"].endswith("conf/log4j-cli.properties")
    assert launch["main"] == "org.apache.flink.client.python.PythonGatewayServer"


SWITCHED = """
import sys
before = "py4jni.frameworks.pyflink" in sys.modules
import pyflink.java_gateway as pjg
import py4jni.pyflink
print("before", before, "enabled", py4jni.pyflink.enabled(),
      "launcher", pjg.launch_gateway is py4jni.pyflink._launch_gateway)
"""


@pytest.mark.parametrize("mode,enabled", [("inproc", True), ("socket", False)])
def test_the_switch_enables_pyflink_on_import(tmp_path: Path, mode: str, enabled: bool) -> None:
    app = tmp_path / "app.py"
    app.write_text(SWITCHED)
    out = _child("", args=("-m", "py4jni", "run", f"--{mode}", str(app)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["before", "False", "enabled", str(enabled),
                                  "launcher", str(enabled)], out.stdout + out.stderr


def test_enable_after_pyflinks_gateway_is_refused() -> None:
    out = _child("import pyflink.java_gateway as pjg\n"
                 "pjg._gateway = object()  # as if PyFlink had connected already\n"
                 "import py4jni.pyflink\n"
                 "try:\n"
                 "    py4jni.pyflink.enable()\n"
                 "except Exception as exc:\n"
                 "    print(type(exc).__name__, exc)\n"
                 "print('enabled', py4jni.pyflink.enabled())\n")
    assert "Py4JError py4jni.pyflink.enable() must run before PyFlink's first gateway" \
        in out.stdout, out.stdout + out.stderr
    assert "enabled False" in out.stdout


def test_the_env_switch_enables_pyflink_on_import(tmp_path: Path) -> None:
    # PY4JNI_AS_PY4J=1 through the .pth hook (processed here with site.addsitedir)
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    pth = HERE.parents[2] / "python-binding" / "py4jni-as-py4j.pth"
    (site_dir / pth.name).write_text(pth.read_text())
    out = _child(f"import site; site.addsitedir({str(site_dir)!r})\n" + SWITCHED,
                 env_extra={"PY4JNI_AS_PY4J": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["before", "False", "enabled", "True", "launcher", "True"], \
        out.stdout + out.stderr
