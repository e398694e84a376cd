"""What a gateway's parameters and imports reach: the objects of a gateway nobody keeps
convert as its parameters say, and an in-process gateway's imports end with it (each
in-process gateway is a server of its own, with its own default view, as each py4j
GatewayServer has)."""
from __future__ import annotations

from typing import Any

import pytest

from conftest import fixtures_jar
from py4jni import GatewayParameters, JavaGateway, java_import


def _unkept_jvm(gateway: Any) -> Any:
    """The jvm view of a new gateway of the same transport, the gateway not kept."""
    client = gateway._gateway_client
    if client.kind == "inproc":
        return JavaGateway(classpath=fixtures_jar(), auto_convert=True).jvm
    return JavaGateway(gateway_parameters=GatewayParameters(port=client.port,
                                                            auto_convert=True)).jvm


def test_the_jvm_of_an_unkept_gateway_keeps_auto_convert(gateway: Any) -> None:
    import gc
    jvm = _unkept_jvm(gateway)
    gc.collect()
    assert jvm.java.util.Collections.singletonList([[]]).get(0).get(0).size() == 0
    assert jvm.java.util.Collections.singletonList({1: 2}).get(0).get(1) == 2


@pytest.mark.inproc_only("py4j's clients of one GatewayServer share its default view")
def test_imports_end_with_the_gateway(inproc_gateway: Any) -> None:
    g1 = JavaGateway(classpath=fixtures_jar())
    java_import(g1.jvm, "java.util.concurrent.ConcurrentHashMap")
    assert "ConcurrentHashMap" in dir(g1.jvm)
    g1.shutdown()
    g2 = JavaGateway(classpath=fixtures_jar())
    try:
        assert "ConcurrentHashMap" not in dir(g2.jvm)
        assert type(g2.jvm.ConcurrentHashMap).__name__ == "JavaPackage"
        assert "ConcurrentHashMap" not in dir(inproc_gateway.jvm)
    finally:
        g2.shutdown()


@pytest.mark.inproc_only("py4j's clients of one GatewayServer share its default view")
def test_two_live_gateways_have_their_own_imports(inproc_gateway: Any) -> None:
    g1 = JavaGateway(classpath=fixtures_jar())
    try:
        java_import(g1.jvm, "java.util.concurrent.ConcurrentSkipListSet")
        assert g1.jvm.ConcurrentSkipListSet().size() == 0
        assert "ConcurrentSkipListSet" not in dir(inproc_gateway.jvm)
    finally:
        g1.shutdown()
