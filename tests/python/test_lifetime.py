"""Object lifetime: dropping the last Python reference releases the Java object."""
from __future__ import annotations

import gc

import pytest

from py4jni import Py4JError


@pytest.mark.inproc_only("counts JNI global references of this process")
def test_dropped_objects_release_global_refs(gateway):
    client = gateway._gateway_client
    cls = gateway.jvm.java.lang.StringBuilder
    cls()  # warm the caches (class entries hold their own global refs)
    gc.collect()
    before = client.global_ref_count()
    for _ in range(100_000):
        sb = cls("x")
        sb.append(1)
    del sb
    gc.collect()
    assert client.global_ref_count() == before


@pytest.mark.inproc_only("counts JNI global references of this process")
def test_exceptions_and_results_release_refs(gateway):
    client = gateway._gateway_client
    lst = gateway.jvm.java.util.ArrayList()
    fx = gateway.jvm.org.py4jni.fixtures

    def round_trip():
        try:
            lst.get(5)
        except Py4JError as exc:
            str(exc)  # fetches the stack trace
        fx.Bytes.make(10)
        fx.Conversions.bigInteger()

    round_trip()  # warm: class and method caches hold global refs of their own
    gc.collect()
    before = client.global_ref_count()
    for _ in range(1000):
        round_trip()
    gc.collect()
    assert client.global_ref_count() == before


def test_detach_then_drop(gateway):
    sb = gateway.jvm.java.lang.StringBuilder("x")
    gateway.detach(sb)
    gateway.detach(sb)  # twice is harmless
    del sb


def test_results_outlive_their_member(gateway):
    append = gateway.jvm.java.lang.StringBuilder("a").append
    assert str(append("b")) == "ab"  # the member keeps its object alive
