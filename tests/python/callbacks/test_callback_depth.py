"""Python -> Java -> Python nesting on the interpreter's main thread: 1,000 levels (the
main thread's Java calls share its stack, which py4jni gives the JVM as -Xss), and past
what the stack holds a short error that names the cause. Processes of their own, with
the default JVM options (tests/ci/run_sanitizers.sh leaves them out: ASan's frames are
larger)."""
from __future__ import annotations

from conftest import run_python

CODE = """
import sys
sys.setrecursionlimit(100000)
from py4jni import JavaGateway
gw = JavaGateway()
IntStream = gw.jvm.java.util.stream.IntStream
class Op:  # IntStream.of(n).map(op).sum(): op calls the same again, n levels
    def applyAsInt(self, n):
        return 0 if n <= 0 else IntStream.of(n - 1).map(self).sum() + 1
    class Java:
        implements = ["java.util.function.IntUnaryOperator"]
try:
    print(IntStream.of({n}).map(Op()).sum())
except Exception as e:
    text = str(e)
    print(type(e).__name__, len(text), "callbacks nested too deeply" in text)
"""


def test_1000_levels_on_the_main_thread() -> None:
    r = run_python(CODE.format(n=1000), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == ["1000"]


def test_too_deep_is_a_short_error_naming_the_cause() -> None:
    r = run_python(CODE.format(n=20000), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    kind, length, named = r.stdout.split()
    assert kind == "Py4JJavaError" and named == "True"
    assert int(length) < 64 * 1024
