"""Overload resolution as py4j chooses (section 3), with py4jni's overflow errors."""
from __future__ import annotations

from decimal import Decimal

import pytest

from py4jni import Py4JError


@pytest.fixture
def ov(gateway):
    return gateway.jvm.org.py4jni.fixtures.Overloads()


@pytest.mark.parametrize("method,arg,expected", [
    ("intLong", 1, "int"), ("intLong", 2**40, "long"), ("longOnly", 1, "long"),
    ("shortByte", 1, "short"), ("byteOnly", 1, "byte"),
    ("boxed", 1, "Integer"), ("boxed", 2**40, "Long"),
    ("doubleFloat", 1.5, "double"), ("floatOnly", 1.5, "float"), ("doubleBox", 1.5, "Double"),
    ("floatBox", 1.5, "Float"), ("strChar", "a", "String"), ("obj", "s", "String"),
    ("boolOnly", True, "boolean"), ("boolInt", True, "boolean"),
    ("boolInt", 3, "int"), ("boolBox", False, "Boolean"), ("number", 3, "Number"),
    ("bytes", b"x", "byte[]"), ("bytes", "x", "String"), ("bytesObj", b"x", "Object"),
    ("decimal", Decimal("1"), "BigDecimal"), ("decimal", 1.0, "double"),
    ("nulPrim", None, "String"), ("nulEcho", None, "String:null"),
])
def test_choice(ov, method, arg, expected):
    assert getattr(ov, method)(arg) == expected


@pytest.mark.inproc_only("equal-cost ties: py4j's server takes getMethods() order, "
                         "which the JVM does not fix; py4jni orders candidates itself")
@pytest.mark.parametrize("method,arg,expected", [
    ("longShort", 1, "long"), ("objSeq", "s", "CharSequence"), ("intInteger", 1, "int"),
    ("numberComparable", 1, "Number")])
def test_tie_order_is_deterministic(ov, method, arg, expected):
    assert getattr(ov, method)(arg) == expected


def test_null_picks_most_derived(ov, gateway):
    assert ov.nul(None) == "MoreDerived"
    assert gateway.jvm.org.py4jni.fixtures.Overloads.sNul(None) == "MoreDerived"


def test_reference_distance(ov, gateway):
    fx = gateway.jvm.org.py4jni.fixtures
    assert ov.ref(fx.Derived()) == "Derived"
    assert ov.ref(fx.MoreDerived()) == "Derived"
    assert ov.ref(fx.Base()) == "Base"
    assert ov.list(gateway.jvm.java.util.ArrayList()) == "List"
    assert ov.list(gateway.jvm.java.util.HashSet()) == "Collection"


def test_arity_and_pairs(ov):
    assert ov.arity() == "0" and ov.arity(1) == "1" and ov.arity(1, 2) == "2"
    assert ov.pair(1, "a") == "int,String"
    assert ov.pair(2**40, "a") == "long,String"
    assert ov.pair("a", 1) == "String,int"


def test_int_is_not_a_double(ov, gateway):
    with pytest.raises(Py4JError):
        ov.doubleOnly(4)
    with pytest.raises(Py4JError):
        gateway.jvm.java.lang.Math.sqrt(4)
    assert gateway.jvm.java.lang.Math.sqrt(4.0) == 2.0


@pytest.mark.inproc_only("in socket mode the message is py4j's server's own (no candidates)")
def test_no_applicable_method_lists_candidates(ov):
    with pytest.raises(Py4JError) as info:
        ov.intLong("text")
    msg = str(info.value)
    assert "intLong" in msg and "str" in msg and "int" in msg and "long" in msg


def test_unknown_method(ov):
    with pytest.raises(Py4JError, match="nosuchmethod"):
        ov.nosuchmethod(1)


@pytest.mark.inproc_only("py4j's server chooses the overload and truncates; the socket "
                         "client does not know the parameter types")
def test_overflow_is_an_error_not_truncation(ov):
    with pytest.raises(Py4JError, match="out of range"):
        ov.byteOnly(300)
    with pytest.raises(Py4JError, match="out of range"):
        ov.shortOnly(70000)
    assert ov.byteOnly(-128) == "byte"


def test_constructor_overloads(gateway):
    from py4jni import get_field
    fx = gateway.jvm.org.py4jni.fixtures
    assert get_field(fx.Overloads(1), "made") == "int"
    assert get_field(fx.Overloads(2**40), "made") == "long"
    assert get_field(fx.Overloads("s"), "made") == "String"
    assert get_field(fx.Overloads(fx.Derived(), None), "made") == "Derived,Object"
    with pytest.raises(Py4JError, match="Overloads"):
        fx.Overloads(1.5)


def test_inherited_and_static_through_instance(ov, gateway):
    assert ov.inherited("s") == "String"
    assert ov.inherited(ov) == "Object"
    assert ov.baseOnly(1) == "base int"
    assert gateway.jvm.org.py4jni.fixtures.Overloads.sIntLong(1) == "int"
    assert gateway.jvm.org.py4jni.fixtures.Overloads.sAny(True) == "boolean"


def test_same_call_with_different_kinds_uses_separate_cache_entries(ov):
    for _ in range(3):
        assert ov.intLong(1) == "int"
        assert ov.intLong(2**40) == "long"
