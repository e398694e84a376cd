"""Deeply nested Python collections under auto_convert: nested lists, tuples, dicts and
sets convert at any depth (py4jni makes the inner collections first, with a stack of
its own, not the C stack), a collection that contains itself is a clear error, and what
still converts by recursion (an iterable class of the program's own) stops at a clear
limit of the thread's stack instead of crashing the interpreter. Each case runs in a
process of its own (the recursion limit is raised, as the programs that hit this do)."""
from __future__ import annotations

import pytest

from conftest import fixtures_jar, run_python

PRELUDE = """
import sys
sys.setrecursionlimit(10**6)
from py4jni import JavaGateway, GatewayParameters, Py4JError
import os
port = int(os.environ.get("P4J_DEEP_PORT", "0"))
gw = (JavaGateway(gateway_parameters=GatewayParameters(port=port, auto_convert=True))
      if port else JavaGateway(auto_convert=True))
jvm = gw.jvm
def nest(n, make=lambda inner: [inner]):
    x = []
    for _ in range(n):
        x = make(x)
    return x
def depth(j):  # a Java list's depth, counted in Java-free Python over JavaList
    d = 0
    while j.size():
        j = j.get(0)
        d += 1
    return d
"""


def _run(code: str, port: int = 0) -> str:
    import os
    env_code = f"import os\nos.environ['P4J_DEEP_PORT'] = '{port}'\n" + PRELUDE + code
    r = run_python(env_code, timeout=300)
    assert r.returncode == 0, (r.returncode, r.stdout[-2000:], r.stderr[-3000:])
    return r.stdout


@pytest.fixture(params=["inproc", "socket"])
def port(request: pytest.FixtureRequest) -> int:
    return request.getfixturevalue("py4j_server") if request.param == "socket" else 0


def test_lists_2000_deep(port: int) -> None:
    out = _run("""
l = nest(2000)
one = jvm.java.util.Collections.singletonList(l)      # one overload
print(depth(one.get(0)))
print(len(jvm.java.util.Objects.toString(l)))        # overloaded
""", port)
    assert out.split() == ["2000", "4002"]  # 2,001 lists: "[" and "]" each


def test_mixed_containers_deep(port: int) -> None:
    out = _run("""
x = nest(700, lambda inner: {"k": (inner,)})
m = jvm.java.util.Collections.singletonList(x).get(0)
d = 0
while m.size():
    m = m.get("k").get(0)
    d += 1
print(d)
s = jvm.java.util.Collections.singletonList([{1, 2}, frozenset({3}), (4, [5])])
print(s.get(0).get(0).size(), s.get(0).get(2).get(1).get(0))
""", port)
    assert out.split() == ["700", "2", "5"]


@pytest.mark.parametrize("n", [10_000, 50_000])
def test_lists_far_deeper_in_process(n: int) -> None:
    out = _run(f"""
print(depth(jvm.java.util.Collections.singletonList(nest({n})).get(0)))
""")
    assert out.split() == [str(n)]


def test_a_list_that_contains_itself() -> None:
    out = _run("""
l = [1]
l.append([2, l])
try:
    jvm.java.util.Collections.singletonList(l)
except Py4JError as e:
    print("Py4JError", "contains itself" in str(e))
""")
    assert out.split() == ["Py4JError", "True"]


def test_a_program_iterable_nested_too_deeply_is_a_clear_error() -> None:
    out = _run("""
class Box:
    def __init__(self, inner): self.inner = inner
    def __iter__(self): return iter([self.inner] if self.inner is not None else [])
b = None
for _ in range(200_000):
    b = Box(b)
try:
    jvm.java.util.Collections.singletonList(b)
    print("converted")
except Py4JError as e:
    print("Py4JError", "nests too deeply" in str(e), len(str(e)) < 300)
print(jvm.java.lang.Math.abs(-7))  # the gateway goes on
""")
    assert out.split() == ["Py4JError", "True", "True", "7"]


def test_what_no_converter_takes_says_auto_convert_is_on(gateway) -> None:  # type: ignore[no-untyped-def]
    from py4jni import GatewayParameters, JavaGateway, Py4JError
    client = gateway._gateway_client
    gw = (JavaGateway(classpath=fixtures_jar(), auto_convert=True) if client.kind == "inproc" else
          JavaGateway(gateway_parameters=GatewayParameters(port=client.port,
                                                           auto_convert=True)))
    with pytest.raises(Py4JError, match="auto_convert is on") as info:
        gw.jvm.java.util.Objects.toString(object())
    assert "need auto_convert=True" not in str(info.value)
