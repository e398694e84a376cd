"""Conversions check what they convert (issue 9): a JavaObject never becomes a char or a
Character, even a CharSequence; set_field errors name Python and Java types."""
from __future__ import annotations

import pytest

from py4jni import Py4JError, set_field

CHAR_DEVIATION = ("py4j's server passes a CharSequence's first character to a char "
                  "parameter; py4jni does not (README: Deviations from py4j)")


@pytest.mark.inproc_only(CHAR_DEVIATION)
def test_append_builder_appends_all_of_it(gateway):
    sb = gateway.jvm.java.lang.StringBuilder("q")
    assert sb.append(gateway.jvm.java.lang.StringBuilder("abc")).toString() == "qabc"
    assert sb.insert(0, gateway.jvm.java.lang.StringBuilder("xy")).toString() == "xyqabc"


@pytest.mark.inproc_only(CHAR_DEVIATION)
def test_value_of_builder_is_its_text(gateway):
    String = gateway.jvm.java.lang.String
    assert String.valueOf(gateway.jvm.java.lang.StringBuilder("xyz")) == "xyz"


@pytest.mark.inproc_only(CHAR_DEVIATION)
def test_writer_append_and_println_take_builders(gateway):
    jvm = gateway.jvm
    sw = jvm.java.io.StringWriter()
    sw.append(jvm.java.lang.StringBuilder("w1")).append(jvm.java.lang.StringBuilder(""))
    assert sw.toString() == "w1"
    out = jvm.java.io.ByteArrayOutputStream()
    ps = jvm.java.io.PrintStream(out, True)
    ps.println(jvm.java.lang.StringBuilder("line"))
    ps.println(jvm.java.lang.StringBuilder(""))  # empty: was "an empty str cannot be a char"
    assert out.toString() == "line\n\n"


def test_str_still_becomes_char(gateway):
    O = gateway.jvm.org.py4jni.fixtures.Overloads
    assert O.takeChar("d") == "char:d"
    assert O.takeCharacter("c") == "Character:c"


@pytest.mark.inproc_only(CHAR_DEVIATION)
@pytest.mark.parametrize("method", ["takeChar", "takeCharacter"])
def test_builder_is_never_a_char_or_character(gateway, method):
    jvm = gateway.jvm
    with pytest.raises(Py4JError, match="no overload accepts"):
        getattr(jvm.org.py4jni.fixtures.Overloads, method)(jvm.java.lang.StringBuilder("x"))


@pytest.mark.inproc_only("py4j's server words its own field errors")
@pytest.mark.parametrize("field,value,message", [
    ("i", "not an int", "cannot assign a str to field i of type int"),
    ("i", 1.5, "cannot assign a float to field i of type int"),
    ("c", 5, "cannot assign a int to field c of type char"),
    ("z", None, "cannot assign a None to field z of type boolean"),
    ("str", 5, "cannot assign a int to field str of type java.lang.String"),
])
def test_set_field_mismatch_names_python_and_java_types(gateway, field, value, message):
    f = gateway.jvm.org.py4jni.fixtures.Fields()
    with pytest.raises(Py4JError, match=message):
        set_field(f, field, value)


@pytest.mark.inproc_only("py4j's server words its own field errors")
def test_set_field_object_of_wrong_class(gateway):
    f = gateway.jvm.org.py4jni.fixtures.Fields()
    with pytest.raises(Py4JError, match=r"cannot assign a JavaObject \(java.util.ArrayList\) "
                                        r"to field str of type java.lang.String"):
        set_field(f, "str", gateway.jvm.java.util.ArrayList())
