"""Java float results as py4j's client reads them: its server sends Float.toString's
text, which Python parses as a double, so the Python float holds the JDK's digits
(Float.MIN_VALUE is 1.4e-45, not the shortest 1e-45; JDK 17 prints Float.MIN_NORMAL
as 1.17549435E-38). Scalars, boxes and float[] elements, in both transports."""
from __future__ import annotations

import random
import struct
from typing import Any

EDGES = [0x00000001, 0x00800000, 0x7F7FFFFF, 0x3DCCCCCD, 0x3EAAAAAB, 0x00000002,
         0x007FFFFF, 0x4B800000, 0x4B7FFFFF, 0x33800000, 0x2F800000, 0x0A4FB11F,
         0x3F800001, 0x7F800000, 0xFF800000, 0x80000000, 0x00000000, 0x7FC00000,
         0xC0490FDB, 0x1E3CE508]


def _bits() -> list[int]:
    rng = random.Random(20261202)
    bits = EDGES + [rng.getrandbits(32) for _ in range(300)]
    # keep NaN to one (its payload is not a float's digits)
    return [b for b in bits if (b & 0x7F800000) != 0x7F800000 or not b & 0x7FFFFF][:320]


def _as_printed(gateway: Any, bits: int) -> float:
    text = gateway.jvm.java.lang.Float.toString(gateway.jvm.Float.intBitsToFloat(_signed(bits)))
    return float(text.replace("Infinity", "inf"))


def _signed(bits: int) -> int:
    return struct.unpack("<i", struct.pack("<I", bits))[0]


def _same(a: float, b: float) -> bool:
    return a == b or (a != a and b != b)


def test_float_results_are_float_tostring(gateway: Any) -> None:
    Float = gateway.jvm.java.lang.Float
    for bits in _bits():
        got = Float.intBitsToFloat(_signed(bits))
        assert _same(got, _as_printed(gateway, bits)), hex(bits)
    assert Float.MIN_VALUE == 1.4e-45
    assert gateway.jvm.java.lang.Float.valueOf(Float.MIN_VALUE) == 1.4e-45  # a box


def test_float_array_elements_are_float_tostring(gateway: Any) -> None:
    bits = _bits()[:120]
    arr = gateway.new_array(gateway.jvm.float, len(bits))
    Float = gateway.jvm.java.lang.Float
    for i, b in enumerate(bits):
        arr[i] = Float.intBitsToFloat(_signed(b))  # the printed double is that float again
    want = [_as_printed(gateway, b) for b in bits]
    got = list(arr)
    assert all(_same(g, w) for g, w in zip(got, want)), [
        (hex(b), g, w) for b, g, w in zip(bits, got, want) if not _same(g, w)]
    assert all(_same(arr[i], want[i]) for i in range(len(bits)))
    assert arr[0] == 1.4e-45 and arr[1] == _as_printed(gateway, 0x00800000)
