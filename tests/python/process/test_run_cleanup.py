"""A test run owns what it starts (tests/python/conftest.py): py4jni's archives and
tmp_path go to a directory of the run, the processes the run leaves behind (a class-path
archive's background dump) are stopped when the session ends, and the files a killed JVM
leaves in /tmp are removed; the summary lists skipped tests by reason. Checked on a pytest session of its
own (tests/python/process/run_cleanup_session.py) that leaves a dump running on purpose."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import conftest

SESSION = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_cleanup_session.py")


def test_nothing_a_test_run_starts_outlives_it(tmp_path) -> None:
    report = tmp_path / "report.json"
    env = {**os.environ, "P4J_CLEANUP_REPORT": str(report),
           "P4J_FIXTURES_JAR": conftest.fixtures_jar()}
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:faulthandler",
                        "-p", "no:cacheprovider", "-q", SESSION],
                       capture_output=True, text=True, timeout=300, env=env,
                       cwd=os.path.dirname(SESSION))
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    left = json.loads(report.read_text())
    assert left["run_id"] != conftest.RUN_ID and left["cache"] != conftest.CACHE_DIR
    assert left["held"]  # the session left its dump running (stopped) at its end...
    assert "stopped" in r.stdout and "create-classpath" in r.stdout, r.stdout[-4000:]
    # ...and its end stopped it, with everything else the run had started
    assert not [p for p in left["held"] if conftest._alive(p)]
    assert conftest.processes_of_run(left["run_id"]) == []
    assert not os.path.exists(left["cache"])
    # the run's tmp_path went with its directory, and the killed JVM's files with them
    killed = json.loads((tmp_path / "report.json.killed").read_text())
    assert killed["tmp_path"].startswith(killed["run_dir"] + os.sep)
    assert not os.path.exists(killed["run_dir"])
    assert killed["files"] and not [p for p in killed["files"] if os.path.lexists(p)]
    # and the skipped tests are listed by reason
    assert "skipped: 1 tests, by reason" in r.stdout, r.stdout[-4000:]
    assert "1  what a skip says" in r.stdout, r.stdout[-4000:]
