"""A small py4jni user program, checked with ``mypy --strict`` against the installed
package (its py.typed marker and the _py4jni stubs): tests/ci/run_matrix.sh runs the check.
Run as a program it is also the wheel's smoke test: it prints "smoke OK" at the end."""
from __future__ import annotations

from py4jni import JavaGateway, JavaList, JavaObject, Py4JJavaError


class Doubler:
    """A Python implementation of java.util.function.IntUnaryOperator."""

    def applyAsInt(self, operand: int) -> int:
        return 2 * operand

    class Java:
        implements = ["java.util.function.IntUnaryOperator"]


def total(values: JavaList) -> int:
    """Sums a java.util.List of integers through the Python sequence protocol."""
    return sum(int(v) for v in values)


def main() -> None:
    gateway = JavaGateway()
    assert gateway.jvm.java.lang.Math.max(2, 3) == 3
    builder: JavaObject = gateway.jvm.java.lang.StringBuilder("a")
    builder.append(42)
    assert str(builder) == "a42"
    numbers = gateway.jvm.java.util.ArrayList()
    assert isinstance(numbers, JavaList)
    numbers.append(1)
    numbers.extend([2, 3])
    assert total(numbers) == 6 and len(numbers) == 3
    op = gateway.jvm.java.util.function.IntUnaryOperator
    doubled: int = op.identity().andThen(Doubler()).applyAsInt(21)
    assert doubled == 42
    try:
        gateway.jvm.java.lang.Integer.parseInt("not a number")
    except Py4JJavaError as exc:
        assert "NumberFormatException" in str(exc)
    version: str = gateway.jvm.java.lang.System.getProperty("java.version")
    gateway.shutdown()
    print("smoke OK: Java", version)


if __name__ == "__main__":
    main()
