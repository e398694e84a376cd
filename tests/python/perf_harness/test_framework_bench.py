"""The framework benchmarks' harness (perf/framework_bench.py, used by perf/spark_bench.py
and perf/flink_bench.py): a scenario that raises, a worker that crashes or hangs, are
failures of their cells, the run goes on (a dead worker is started again), and the
report lists them first. The workers here are plain Python processes speaking the same
protocol (the frameworks' own runs are `perf/run.sh --spark` / `--flink`); no timing is
asserted."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "perf"))
import framework_bench  # noqa: E402

WORKER = '''
import sys, time
sys.path.insert(0, {perf!r})
import framework_bench
framework_bench.serve(sys.argv[1], lambda: "session",
                      lambda s: {{"ok": lambda: None, "slow": lambda: time.sleep(0.05),
                                 "crash": lambda: None, "hang": lambda: None,
                                 "error": lambda: None}},
                      cold=len(sys.argv) > 2)
'''


@pytest.fixture
def worker_script(tmp_path: Path) -> str:
    path = tmp_path / "worker.py"
    path.write_text(WORKER.format(perf=str(ROOT / "perf")))
    return str(path)


def _spawn(script: str, backend: str, cold: bool = False):
    return lambda: framework_bench.popen([sys.executable, script, backend]
                                         + (["cold"] if cold else []), dict(os.environ))


def test_failed_cells_are_recorded_and_the_run_goes_on(worker_script, monkeypatch) -> None:
    monkeypatch.setenv("P4J_PERF_INJECT", "crash:crash:py4jni,hang:hang:py4jni,"
                                          "error:error:stock")
    monkeypatch.setattr(framework_bench, "FIRST_RUN_TIMEOUT_S", 3.0)
    monkeypatch.setattr(framework_bench, "MIN_TIMEOUT_S", 3.0)
    workers = {b: framework_bench.Worker(b, _spawn(worker_script, b))
               for b in framework_bench.BACKENDS}
    for w in workers.values():
        w.start()
    failures = framework_bench.Failures()
    names = ["ok", "crash", "slow", "hang", "error"]
    rounds = {"ok": 3, "crash": 2, "slow": 2, "hang": 1, "error": 3}
    results = framework_bench.interleave(workers, names, rounds, failures, lambda m: None)
    for w in workers.values():
        w.quit()
    got = {(e["what"], e["backend"]): e for e in failures.entries}
    assert set(got) == {("crash", "py4jni"), ("hang", "py4jni"), ("error", "stock")}, got
    assert got[("crash", "py4jni")]["status"] == "crashed"
    assert "status 3" in got[("crash", "py4jni")]["reason"]
    assert got[("crash", "py4jni")]["times"] == 3  # warm-up and both rounds, each restarted
    assert got[("hang", "py4jni")]["status"] == "timed out"
    assert got[("error", "stock")]["status"] == "error"
    assert "injected error" in got[("error", "stock")]["reason"]
    # the other cells have every round, after the faults too (the worker restarted)
    for name in names:
        for b in framework_bench.BACKENDS:
            expect = 0 if (name, b) in got else rounds[name]
            assert len(results[name][b]) == expect, (name, b, results[name][b])
    assert workers["py4jni"].starts >= 4 and workers["stock"].starts == 1


def test_cold_start_times_an_answer_and_reports_a_crash(worker_script, monkeypatch) -> None:
    assert framework_bench.cold_start(_spawn(worker_script, "stock", cold=True)) > 0
    crash = framework_bench.popen([sys.executable, "-c", "import os; os._exit(5)"],
                                  dict(os.environ))
    with pytest.raises(framework_bench.CellFailed) as exc:
        framework_bench.cold_start(lambda: crash)
    assert exc.value.status == "crashed" and "status 5" in exc.value.reason


def test_the_reports_list_failures_first_and_say_failed(tmp_path) -> None:
    import flink_bench
    import spark_bench
    meta = {"date": "2026-12-01", "command": "test", "commit": "c",
            "machine": {"cpu": "cpu", "cores": 2, "ram_gib": 1, "java": "java",
                        "python": "py"}, "rounds": 2, "cold_reps": 1, "pyspark": "4",
            "pyflink": "2", "load_start": "1", "load_end": "1"}
    failed = [{"what": "S4-range-count", "backend": "py4jni", "status": "crashed",
               "reason": "the worker exited (status 3) during S4-range-count", "times": 2}]
    for module, scenario in ((spark_bench, "S4-range-count"), (flink_bench, "F1-config-get")):
        data = {"meta": meta, "cold": {"stock": [1.0], "py4jni": [0.5]},
                "rounds": {scenario: {"stock": [0.2, 0.3], "py4jni": []}},
                "failed": failed}
        text = module.report(data, str(tmp_path))
        assert text.index("## Failed: 1 of") < text.index("| scenario | what |")
        assert "| S4-range-count | py4jni | crashed | the worker exited (status 3)" in text
        table = text.split("| scenario | what |", 1)[1]
        row = next(ln for ln in table.splitlines() if ln.startswith(f"| {scenario} |"))
        assert row.endswith("| failed | - |"), row
        data["failed"] = []
        assert "## Failed" not in module.report(data, str(tmp_path))


def test_measure_runs_cold_starts_and_rounds_of_every_backend(worker_script) -> None:
    failures = framework_bench.Failures()
    data = framework_bench.measure(lambda b, cold: _spawn(worker_script, b, cold)(), "COLD",
                                   2, ["ok", "slow"], {"ok": 2, "slow": 1}, failures,
                                   lambda m: None)
    assert not failures, failures.entries
    for b in framework_bench.BACKENDS:
        assert len(data["cold"][b]) == 2 and all(x > 0 for x in data["cold"][b])
        assert len(data["rounds"]["ok"][b]) == 2 and len(data["rounds"]["slow"][b]) == 1
        assert data["restarts"][b] == 0
