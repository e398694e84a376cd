"""The benchmark harness (perf/bench.py) runs end to end and reports every cell.

Each test runs bench.py in a fresh interpreter (it spawns its own workers, one JVM per
process) and never asserts a timing: only that every requested backend produced numbers
or said why not, that the output files exist, and that bad names are refused.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "perf" / "bench.py"
BACKENDS = ["py4jni", "py4jni-socket", "py4j", "jpype"]


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def _bench(*args: str, env: dict | None = None, timeout: float = 900):
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, cwd=ROOT)


def _cells(out: Path) -> dict:
    results = json.loads((out / "results.json").read_text())
    return {(c["scenario"], c["backend"]): c for c in results["cells"]}


FAILED = ("error", "crashed", "timed out", "failed", "not installed", "pending")


def _exit_status_follows_failures(r, out: Path) -> None:
    """bench.py exits 1 exactly when a cell failed, and then says which on stderr and in
    report.md's "Failed" table."""
    failed = [c for c in _cells(out).values() if c["status"] in FAILED]
    assert r.returncode == (1 if failed else 0), r.stderr[-3000:]
    report = (out / "report.md").read_text()
    assert ("## Failed:" in report) == bool(failed)
    for c in failed:
        assert f"{c['scenario']} on {c['backend']}: {c['status']}" in r.stderr


def _assert_figure_or_reason(cell: dict) -> None:
    """A cell either has round figures or an explicit status with a reason."""
    if cell["status"] == "ok":
        assert cell["rounds"], cell
        assert cell["per_op_s"]["median"] > 0, cell
        assert cell["per_op_s"]["min"] <= cell["per_op_s"]["median"] <= cell["per_op_s"]["max"]
    else:
        assert cell["status"] in ("n/a", "not installed", "failed", "error", "crashed", "skipped",
                                  "timed out"), cell
        assert cell["reason"], cell


def test_quick_run_reports_every_backend(tmp_path):
    # py4j and JPype always requested; py4jni too: importable or not, it must say so.
    backends = ["py4jni", "py4j", "jpype"]
    out = tmp_path / "run"
    r = _bench("--quick", "--scenarios", "M1,X7-1k", "--backends", ",".join(backends),
               "--out", str(out))
    _exit_status_follows_failures(r, out)
    cells = _cells(out)
    for sid in ("M1", "X7-1k"):
        for b in backends:
            _assert_figure_or_reason(cells[(sid, b)])
    for b in ("py4j", "jpype"):
        if _installed(b):
            assert cells[("M1", b)]["status"] == "ok", cells[("M1", b)]
        else:
            assert cells[("M1", b)]["status"] == "not installed"
    if not _installed("py4jni"):
        assert cells[("M1", "py4jni")]["status"] == "not installed"
        assert "py4jni" in cells[("M1", "py4jni")]["reason"]

    report = (out / "report.md").read_text()
    assert "## Targets" in report
    for label in ("py4jni", "py4j", "JPype"):
        assert label in report
    assert "not installed" in report or _installed("py4jni")
    results = json.loads((out / "results.json").read_text())
    assert results["meta"]["machine"]["cores"] >= 1
    assert all(c["scenario"] in ("M1", "X7-1k") for c in results["cells"])
    if _installed("matplotlib") and any(c["status"] == "ok" for c in cells.values()):
        for png in ("per_op_latency.png", "bandwidth.png"):
            assert (out / png).stat().st_size > 0
            assert f"]({png})" in report
    # progress went to stderr, results to files: stdout stays empty
    assert "round" in r.stderr


@pytest.mark.parametrize("flag,bad,valid", [
    ("--scenarios", "M1,NOPE", ["M1", "X7-16k", "LAT-65536", "COLD-full", "FLOOR", "BW",
                                "ARR-1M-send", "CB-NATIVE-100k"]),
    ("--backends", "py4j,jython", BACKENDS),
])
def test_unknown_names_exit_2_with_valid_list(flag, bad, valid):
    r = _bench(flag, bad, timeout=60)
    assert r.returncode == 2
    assert bad.split(",")[1] in r.stderr
    for name in valid:
        assert name in r.stderr


def test_crash_timeout_and_error_are_reported_and_the_run_goes_on(tmp_path):
    backend = "py4j" if _installed("py4j") else "jpype" if _installed("jpype") else None
    if backend is None:
        pytest.skip("neither py4j nor JPype is installed")
    out = tmp_path / "faults"
    inject = f"crash:M2a:{backend},hang:M2b:{backend},error:M3:{backend}"
    r = _bench("--quick", "--scenarios", "M1,M2a,M2b,M3,M4", "--backends", backend,
               "--batch-timeout", "5", "--no-charts", "--out", str(out),
               env={"P4J_PERF_INJECT": inject})
    assert r.returncode == 1, r.stderr[-3000:]  # the run goes on, and then fails
    _exit_status_follows_failures(r, out)
    cells = _cells(out)
    assert cells[("M2a", backend)]["status"] == "crashed"
    assert cells[("M2b", backend)]["status"] == "timed out"
    assert cells[("M3", backend)]["status"] == "error"
    for sid in ("M1", "M4"):  # before and after the faults: the worker was restarted
        assert cells[(sid, backend)]["status"] == "ok", cells[(sid, backend)]
    report = (out / "report.md").read_text()
    for word in ("crashed", "timed out", "injected error"):
        assert word in report
    failed_table = report.split("## Failed:", 1)[1].split("\n## ", 1)[0]
    for sid in ("M2a", "M2b", "M3"):
        assert f"| {sid} |" in failed_table, failed_table
    for sid in ("M1", "M4"):
        assert f"| {sid} |" not in failed_table, failed_table


def test_in_process_only_scenario_is_na_elsewhere_with_reason(tmp_path):
    # CB-NATIVE-100k calls a `native` method implemented in Python (register_natives):
    # py4jni in-process only. Every other backend must say n/a and why (never a silent
    # gap), and the report must point JPype to its nearest equivalent, the proxy row.
    out = tmp_path / "natives"
    r = _bench("--quick", "--scenarios", "CB-NATIVE-100k,CB-INT-100k", "--backends",
               ",".join(BACKENDS), "--no-charts", "--out", str(out))
    _exit_status_follows_failures(r, out)
    cells = _cells(out)
    for sid in ("CB-NATIVE-100k", "CB-INT-100k"):
        for b in BACKENDS:
            _assert_figure_or_reason(cells[(sid, b)])
    for b in ("py4jni-socket", "py4j", "jpype"):
        c = cells[("CB-NATIVE-100k", b)]
        if c["status"] in ("not installed", "failed"):  # no package, or no GatewayServer
            continue  # (with a reason: checked above)
        assert c["status"] == "n/a", c
        assert not c["rounds"], c
    jp = cells[("CB-NATIVE-100k", "jpype")]
    if jp["status"] == "n/a":
        assert "CB-INT-100k" in jp["reason"]
    results = json.loads((out / "results.json").read_text())
    fixtures = results["meta"]["fixtures"]
    assert fixtures["jar"] or fixtures["reason"]
    if _installed("py4jni") and fixtures["jar"]:
        for sid in ("CB-NATIVE-100k", "CB-INT-100k"):
            assert cells[(sid, "py4jni")]["status"] == "ok", cells[(sid, "py4jni")]
    elif not fixtures["jar"]:
        assert cells[("CB-INT-100k", "jpype")]["status"] in ("failed", "not installed")
    report = (out / "report.md").read_text()
    assert "## Java loops calling Python (CB)" in report
    assert "n/a" in report and "nearest equivalent" in report
    assert "CB-NATIVE-100k <= 0.5 us per native callback" in report


def test_cell_over_budget_is_skipped_with_reason(tmp_path):
    # --skip-over 1e-6: any unit is over budget, so the cell of a large-size scenario
    # stops after its first unit and says why instead of running its rounds.
    if not _installed("py4j"):
        pytest.skip("py4j not installed")
    out = tmp_path / "run"
    r = _bench("--quick", "--scenarios", "X7-1M", "--backends", "py4j", "--skip-over",
               "0.000001", "--no-charts", "--out", str(out))
    assert r.returncode == 0, r.stderr[-3000:]
    cell = _cells(out)[("X7-1M", "py4j")]
    assert cell["status"] == "skipped" and "over budget" in cell["reason"], cell
    assert not cell["rounds"] and len(cell["calibration"]) == 1, cell  # one unit alone: over
    assert "skipped [" in (out / "report.md").read_text()


def test_fixtures_jar_of_a_fresh_clone_builds_and_serves_the_scenarios(tmp_path):
    # A fresh clone has no CMake build: bench.py compiles the fixtures itself. The jar
    # must hold what the fixture scenarios call and leave out what needs py4j's jar
    # (tests/java/org/py4jni/fixtures/clientserver/), as the CMake build does.
    jar = tmp_path / "fixtures.jar"
    r = subprocess.run(
        [sys.executable, "-c",
         "import sys; sys.path.insert(0, sys.argv[1]); import bench\n"
         "class P:\n    def log(self, m): print(m)\n"
         "print('RESULT', bench.fixtures_jar(P(), out=sys.argv[2], reuse=False))",
         str(ROOT / "perf"), str(jar)], capture_output=True, text=True, timeout=300)
    assert f"RESULT ('{jar}', None)" in r.stdout, r.stdout + r.stderr
    import zipfile
    names = set(zipfile.ZipFile(jar).namelist())
    for cls in ("Buffers", "CallbackFixtures", "NativeCodec"):
        assert f"org/py4jni/fixtures/{cls}.class" in names, sorted(names)
    assert not [n for n in names if "/clientserver/" in n], sorted(names)
    out = tmp_path / "run"
    r = _bench("--quick", "--scenarios", "CB-INT-100k,X9-copy", "--backends", "py4jni",
               "--no-charts", "--out", str(out), env={"P4J_FIXTURES_JAR": str(jar)})
    _exit_status_follows_failures(r, out)
    assert json.loads((out / "results.json").read_text())["meta"]["fixtures"]["jar"] == str(jar)
    if _installed("py4jni"):
        for sid in ("CB-INT-100k", "X9-copy"):
            assert _cells(out)[(sid, "py4jni")]["status"] == "ok", _cells(out)[(sid, "py4jni")]


def _callgrind_calls():
    spec = importlib.util.spec_from_file_location("callgrind_calls",
                                                  ROOT / "perf" / "callgrind_calls.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sim_totals_reads_simulated_misses_and_mispredicts(tmp_path: Path) -> None:
    # callgrind_calls.py --sim (no valgrind needed: a parse of dump text): I1 misses and mispredicts (Bcm + Bim) from a dump's
    # events and totals lines; a dump made without simulation gives nothing
    cc = _callgrind_calls()
    sim = tmp_path / "cg.sim"
    sim.write_text("version: 1\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim\n"
                   "fn=(1) f\n3 100 1 1 4 0 0 0 0 0 9 2 5 3\n"
                   "totals: 100 1 1 4 0 0 0 0 0 9 2 5 3\n")
    assert cc._sim_totals(str(sim)) == {"I1mr": 4.0, "mispredicts": 5.0}
    plain = tmp_path / "cg.plain"
    plain.write_text("version: 1\nevents: Ir\nfn=(1) f\n3 100\ntotals: 100\n")
    assert cc._sim_totals(str(plain)) == {}


def test_parse_takes_one_events_column_by_object(tmp_path: Path) -> None:
    # callgrind_calls.py --sim --breakdown: a dump's exclusive cost of one event by object
    # and function (I1mr here); a call's inclusive cost line is not counted again, and a
    # cost line that leaves out trailing zeros counts zero for the later events
    cc = _callgrind_calls()
    dump = tmp_path / "cg.sim"
    dump.write_text("version: 1\nevents: Ir Dr I1mr\n"
                    "ob=(1) /usr/bin/python3.11\nfn=(1) eval\n3 100 1 4\n"
                    "cob=(2) /x/_py4jni.cpython-311-x86_64-linux-gnu.so\ncfn=(2) call\n"
                    "calls=1 9\n4 50 0 7\n"
                    "ob=(2)\nfn=(2)\n9 50 0 7\n+1 8\n"
                    "summary: 158 1 11\n")
    total, by_obj, by_fn = cc._parse(str(dump), "I1mr")
    assert total == 158
    assert by_obj == {"/usr/bin/python3.11": 4, "/x/_py4jni.cpython-311-x86_64-linux-gnu.so": 7}
    assert by_fn[("/usr/bin/python3.11", "eval")] == 4
    assert cc._parse(str(dump))[1] == {"/usr/bin/python3.11": 100,
                                       "/x/_py4jni.cpython-311-x86_64-linux-gnu.so": 58}
