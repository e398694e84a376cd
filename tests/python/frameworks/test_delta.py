"""Delta Lake (PyPI delta-spark with ``configure_spark_with_delta_pip``) in-process equal
to stock.

tests/python/frameworks/delta_program.py runs in the venv of tests/requirements-delta.txt (the
PySpark release delta-spark is built for; tests/setup_env.sh makes .venv-delta,
P4J_DELTA_PYTHON names its interpreter): stock, then under ``python -m py4jni run``, one
JVM at a time. Delta's jars come from Maven Central through ``spark.jars.packages``,
which Spark's Ivy code resolves in both (into Ivy's usual cache, so only a first run
downloads them); write, read, update, delete, merge, time travel and history must give
stock's output. Skipped when that venv is missing (P4J_NO_DELTA=1 or P4J_NO_PYSPARK=1).
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import summary_line, venv_python

PROGRAM = Path(__file__).resolve().parent / "delta_program.py"
DELTA = venv_python("P4J_DELTA_PYTHON")
pytestmark = [
    pytest.mark.skipif(DELTA is None, reason="delta-spark is not installed (tests/setup_env.sh "
                       "makes .venv-delta unless P4J_NO_DELTA=1 or P4J_NO_PYSPARK=1; "
                       "P4J_DELTA_PYTHON names its python, which must be this Python version)"),
    pytest.mark.inproc_only("PySpark's driver JVM embedded in-process"),
]


def _run(tmp: Path, in_process: bool) -> dict[str, Any]:
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    env.update(PYSPARK_PYTHON=str(DELTA), SPARK_LOCAL_IP="127.0.0.1")
    head = [str(DELTA), "-m", "py4jni", "run"] if in_process else [str(DELTA)]
    proc = subprocess.run([*head, str(PROGRAM), str(tmp)], capture_output=True, text=True,
                          timeout=900, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, \
        f"rc={proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return json.loads(lines[-1][len("RESULT "):])


def test_delta_lake_in_process_equals_stock(tmp_path):
    started = time.monotonic()
    stock = _run(tmp_path / "stock", in_process=False)
    between = time.monotonic()
    inproc = _run(tmp_path / "inproc", in_process=True)
    summary_line(f"Delta Lake session: stock {between - started:.0f} s, in-process "
                 f"{time.monotonic() - between:.0f} s (wall clock, with Ivy's resolution)")
    assert stock["jvm"] == "child" and inproc["jvm"] == "in-process"
    assert inproc["now"] == [[0, "n0"], [1, "one"], [2, "two"], [3, "n3"], [7, "n7"]]
    assert [op for _, op in inproc["history"]] == ["WRITE", "UPDATE", "DELETE", "MERGE"]
    assert {k: v for k, v in inproc.items() if k != "jvm"} == \
        {k: v for k, v in stock.items() if k != "jvm"}
