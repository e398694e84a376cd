"""py4j behaviours beyond calls and conversions, in both transports: auto_field, dir()
and __doc__ as py4j gives them."""
from __future__ import annotations

import pytest

from py4jni import JavaMember
from py4jni.java_gateway import UserHelpAutoCompletion

FX = "org.py4jni.fixtures"


@pytest.fixture
def auto_field(gateway):
    """The gateway's client with py4j's auto_field on for the test."""
    client = gateway._gateway_client
    old = client.auto_field
    client.auto_field = True
    yield gateway
    client.auto_field = old


def test_auto_field_reads_fields_as_attributes(auto_field):
    obj = auto_field.jvm.org.py4jni.fixtures.Fields()
    assert obj._auto_field is True
    assert obj.i == 3 and obj.str == "hello"
    assert isinstance(obj.toString, JavaMember)  # not a field: still a method
    assert "i" in dir(obj) and "toString" in dir(obj)


def test_without_auto_field_attributes_are_methods(gateway):
    obj = gateway.jvm.org.py4jni.fixtures.Fields()
    assert obj._auto_field is False
    assert isinstance(obj.i, JavaMember)  # py4j's default: every attribute is a member
    assert "i" not in dir(obj) and "toString" in dir(obj)


def test_gateway_parameters_auto_field_reaches_the_client(gateway):
    assert gateway._gateway_client.auto_field == gateway.gateway_parameters.auto_field


def test_dir_of_package_and_view_has_py4js_placeholder(gateway):
    assert dir(gateway.jvm.java.util) == [UserHelpAutoCompletion.KEY]
    assert getattr(gateway.jvm.java.util, UserHelpAutoCompletion.KEY) is UserHelpAutoCompletion
    view = gateway.new_jvm_view("dir-test")
    from py4jni import java_import
    java_import(view, "java.util.ArrayList")
    names = dir(view)
    assert UserHelpAutoCompletion.KEY in names and "ArrayList" in names
    assert isinstance(getattr(view, UserHelpAutoCompletion.KEY), UserHelpAutoCompletion)


def test_doc_is_py4js_help_page(gateway):
    sb = gateway.jvm.java.lang.StringBuilder()
    assert sb.__doc__.startswith("Help on class StringBuilder in package java.lang")
    doc = sb.append.__doc__
    assert "append(" in doc and "reverse" not in doc
    cls_doc = gateway.jvm.java.lang.Integer.__doc__
    assert "Help on class Integer in package java.lang" in cls_doc
    assert "parseInt" in cls_doc


def test_help_shows_py4js_page(gateway):
    import pydoc
    sb = gateway.jvm.java.lang.StringBuilder()
    page = pydoc.render_doc(sb, renderer=pydoc.plaintext)  # what help(sb) prints
    assert "Help on class StringBuilder in package java.lang" in page
    member_page = pydoc.render_doc(sb.reverse, renderer=pydoc.plaintext)
    assert "reverse(" in member_page and "append(" not in member_page
