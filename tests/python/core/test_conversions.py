"""Python <-> Java conversions, py4j's rules (docs/guide.md, "Values and objects")."""
from __future__ import annotations

import math
from decimal import Decimal

import pytest

from py4jni import JavaObject, Py4JError


@pytest.fixture
def fx(gateway):
    return gateway.jvm.org.py4jni.fixtures


def test_scalars_round_trip(fx):
    c = fx.Conversions
    assert c.typeOf(None) == "null"
    assert c.typeOf(True) == "java.lang.Boolean"
    assert c.typeOf(7) == "java.lang.Integer"
    assert c.typeOf(2**31) == "java.lang.Long"
    assert c.typeOf(-2**31 - 1) == "java.lang.Long"
    assert c.typeOf(1.5) == "java.lang.Double"
    assert c.typeOf("s") == "java.lang.String"
    assert c.typeOf(b"x") == "[B"
    assert c.typeOf(Decimal("1.5")) == "java.math.BigDecimal"


def test_int_beyond_64_bits_is_an_error(fx):
    with pytest.raises(Py4JError, match="long"):
        fx.Conversions.typeOf(2**64)


def test_results(fx):
    c = fx.Conversions
    assert c.integer() == 7 and type(c.integer()) is int
    assert c.longValue() == 1 << 40
    assert c.minLong() == -2**63
    assert c.doubleValue() == 1.5
    assert c.floatValue() == fx.Strings.tenth() == 0.1  # Float.toString's value
    assert c.shortValue() == -3 and c.byteValue() == -4
    assert c.booleanValue() is True
    assert c.character() == "x" and c.primitiveChar() == "y"
    assert c.nullInteger() is None
    assert c.nothing() is None
    assert c.bigDecimal() == Decimal("1.10") and str(c.bigDecimal()) == "1.10"
    assert c.decimalEcho(Decimal("-0.000001")) == Decimal("-0.000001")
    big = c.bigInteger()
    assert isinstance(big, JavaObject) and big.toString() == str(1 << 70)
    assert isinstance(c.color(), JavaObject) and c.color().name() == "GREEN"
    assert isinstance(c.stringClass(), JavaObject)


def test_floats(fx):
    s = fx.Strings
    assert s.tenth() == 0.1
    assert s.floatEcho(0.1) == 0.1
    assert s.doubleEcho(0.1) == 0.1
    assert s.doubleEcho(float("inf")) == float("inf")
    assert s.doubleEcho(float("-inf")) == float("-inf")
    assert math.isnan(s.doubleEcho(float("nan")))


@pytest.mark.parametrize("text", [
    "", "ascii", "caf\u00e9", "\u0100\u4e2d\u6587", "a\x00b", "\U0001f600 emoji",
    "mixed \x00 \u00e9 \u4e2d \U0001f680", "x" * 100_000, "\u00e9" * 70_000 + "\U0001f600",
    "line\nbreak\r\\", ])
def test_strings_survive_every_code_point(fx, text):
    assert fx.Strings.echo(text) == text
    assert fx.Strings.length(text) == len(text.encode("utf-16-le")) // 2


def test_java_strings_with_nul_and_supplementary(fx):
    assert fx.Strings.nul() == "a\x00b"
    assert "\U0001f600" in fx.Strings.emoji()
    assert fx.Strings.codePoints("\U0001f600") == 1


def test_lone_surrogate_is_a_clear_error(fx):
    with pytest.raises(UnicodeEncodeError, match="surrogate"):
        fx.Strings.echo("bad \ud800 surrogate")


def test_str_to_char(fx):
    ov = fx.Overloads()
    assert ov.charOnly("z") == "char:z"
    assert ov.characterOnly("q") == "Character:q"
    assert fx.Strings.charAt("h\u00e9llo", 1) == "\u00e9"


def test_bytes_both_ways(fx):
    b = fx.Bytes
    assert b.make(0) == b""
    data = b.make(300)
    assert isinstance(data, bytes) and data == bytes(i & 0xFF for i in range(300))
    big = bytes(range(256)) * 4096  # 1 MiB
    assert b.echo(big) == big
    assert b.sum(bytearray(b"\x01\x02\x03")) == 6
    assert b.length(b"") == 0
    assert b.none() is None


def test_bytearray_cannot_resize_during_call(fx):
    buf = bytearray(b"abc")
    assert fx.Bytes.echo(buf) == b"abc"
    buf.extend(b"d")  # export released after the call
    assert fx.Bytes.echo(buf) == b"abcd"


def test_unsupported_argument_type(fx):
    with pytest.raises(Py4JError, match="cannot pass"):
        fx.Conversions.typeOf(object())


# Lengths around the string converter's thresholds: its 16-byte steps widening Latin-1,
# its 256-unit stack buffer, the 512-byte Latin-1 path (byte[] + new String), and the
# 65,536-unit bound of calls that keep the GIL (StringBuilder.append is one of them).
_EDGE_LENGTHS = [0, 1, 2, 15, 16, 17, 33, 255, 256, 257, 511, 512, 513, 65535, 65536, 65537]
_KINDS = {"ascii": "a", "latin1": "\u00e9", "latin1-top": "\u00ff", "nul": "\x00",
          "bmp": "\u4e2d", "astral": "\U0001f600"}


@pytest.mark.parametrize("kind", sorted(_KINDS))
def test_strings_of_every_kind_round_trip_at_threshold_lengths(gateway, fx, kind):
    sb = gateway.jvm.java.lang.StringBuilder()
    for n in _EDGE_LENGTHS:
        for text in (_KINDS[kind] * n,  # all of one kind, and mixed with ASCII
                     "".join(_KINDS[kind] if i % 3 else "a" for i in range(n))):
            _round_trip(fx, sb, kind, text)


def test_short_strings_keep_every_character_in_place(fx):
    """Every length to 40 (Latin-1 is widened in overlapping blocks of 4, 8 and 16
    units), each character distinct, so a block written one place off shows."""
    for n in range(41):
        for base in (0x41, 0xC0):  # ASCII, and Latin-1 letters
            text = "".join(chr(base + i) for i in range(n))
            assert fx.Strings.echo(text) == text, (hex(base), n)


def _round_trip(fx, sb, kind, text):
    """`text` through a plain call (echo) and a GIL-keeping one (append), both exact."""
    where = (kind, len(text))
    assert fx.Strings.echo(text) == text, where
    sb.setLength(0)
    assert sb.append(text).toString() == text, where
    sb.setLength(0)
    assert sb.append("<").append(text).append(">").toString() == f"<{text}>", where


def test_bytes_and_bytearray_in_any_argument_position(gateway, fx):
    arrays = gateway.jvm.java.util.Arrays
    for n in (0, 1, 300):
        data = bytes(range(256))[:n] if n <= 256 else bytes(i & 0xFF for i in range(n))
        assert fx.Bytes.echo(data) == data
        assert fx.Bytes.echo(bytearray(data)) == data
        assert arrays.equals(data, bytearray(data))
        assert arrays.equals(bytearray(data), bytearray(data))
        assert not arrays.equals(data + b"x", bytearray(data))
