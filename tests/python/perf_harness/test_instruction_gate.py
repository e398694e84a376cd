"""The instruction-count gate (perf/instruction_gate.py) catches a slowdown of M1.

Runs the gate in a fresh interpreter (its callgrind child starts a JVM of its own)
against a baseline this test measures first, then with an injected slowdown: 5% more
instructions in M1's segments (empty Python loop turns, sized from the baseline's pad
line) must fail it, naming M1 and both counts; 1% more in M2a stays within its 3%; a
count well below its baseline line passes and is reported as a gain to record.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
GATE = ROOT / "perf" / "instruction_gate.py"

pytestmark = pytest.mark.skipif(shutil.which("valgrind") is None,
                                reason="valgrind not installed (tests/setup_env.sh installs it)")


def _gate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(GATE), *args], capture_output=True, text=True,
                          timeout=600, cwd=ROOT, env=dict(os.environ))


def test_a_five_percent_slowdown_of_m1_fails_the_gate(tmp_path: Path) -> None:
    baseline = tmp_path / "instructions.txt"
    made = _gate("--only", "M1,M1-bound,M2a,pad", "--baseline", str(baseline), "--update")
    assert made.returncode == 0, made.stdout + made.stderr
    lines = [ln.split() for ln in baseline.read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    assert [ln[:2] for ln in lines] == [["M1", "inproc"], ["M1-bound", "inproc"],
                                        ["M2a", "inproc"], ["pad", "inproc"]]
    counts = {ln[0]: int(ln[2]) for ln in lines}
    # M1-bound's line 10% above what it costs: a gain the gate reports without failing
    text = baseline.read_text().replace(f"M1-bound   inproc  {counts['M1-bound']}",
                                        f"M1-bound   inproc  {round(counts['M1-bound'] * 1.1)}")
    baseline.write_text(text)

    r = _gate("--only", "M1,M1-bound,M2a", "--baseline", str(baseline),
              "--slowdown", "M1=5,M2a=1")
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    failed = [ln for ln in out.splitlines() if "FAILED" in ln]
    assert len(failed) == 1 and "M1 (inproc)" in failed[0], out
    m = re.search(r"rose to ([\d,]+) instructions per operation from the baseline's "
                  r"([\d,]+) \(\+([\d.]+)%", failed[0])
    assert m, failed[0]
    now, base, pct = int(m[1].replace(",", "")), int(m[2].replace(",", "")), float(m[3])
    assert base == counts["M1"] and now > base * 1.03 and 4.0 <= pct <= 6.0, failed[0]
    assert "--update" in out  # how to re-baseline, when the work is needed
    assert "M2a" not in "".join(failed)
    assert re.search(r"M1-bound \(inproc\) fell to .* record the gain", out), out

