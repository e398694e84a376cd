"""Names resolve through the calling thread's context class loader, as py4j's default
class-loading strategy resolves them, and a name that was not a class is asked again:
a class loader may find it later (a jar added at run time, a new context loader).

``p4jlate.Late`` is on no class path (py4jni-late-fixtures.jar beside the fixtures
jar); each test lets a class loader of its own find it, and gives the thread its
context class loader back.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Iterator

import pytest

from conftest import fixtures_jar, run_python
from py4jni import JavaClass, JavaGateway, JavaPackage


def late_jar() -> str:
    jar = os.path.join(os.path.dirname(fixtures_jar()), "py4jni-late-fixtures.jar")
    assert os.path.exists(jar), jar
    return jar


def url_loader(gateway: Any, *jars: str) -> Any:
    """A java.net.URLClassLoader over ``jars`` (child of the application loader)."""
    jvm = gateway.jvm
    urls = gateway.new_array(jvm.java.net.URL, len(jars))
    for i, jar in enumerate(jars):
        urls[i] = jvm.java.io.File(jar).toURI().toURL()
    return jvm.java.net.URLClassLoader(urls, jvm.ClassLoader.getSystemClassLoader())


@pytest.fixture
def own_loader(gateway: Any) -> Iterator[Any]:
    """The calling thread's context class loader, given back after the test."""
    thread = gateway.jvm.java.lang.Thread.currentThread()
    before = thread.getContextClassLoader()
    yield thread
    thread.setContextClassLoader(before)


def test_a_class_found_after_a_miss(gateway: Any, own_loader: Any) -> None:
    jvm = gateway.jvm
    assert isinstance(jvm.p4jlate.Late, JavaPackage)  # nothing has it yet
    assert isinstance(gateway.new_jvm_view().p4jlate.Late, JavaPackage)
    own_loader.setContextClassLoader(url_loader(gateway, late_jar()))
    assert jvm.p4jlate.Late.hi() == "hi from Late"
    assert gateway.new_jvm_view().p4jlate.Late.hi() == "hi from Late"


def test_a_jar_added_to_the_context_loader(gateway: Any, own_loader: Any) -> None:
    """As Spark's ADD JAR grows the driver's MutableURLClassLoader."""
    jvm = gateway.jvm
    loader = jvm.org.py4jni.fixtures.GrowingLoader()
    own_loader.setContextClassLoader(loader)
    assert isinstance(jvm.p4jlate.Late, JavaPackage)
    java_import_view = gateway.new_jvm_view()
    from py4jni import java_import
    java_import(java_import_view, "p4jlate.*")
    assert isinstance(java_import_view.Late, JavaPackage)
    loader.add(late_jar())
    assert jvm.p4jlate.Late.hi() == "hi from Late"
    assert java_import_view.Late.hi() == "hi from Late"


def test_a_miss_is_per_loader(gateway: Any, own_loader: Any) -> None:
    """A miss under one loader is no answer under another: back under the application
    loader the name is a package again, under the jar's loader a class again."""
    jvm = gateway.jvm
    before = own_loader.getContextClassLoader()
    late = url_loader(gateway, late_jar())
    own_loader.setContextClassLoader(late)
    assert isinstance(jvm.p4jlate.Late, JavaClass)
    own_loader.setContextClassLoader(before)
    assert isinstance(jvm.p4jlate.Other, JavaPackage)
    own_loader.setContextClassLoader(late)
    assert isinstance(gateway.new_jvm_view().p4jlate.Late, JavaClass)


def test_packages_on_the_way_to_a_class_are_kept(gateway: Any) -> None:
    """The whole-name chain reads kept objects: no lookup for java or java.lang."""
    jvm = gateway.jvm
    system = jvm.java.lang.System
    assert jvm.java.lang is jvm.java.lang
    assert jvm.java.lang.System is system
    assert jvm.p4jlate is not jvm.p4jlate  # asked again: no class below it yet


@pytest.mark.inproc_only("a client's class loader is an in-process setting")
def test_set_class_loader_of_a_client(inproc_gateway: Any) -> None:
    gw = JavaGateway(classpath=fixtures_jar())  # a second client of this JVM
    try:
        jvm = gw.jvm
        thread = jvm.java.lang.Thread
        own = thread.currentThread().getContextClassLoader()
        own_hash = jvm.System.identityHashCode(own)
        loader = url_loader(gw, late_jar())
        gw._gateway_client.set_class_loader(loader)
        assert thread.currentThread().getContextClassLoader().equals(loader)
        assert jvm.p4jlate.Late.hi() == "hi from Late"
        # the other client's calls on this thread run with the thread's own loader
        other = inproc_gateway.jvm.java.lang.Thread.currentThread()
        assert other.getContextClassLoader().equals(own)
        assert isinstance(inproc_gateway.jvm.p4jlate.Late, JavaPackage)
        assert thread.currentThread().getContextClassLoader().equals(loader)
        # another thread calling through the client gets the loader too
        seen: list[Any] = []
        t = threading.Thread(target=lambda: seen.append(jvm.p4jlate.Late.hi()))
        t.start()
        t.join(60)
        assert seen == ["hi from Late"]
        gw._gateway_client.set_class_loader(None)
        assert thread.currentThread().getContextClassLoader().equals(own)
        assert isinstance(jvm.p4jlate.Late, JavaPackage)
    finally:
        gw.shutdown()
    jvm = inproc_gateway.jvm
    assert jvm.System.identityHashCode(jvm.Thread.currentThread().getContextClassLoader()) \
        == own_hash


@pytest.mark.inproc_only("a client's class loader is an in-process setting")
def test_a_callback_gives_a_java_thread_its_loader_back(inproc_gateway: Any) -> None:
    """A Python callback on a Java thread that calls through a client with a loader
    leaves the Java thread's own context class loader as it was."""
    gw = JavaGateway(classpath=fixtures_jar())
    try:
        loader = url_loader(gw, late_jar())
        gw._gateway_client.set_class_loader(loader)

        class Task:
            def run(self) -> None:
                seen.append(gw.jvm.p4jlate.Late.hi())
                seen.append(gw.jvm.java.lang.Thread.currentThread().getContextClassLoader()
                            .equals(loader))

            class Java:
                implements = ["java.lang.Runnable"]

        seen: list[Any] = []
        jvm = inproc_gateway.jvm
        t = jvm.java.lang.Thread(Task())
        own = t.getContextClassLoader()
        t.start()
        t.join(60000)
        assert seen == ["hi from Late", True]
        assert t.getContextClassLoader().equals(own)
    finally:
        gw.shutdown()


@pytest.mark.inproc_only("the socket client's errors say so itself")
def test_set_class_loader_refuses_what_is_no_loader(inproc_gateway: Any) -> None:
    from py4jni import Py4JError
    gw = JavaGateway(classpath=fixtures_jar())
    try:
        with pytest.raises((Py4JError, TypeError)):
            gw._gateway_client.set_class_loader("not a loader")
        with pytest.raises(Py4JError):
            gw._gateway_client.set_class_loader(gw.jvm.java.lang.Object())
        assert gw.jvm.java.lang.Math.abs(-3) == 3
    finally:
        gw.shutdown()


@pytest.mark.socket_only("the socket client refuses a loader")
def test_set_class_loader_in_socket_mode(gateway: Any) -> None:
    from py4jni import Py4JError
    with pytest.raises(Py4JError, match="in-process"):
        gateway._gateway_client.set_class_loader(None)


def test_stale_lookups_in_a_fresh_process() -> None:
    """The issue's own sequence, in a process of its own: touch, then a loader."""
    code = f"""
from py4jni import JavaGateway
gw = JavaGateway()
jvm = gw.jvm
assert type(jvm.p4jlate.Late).__name__ == "JavaPackage"
urls = gw.new_array(jvm.java.net.URL, 1)
urls[0] = jvm.java.io.File({late_jar()!r}).toURI().toURL()
jvm.java.lang.Thread.currentThread().setContextClassLoader(jvm.java.net.URLClassLoader(urls))
print(jvm.p4jlate.Late.hi())
"""
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "hi from Late"
