"""Steps of a framework driver program run in a child process (tests/python/frameworks/pyspark_driver.py,
tests/python/frameworks/pyspark_packages_driver.py), and their check in the tests that read them: each
step's result, or its error, lands in `results`, which the driver prints as one JSON line."""
from __future__ import annotations

import traceback
from typing import Any, Callable

results: dict[str, Any] = {}


def step(name: str) -> Callable[[Callable[[], Any]], None]:
    """Runs the decorated function now; records its result (or its error) under name."""
    def run(fn: Callable[[], Any]) -> None:
        try:
            results[name] = fn()
        except BaseException as exc:  # noqa: BLE001 - every failure is a test result
            results[name] = {"error": f"{type(exc).__module__}.{type(exc).__name__}",
                             "message": str(exc)[:500], "trace": traceback.format_exc()[-2000:]}
    return run


def ok(res: dict[str, Any], name: str) -> Any:
    """The result of step `name` in a driver's results; fails the test with the step's
    trace when it raised."""
    value = res[name]
    assert not (isinstance(value, dict) and "error" in value), \
        f"step {name} raised {value.get('error')}: {value.get('trace')}"
    return value
