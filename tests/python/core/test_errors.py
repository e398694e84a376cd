"""Java exceptions and bridge errors: clear, typed, and never fatal."""
from __future__ import annotations

import pytest

from py4jni import JavaObject, Py4JError, Py4JJavaError


@pytest.fixture
def thrower(gateway):
    return gateway.jvm.org.py4jni.fixtures.Thrower


def test_java_exception_is_py4j_java_error(thrower):
    with pytest.raises(Py4JJavaError) as info:
        thrower.unchecked("boom")
    err = info.value
    assert isinstance(err.java_exception, JavaObject)
    assert err.java_exception.getMessage() == "unchecked: boom"
    text = str(err)
    assert text.startswith("An error occurred while calling z:org.py4jni.fixtures.Thrower.unchecked")
    assert "unchecked: boom" in text
    assert "\tat org.py4jni.fixtures.Thrower.unchecked" in text  # stack trace at the end


def test_checked_custom_and_nested(thrower):
    with pytest.raises(Py4JJavaError, match="IOException"):
        thrower.checked("io")
    with pytest.raises(Py4JJavaError, match="CustomException"):
        thrower.custom()
    with pytest.raises(Py4JJavaError) as info:
        thrower.nested()
    assert "Caused by" in str(info.value)


def test_error_on_instance_call_names_target(gateway):
    lst = gateway.jvm.java.util.ArrayList()
    with pytest.raises(Py4JJavaError) as info:
        lst.get(-1)
    assert f"calling {lst._target_id}.get" in str(info.value)
    assert "IndexOutOfBoundsException" in str(info.value)


def test_program_continues_after_errors(thrower, gateway):
    for _ in range(100):
        with pytest.raises(Py4JJavaError):
            thrower.npe()
    assert thrower.divide(6, 3) == 2
    with pytest.raises(Py4JJavaError, match="ArithmeticException"):
        thrower.divide(1, 0)


def test_unicode_message(thrower):
    with pytest.raises(Py4JJavaError) as info:
        thrower.unicode()
    assert info.value.java_exception.getMessage() == "non-ascii: \u00e9 \U0001f600"
    assert "\U0001f600" in str(info.value)


def test_returned_throwable_is_a_plain_object(thrower, gateway):
    exc = thrower.make("m")
    assert isinstance(exc, JavaObject)
    assert exc.getCause().getMessage() == "cause of m"


def test_error_subclass_not_exception(thrower):
    with pytest.raises(Py4JJavaError, match="AssertionError: assert"):
        thrower.error()


def test_unknown_class_member_field(gateway):
    with pytest.raises(Py4JError):
        gateway.jvm.java.lang.String.noSuchStatic
    with pytest.raises(Py4JError):
        gateway.jvm.java.util.ArrayList().noSuchMethod()


def test_keyword_arguments_are_refused(gateway):
    with pytest.raises(TypeError, match="keyword"):
        gateway.jvm.java.lang.Math.max(a=1, b=2)


def test_py4j_java_error_is_a_py4j_error(thrower):
    with pytest.raises(Py4JError):
        thrower.npe()


def test_java_error_attributes_are_py4js(gateway):
    """The error path builds Py4JJavaError without the hook when it is not replaced and
    makes exception_cmd on first read: the attributes stay py4j's."""
    from py4jni.protocol import END_COMMAND_PART, EXCEPTION_COMMAND_NAME, REFERENCE_TYPE

    lst = gateway.jvm.java.util.ArrayList()
    with pytest.raises(Py4JJavaError) as info:
        lst.get(-1)
    err = info.value
    assert err.errmsg == f"An error occurred while calling {lst._target_id}.get.\n"
    assert err.args == (err.errmsg,)
    assert err.cause is err.java_exception
    assert err.java_exception.getClass().getName() == "java.lang.IndexOutOfBoundsException"
    target = err.java_exception._target_id
    assert err.exception_cmd == f"{EXCEPTION_COMMAND_NAME}{REFERENCE_TYPE}{target}\n{END_COMMAND_PART}"
    assert "exception_cmd" in err.__dict__  # made once
    assert not hasattr(err, "no_such_attribute")
    with pytest.raises(AttributeError, match="no_such_attribute"):
        err.no_such_attribute
    assert str(err) == str(err)
    assert str(err).startswith(err.errmsg + ": java.lang.IndexOutOfBoundsException")


def test_java_error_of_a_constructor_and_a_static_call(gateway):
    with pytest.raises(Py4JJavaError) as info:
        gateway.jvm.java.lang.Integer.parseInt("x")
    assert info.value.errmsg == "An error occurred while calling z:java.lang.Integer.parseInt.\n"
    assert "NumberFormatException" in str(info.value)
    with pytest.raises(Py4JJavaError) as info:
        gateway.jvm.java.util.ArrayList(-1)
    assert "IllegalArgumentException" in str(info.value)


def test_client_operations_check_the_kind_of_object_they_are_given(gateway):
    # the client's view and stack-trace operations take any JavaObject from Python; JNI
    # does not check the type a helper method declares, so a StringBuilder given as a
    # view or a Throwable crashed the JVM (Klass::method_at_vtable, JVMView.addImport)
    client = gateway._gateway_client
    sb = gateway.jvm.java.lang.StringBuilder("x")
    uses = {
        "stack_trace": lambda: client.stack_trace(sb),
        "view_import": lambda: client.view_import(sb, "java.util.*", False),
        "view_remove": lambda: client.view_import(sb, "java.util.*", True),
        "resolve": lambda: client.resolve(sb, "ArrayList"),
    }
    for name, use in uses.items():
        with pytest.raises(Py4JError):
            use()
            pytest.fail(name)
    assert str(sb) == "x"  # the object and the gateway still work
