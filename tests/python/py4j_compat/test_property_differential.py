"""Property-based differential: Hypothesis draws Python values (nested lists, dicts and
sets, every numeric edge, str with lone surrogates and NUL, bytes, None) and Java calls
over them; each call runs through py4j's own client against py4j's GatewayServer,
through py4jni in-process and through py4jni's socket client against the same server,
all with auto_convert. The answers must be equal, or differ as a row of
docs/deviations.md says (DEVIATIONS below names the row for each rule). A crash of the
interpreter fails the module; a difference found later is a property missing here.

The examples are drawn from a fixed seed (derandomize) so that CI is repeatable;
P4J_HYPOTHESIS_EXAMPLES=N draws N examples per property instead (N=2000 in a few
minutes: what to run after changing conversions). tests/ci/run_sanitizers.sh runs the
in-process properties under ASan+UBSan (the socket ones are deselected there by name).
"""
from __future__ import annotations

import gc
import math
import os
import sys
import threading
from typing import Any, Callable

import pytest

from conftest import fixtures_jar, py4j_jar, summary_line

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

pytestmark = pytest.mark.skipif(py4j_jar() is None, reason="py4j's jar is not installed")

EXAMPLES = int(os.environ.get("P4J_HYPOTHESIS_EXAMPLES", "120"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))

# --- values ----------------------------------------------------------------------------

INT_EDGES = [0, 1, -1, 2**31 - 1, -2**31, 2**31, -2**31 - 1, 2**63 - 1, -2**63, 2**63,
             -2**63 - 1, 2**64, 10**30, -10**30]
FLOAT_EDGES = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
               -1.7976931348623157e308, math.inf, -math.inf, math.nan, 1.4e-45, 3.4028235e38,
               0.1, 1 / 3]
INTS = st.integers(-2**31, 2**31 - 1) | st.integers(-2**63, 2**63 - 1) | st.sampled_from(INT_EDGES)
FLOATS = st.floats() | st.sampled_from(FLOAT_EDGES)
# every code point, lone surrogates included, and NUL
TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()),
               max_size=12) | st.sampled_from(["", "\0", "a\0b", "\ud800", "\udfff", "x\ud83d",
                                                "\U0001f600", "\n\r\t"])
HASHABLE = st.none() | st.booleans() | INTS | FLOATS | TEXT
SCALARS = HASHABLE | st.binary(max_size=24)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (st.lists(inner, max_size=4) | st.tuples(inner, inner)
                   | st.dictionaries(HASHABLE, inner, max_size=4)
                   | st.frozensets(HASHABLE, max_size=4) | st.sets(HASHABLE, max_size=4)),
    max_leaves=16)


def nested(depth: int, kind: str) -> Any:
    x: Any = []
    for i in range(depth):
        x = [x] if kind == "list" else {"k": x} if kind == "dict" else [i, (x,)]
    return x


DEEP = st.tuples(st.integers(1, 2000), st.sampled_from(["list", "dict", "mixed"]))

# --- what is compared -------------------------------------------------------------------


def contains(v: Any, pred: Callable[[Any], bool]) -> bool:
    """Whether ``pred`` holds for ``v`` or anything nested in it (iteratively)."""
    todo = [v]
    while todo:
        x = todo.pop()
        if pred(x):
            return True
        if isinstance(x, dict):
            todo.extend(x.keys())
            todo.extend(x.values())
        elif isinstance(x, (list, tuple, set, frozenset)):
            todo.extend(x)
    return False


def surrogate(x: Any) -> bool:
    return isinstance(x, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in x)


def java_name(gateway: Any, obj: Any) -> str:
    return str(obj.getClass().getName())


def normal(v: Any, depth: int = 0) -> Any:
    """A Python answer as a comparable value (Java collections read out, NaN as a
    marker, -0.0 kept apart from 0.0)."""
    if depth > 50:
        return "..."
    if isinstance(v, float):
        return ("float", "nan") if v != v else ("float", repr(v))
    if isinstance(v, (bool, int, str, bytes, type(None))):
        return (type(v).__name__, v)
    name = type(v).__name__
    if name in ("JavaList", "JavaArray"):
        return ("list", [normal(x, depth + 1) for x in v])
    if name == "JavaSet":  # sorted by their text, kept as values (no text in text)
        return ("set", sorted((normal(x, depth + 1) for x in v), key=repr))
    if name == "JavaMap":
        return ("map", sorted(((normal(k, depth + 1), normal(v[k], depth + 1)) for k in v),
                              key=repr))
    return ("object", str(v))


# Each probe: name, applies(value), call(gateway, value) -> answer to normalise.
PROBES: list[tuple[str, Callable[[Any], bool], Callable[[Any, Any], Any]]] = [
    # structural: order-free for sets and maps, identity-free without byte[] inside
    ("Objects.hashCode", lambda v: not contains(v, lambda x: isinstance(x, bytes)),
     lambda g, v: g.jvm.java.util.Objects.hashCode(v)),
    # text of lists and scalars (a HashMap's or HashSet's order depends on its capacity)
    ("Objects.toString", lambda v: not contains(
        v, lambda x: isinstance(x, (bytes, dict, set, frozenset))),
     lambda g, v: g.jvm.java.util.Objects.toString(v)),
    ("class of the Java value", lambda v: v is not None,
     lambda g, v: g.jvm.java.util.Objects.requireNonNull(v).getClass().getName()),
    ("round trip through a Java list", lambda v: True,
     lambda g, v: g.jvm.java.util.Collections.singletonList(v).get(0)),
    ("String.valueOf(Object)", lambda v: not contains(
        v, lambda x: isinstance(x, (bytes, dict, set, frozenset))),
     lambda g, v: g.jvm.java.lang.String.valueOf(g.jvm.java.util.Objects.requireNonNullElse(
         v, "null"))),
    ("Arrays.hashCode(byte[])", lambda v: isinstance(v, bytes),
     lambda g, v: g.jvm.java.util.Arrays.hashCode(v)),
]


def outcome(gateway: Any, call: Callable[[Any, Any], Any], value: Any) -> tuple:
    """What a call answered: ("ok", normal value), ("java", exception class) or
    ("refused", error class name) for the bridge's own errors."""
    try:
        return ("ok", normal(call(gateway, value)))
    except Exception as exc:  # noqa: BLE001 - the outcome is compared
        java = getattr(exc, "java_exception", None)
        if java is not None:
            return ("java", str(java.getClass().getName()))
        return ("refused", type(exc).__name__)


def _lone_surrogate(value: Any, theirs: tuple, ours: tuple) -> bool:
    return (contains(value, surrogate) and theirs == ("refused", "Py4JError")
            and ours == ("refused", "UnicodeEncodeError"))


def _astral_char(value: Any, theirs: tuple, ours: tuple) -> bool:
    return (isinstance(value, str) and value != "" and ord(value[0]) > 0xFFFF
            and theirs[0] == "ok" and ours == ("refused", "Py4JError"))


DEVIATIONS: dict[str, tuple[str, Callable[[Any, tuple, tuple], bool]]] = {
    "a str holding a lone surrogate": (
        "py4j's client fails sending it (Py4JError); py4jni raises UnicodeEncodeError "
        "naming the position, before anything is sent", _lone_surrogate),
    "a str whose first character is outside the BMP, to a char": (
        "py4j passes the first half of its surrogate pair (String.valueOf(str) picks "
        "valueOf(char)); py4jni raises Py4JError: a char cannot hold it", _astral_char),
}


class Runs:
    """The three gateways, with auto_convert."""

    def __init__(self, port: int) -> None:
        from py4j.java_gateway import GatewayParameters as TheirParameters
        from py4j.java_gateway import JavaGateway as TheirGateway

        from py4jni import GatewayParameters, JavaGateway
        self.theirs = TheirGateway(gateway_parameters=TheirParameters(port=port,
                                                                      auto_convert=True))
        self.inproc = JavaGateway(classpath=fixtures_jar(), auto_convert=True)
        self.socket = JavaGateway(gateway_parameters=GatewayParameters(port=port,
                                                                       auto_convert=True))
        self.counts: dict[str, int] = {}

    def check(self, value: Any, modes: tuple[str, ...]) -> None:
        for name, applies, call in PROBES:
            if not applies(value):
                continue
            theirs = outcome(self.theirs, call, value)
            for mode in modes:
                ours = outcome(getattr(self, mode), call, value)
                key = f"{mode}: {name}"
                if ours == theirs:
                    self.counts[key + " equal"] = self.counts.get(key + " equal", 0) + 1
                    continue
                why = [d for d, (_, rule) in DEVIATIONS.items() if rule(value, theirs, ours)]
                assert why, (f"{mode} differs from py4j for {name}({value!r:.300}): py4jni "
                             f"{ours!r:.300} != py4j {theirs!r:.300}")
                self.counts[key + " documented"] = self.counts.get(key + " documented", 0) + 1

    def close(self) -> None:
        gc.collect()
        self.theirs.close()
        self.socket.close()
        self.inproc.shutdown()


@pytest.fixture(scope="module")
def runs(py4j_server: int) -> Any:
    r = Runs(py4j_server)
    yield r
    summary_line("property differential: " + ", ".join(f"{k} {n}" for k, n in
                                                        sorted(r.counts.items())))
    r.close()


def _with_deep_stack(fn: Callable[[], None]) -> None:
    """Runs ``fn`` on a thread with a large stack and recursion limit: py4j's client
    converts nested collections by recursion."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors.append(exc)

    old_limit, old_size = sys.getrecursionlimit(), threading.stack_size()
    sys.setrecursionlimit(200_000)
    threading.stack_size(512 << 20)
    try:
        t = threading.Thread(target=run)
        t.start()
        t.join()
    finally:
        threading.stack_size(old_size)
        sys.setrecursionlimit(old_limit)
    if errors:
        raise errors[0]


@SETTINGS
@given(value=VALUES)
def test_values_inproc(runs: Any, value: Any) -> None:
    runs.check(value, ("inproc",))


@SETTINGS
@given(value=VALUES)
def test_values_socket(runs: Any, value: Any) -> None:
    runs.check(value, ("socket",))


@settings(SETTINGS, max_examples=max(4, EXAMPLES // 20))
@given(deep=DEEP)
def test_deep_values_inproc(runs: Any, deep: tuple[int, str]) -> None:
    _with_deep_stack(lambda: runs.check(nested(*deep), ("inproc",)))


@settings(SETTINGS, max_examples=max(4, EXAMPLES // 20))
@given(deep=DEEP)
def test_deep_values_socket(runs: Any, deep: tuple[int, str]) -> None:
    _with_deep_stack(lambda: runs.check(nested(*deep), ("socket",)))


def test_the_edges_are_drawn(runs: Any) -> None:
    """The edges themselves, once each, whatever Hypothesis drew."""
    for v in INT_EDGES + FLOAT_EDGES + ["\0", "\ud800", "\U0001f600", "\U00010000b", b"",
                                        b"\0\xff", None, True]:
        runs.check(v, ("inproc", "socket"))
    _with_deep_stack(lambda: runs.check(nested(2000, "list"), ("inproc", "socket")))
