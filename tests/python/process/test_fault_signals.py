"""HotSpot's own signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE: implicit null checks,
safepoint polls) keep working whatever the program does to their handlers, in every
order: faulthandler enabled before the JVM and disabled after it started (what pytest's
faulthandler plugin does around a test run), enabled after the JVM, signal.signal on
them. HotSpot's handlers stay installed and chain to the program's (as the JDK's libjsig
arranges). Each case is a process of its own: a Java method whose null dereference in
compiled code is HotSpot's SIGSEGV, after the change."""
from __future__ import annotations

import pytest

from conftest import run_python

PRELUDE = """
import faulthandler, os, signal, sys
{before}
from py4jni import JavaGateway
gw = JavaGateway(classpath=os.environ["P4J_FIXTURES_JAR"],
                 jvm_options=["-XX:-BackgroundCompilation", "-XX:TieredStopAtLevel=1"])
faults = gw.jvm.org.py4jni.fixtures.Faults
{after}
print(faults.nullChecks(20000, 100), flush=True)
print(gw.jvm.java.lang.Math.abs(-3))
"""

CASES = {
    "faulthandler before the JVM, disabled after (pytest)":
        ("faulthandler.enable()", "faulthandler.disable()"),
    "faulthandler enabled after the JVM": ("", "faulthandler.enable()"),
    "faulthandler enabled and disabled after the JVM":
        ("", "faulthandler.enable(); faulthandler.disable()"),
    "faulthandler enabled again after pytest's disable":
        ("faulthandler.enable()", "faulthandler.disable(); faulthandler.enable()"),
    "signal.signal(SIGSEGV, SIG_DFL) and others":
        ("", "signal.signal(signal.SIGSEGV, signal.SIG_DFL); "
             "signal.signal(signal.SIGBUS, lambda *a: None); "
             "signal.signal(signal.SIGFPE, signal.SIG_DFL)"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hotspot_signals_survive(case: str) -> None:
    before, after = CASES[case]
    r = run_python(PRELUDE.format(before=before, after=after), timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.split() == ["100", "3"]


def test_a_real_crash_still_reports_and_ends(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A fault HotSpot does not own reaches the program's handler (faulthandler's
    traceback), then ends the process (no endless re-delivery)."""
    code = PRELUDE.format(before="", after="faulthandler.enable()") + (
        "import ctypes\nctypes.string_at(0)\nprint('not reached')\n")
    code = f"import os\nos.chdir({str(tmp_path)!r})\n" + code  # hs_err lands there
    r = run_python(code, timeout=120)
    assert r.returncode != 0
    assert "not reached" not in r.stdout
    assert "Fatal Python error" in r.stderr
    assert "Current thread" in r.stderr or "File" in r.stderr  # faulthandler's dump


def test_plain_pytest_then_java_after_its_summary(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """pytest as it comes (its faulthandler plugin on, no -p no:faulthandler) runs a test
    that starts the JVM; once pytest has printed its summary and disabled faulthandler
    (putting the default handlers back), the JVM's own signals still work: the process
    ends with pytest's status, not 139 (what a framework's test module ending after its
    summary met)."""
    (tmp_path / "test_uses_the_jvm.py").write_text(
        "import os\n"
        "from py4jni import JavaGateway\n"
        "KEPT = []\n"
        "def test_java():\n"
        "    gw = JavaGateway(classpath=os.environ['P4J_FIXTURES_JAR'], jvm_options=[\n"
        "        '-XX:-BackgroundCompilation', '-XX:TieredStopAtLevel=1'])\n"
        "    KEPT.append(gw)\n"
        "    assert gw.jvm.java.lang.Math.abs(-2) == 2\n")
    code = (
        "import sys, pytest\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        f"rc = pytest.main(['-q', '-p', 'no:cacheprovider', {str(tmp_path)!r}])\n"
        "import test_uses_the_jvm as t\n"
        "faults = t.KEPT[0].jvm.org.py4jni.fixtures.Faults\n"
        "print('after', faults.nullChecks(20000, 100), flush=True)\n"
        "sys.exit(int(rc))\n")
    r = run_python(code, timeout=180)
    assert r.returncode == 0, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert "1 passed" in r.stdout and "after 100" in r.stdout
