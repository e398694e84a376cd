"""PyFlink's client in this process (py4jni/frameworks/pyflink.py) against a standalone
Flink cluster on 127.0.0.1: a JobManager and a TaskManager started with the
``start-cluster.sh`` of the wheel's bin directory (a configuration of the test's: loopback
addresses, free ports, small memory, one slot), once for the module.

tests/python/frameworks/pyflink_programs/remote_cluster.py submits a Table API job and a Python
UDF job to it (``execution.target: remote``) under stock PyFlink and under
``python -m py4jni run`` (PyFlink's venv: P4J_PYFLINK_PYTHON), one client JVM at a time:
the results must equal stock's, the cluster must have run the four jobs, the UDF
must run in a Python worker of the cluster's TaskManager, and each client must leave no
process. The cluster is stopped with
``stop-cluster.sh`` whatever happened (what outlives it is killed, and fails the
test); no Flink file may appear in /tmp (the cluster's and the clients' temp
directories are the test's).
"""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import pyflink_python, summary_line

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "pyflink_programs" / "remote_cluster.py"
LOOPBACK = "127.0.0.1"
# What Flink and PyFlink name the files and directories they make in a temp directory.
FLINK_TMP = re.compile(r"^(flink|blobStore|python-dist|pyflink|localState|tm_|jm_|"
                       r"executionGraphStore|rocksdb)", re.IGNORECASE)

PYFLINK = pyflink_python() or ""
pytestmark = [
    pytest.mark.skipif(
        not PYFLINK, reason="apache-flink is not installed (tests/setup_env.sh makes "
        ".venv-pyflink unless P4J_NO_PYFLINK=1; P4J_PYFLINK_PYTHON names its python, which "
        "must be this Python version)"),
    pytest.mark.inproc_only("PyFlink's client JVM embedded in-process"),
]


def _marked(marker: str) -> list[int]:
    """Pids of live processes whose environment holds ``marker``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if (b"\0" + marker.encode() + b"\0") in (b"\0" + environ) and state != "Z":
            found.append(int(pid))
    return found


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind((LOOPBACK, 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _flink_tmp_entries(since: float) -> list[str]:
    """Entries of /tmp named as Flink names its own, made since ``since``."""
    found = []
    for entry in os.scandir("/tmp"):
        try:
            if FLINK_TMP.match(entry.name) and entry.stat(follow_symlinks=False).st_mtime >= since:
                found.append(entry.name)
        except OSError:
            pass
    return found


class _Cluster:
    """A standalone cluster from the wheel's start-cluster.sh, its configuration,
    logs, pid files and temp directories under ``root``."""

    def __init__(self, root: Path) -> None:
        out = subprocess.run([PYFLINK, "-c", "import os, pyflink; "
                              "print(os.path.dirname(os.path.abspath(pyflink.__file__)))"],
                             capture_output=True, text=True, check=True)
        self.home = Path(out.stdout.strip())
        self.root = root
        self.tmp = root / "tmp"
        self.marker = f"P4J_FLINK_CLUSTER={uuid.uuid4().hex}"
        self.rpc_port, self.rest_port = _free_ports(2)

    def _configure(self) -> dict[str, str]:
        conf = self.root / "conf"
        for d in (conf, self.root / "log", self.tmp):
            d.mkdir()
        for name in ("log4j.properties", "log4j-console.properties"):
            (conf / name).write_bytes((self.home / "conf" / name).read_bytes())
        # the JVM options the wheel's config.yaml gives every Flink JVM (--add-opens ...)
        stock_opts = re.search(r"^\s+all:\s*(.*)$",
                               (self.home / "conf" / "config.yaml").read_text(), re.M)
        opts = f"-Djava.io.tmpdir={self.tmp} {stock_opts.group(1) if stock_opts else ''}"
        settings = {
            "jobmanager.rpc.address": LOOPBACK, "jobmanager.rpc.port": self.rpc_port,
            "jobmanager.bind-host": LOOPBACK, "jobmanager.memory.process.size": "800m",
            "taskmanager.host": LOOPBACK, "taskmanager.bind-host": LOOPBACK,
            "taskmanager.memory.process.size": "1024m", "taskmanager.numberOfTaskSlots": 1,
            "rest.address": LOOPBACK, "rest.bind-address": LOOPBACK,
            "rest.port": self.rest_port, "io.tmp.dirs": str(self.tmp),
            "env.pid.dir": str(self.root), "env.log.dir": str(self.root / "log"),
            "env.java.opts.all": opts.strip()}
        (conf / "config.yaml").write_text(
            "".join(f"{k}: {json.dumps(v) if isinstance(v, str) else v}\n"
                    for k, v in settings.items()))
        (conf / "workers").write_text(f"{LOOPBACK}\n")
        (conf / "masters").write_text(f"{LOOPBACK}:{self.rest_port}\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PY4JNI_", "FLINK_"))}
        env.update(FLINK_CONF_DIR=str(conf), TMPDIR=str(self.tmp))
        key, value = self.marker.split("=", 1)
        env[key] = value
        return env

    def _script(self, name: str, env: dict[str, str]) -> None:
        subprocess.run(["bash", str(self.home / "bin" / name)], env=env, check=True,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=300)

    def rest(self, path: str, key: str) -> list[dict[str, Any]]:
        """The list ``key`` of the cluster's REST answer for ``path`` ([] while it does
        not answer)."""
        try:
            with urllib.request.urlopen(f"http://{LOOPBACK}:{self.rest_port}{path}",
                                        timeout=5) as r:
                return list(json.load(r)[key])
        except OSError:
            return []

    def start(self) -> None:
        self.env = self._configure()
        self._script("start-cluster.sh", self.env)
        deadline = time.monotonic() + 300
        while not self.rest("/taskmanagers", "taskmanagers"):
            if time.monotonic() > deadline or not _marked(self.marker):
                logs = "".join(p.read_text(errors="replace")[-2000:]
                               for p in sorted((self.root / "log").glob("*")))
                raise AssertionError(f"the Flink cluster did not start:\n{logs}")
            time.sleep(1)

    def stop(self) -> list[str]:
        """Stops the cluster; the command lines of what had to be killed after
        stop-cluster.sh (nothing, when it stopped as it should)."""
        try:
            self._script("stop-cluster.sh", self.env)
        except (subprocess.SubprocessError, AttributeError):
            pass
        deadline = time.monotonic() + 60
        while _marked(self.marker) and time.monotonic() < deadline:
            time.sleep(0.5)
        killed = []
        for pid in _marked(self.marker):
            killed.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                          .decode(errors="replace"))
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return killed


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Cluster]:
    since = time.time()
    c = _Cluster(tmp_path_factory.mktemp("flink-cluster"))
    t = time.monotonic()
    try:
        c.start()
        summary_line(f"Flink standalone cluster: started in {time.monotonic() - t:.1f} s")
        yield c
    finally:
        killed = c.stop()
    assert killed == [], f"left running after stop-cluster.sh: {killed}"
    assert _flink_tmp_entries(since) == []


def _submit(cluster: _Cluster, tmp: Path, mode: str | None) -> tuple[list[str], float]:
    """Runs the program stock (``mode`` None) or under ``python -m py4jni run --MODE``:
    its output lines and wall time; asserts exit status 0 and no process left."""
    tmp.mkdir()
    marker = f"P4J_FLINK_CLIENT={uuid.uuid4().hex}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PY4JNI_", "PYFLINK"))}
    env.update(TMPDIR=str(tmp), JVM_ARGS=f"-Djava.io.tmpdir={tmp}",
               FLINK_REST_PORT=str(cluster.rest_port),
               PATH=os.path.dirname(PYFLINK) + os.pathsep + env.get("PATH", ""))
    key, value = marker.split("=", 1)
    env[key] = value
    head = [PYFLINK] if mode is None else [PYFLINK, "-m", "py4jni", "run", f"--{mode}"]
    t = time.monotonic()
    out = subprocess.run([*head, str(PROGRAM)], capture_output=True, text=True,
                         timeout=600, env=env, cwd=tmp)
    wall = time.monotonic() - t
    assert out.returncode == 0, (mode, out.stdout, out.stderr[-6000:])
    deadline = time.monotonic() + 15
    while _marked(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _marked(marker) == [], mode
    return out.stdout.splitlines(), wall


def test_table_api_and_python_udf_jobs_on_the_cluster(cluster: _Cluster,
                                                       tmp_path: Path) -> None:
    stock, wall_s = _submit(cluster, tmp_path / "stock", None)
    mine, wall_m = _submit(cluster, tmp_path / "inproc", "inproc")
    assert stock[0] == "jvm-in-this-process False"
    assert mine[0] == "jvm-in-this-process True"
    assert mine[1:] == stock[1:]
    assert stock[1] == "table-api [('k0', 135, 10), ('k1', 145, 10), ('k2', 155, 10)]"
    assert stock[2] == "python-udf " + str([(v, 3 * v, "task-manager") for v in range(30)])
    # four jobs (two per client), all run by the cluster
    jobs = cluster.rest("/jobs/overview", "jobs")
    assert sorted(j["state"] for j in jobs) == ["FINISHED"] * 4, jobs
    summary_line(f"Flink standalone cluster: stock client {wall_s:.1f} s, "
                 f"in-process client {wall_m:.1f} s")
