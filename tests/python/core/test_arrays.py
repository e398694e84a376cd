"""JavaArray: py4j's array semantics, gateway.new_array, primitive arrays through the
buffer protocol, and Python buffers or numbers converted to primitive arrays.

As in test_collections.py, in-process tests also run with the transport's bulk array
operations turned off, exercising the plain-call fallback that socket mode uses.
"""
from __future__ import annotations

import array
import ctypes
import io
import struct
import sys

import pytest

from py4jni import JavaArray, JavaList, Py4JError, Py4JJavaError, _py4jni, to_java_array

try:
    import numpy as np
except ImportError:  # pragma: no cover - numpy is in the dev environment
    np = None

needs_numpy = pytest.mark.skipif(np is None, reason="numpy not installed")


@pytest.fixture(params=["bulk", "fallback"])
def gw(gateway, request):
    if request.param == "fallback":
        if gateway._gateway_client.kind != "inproc":
            pytest.skip("socket mode has no bulk operations: its run is the fallback run")
        old = _py4jni._set_bulk(False)
        yield gateway
        _py4jni._set_bulk(old)
    else:
        yield gateway


@pytest.fixture
def fx(gw):
    return gw.jvm.org.py4jni.fixtures.CollectionFixtures


def bulk(gw) -> bool:
    """True when this run uses the in-process bulk operations."""
    on = _py4jni._set_bulk(True)
    _py4jni._set_bulk(on)
    return gw._gateway_client.kind == "inproc" and on


# ------------------------------------------------------------------ py4j semantics

def test_int_array_sequence(fx):
    a = fx.ints(5)
    assert isinstance(a, JavaArray)
    assert len(a) == 5 and list(a) == [0, 1, 2, 3, 4]
    assert a[0] == 0 and a[4] == 4 and a[-1] == 4 and a[-5] == 0
    for bad in (5, -6, 100):
        with pytest.raises(IndexError):
            a[bad]
    with pytest.raises(TypeError, match="integers"):
        a["0"]
    assert 3 in a and 9 not in a
    assert a.index(3) == 3 and a.count(2) == 1
    with pytest.raises(ValueError):
        a.index(9)
    assert list(reversed(a)) == [4, 3, 2, 1, 0]
    assert str(a).startswith("[I@")  # Java's toString, as in py4j


def test_fixed_length_and_index_kinds(fx):
    a = fx.ints(3)
    with pytest.raises(TypeError, match="fixed length"):
        del a[0]
    with pytest.raises(TypeError, match="fixed length"):
        del fx.strings3()[0]
    assert a[True] == 1  # bool is an int, as for Python lists
    if np is not None:
        assert a[np.int64(2)] == 2
        a[np.int32(0)] = np.int16(7)
        assert a[0] == 7


def test_int_array_item_assignment_reaches_java(fx):
    a = fx.ints(5)
    a[0] = 10
    a[-1] = -4
    assert fx.sum(a) == 10 + 1 + 2 + 3 - 4
    assert list(a) == [10, 1, 2, 3, -4]
    with pytest.raises(IndexError):
        a[5] = 1


def test_java_side_changes_are_seen(fx):
    a = fx.ints(3)
    fx.poke(a, 1, 77)
    assert a[1] == 77 and list(a) == [0, 77, 2]


def test_slices_are_new_arrays(fx):
    a = fx.ints(6)
    s = a[1:4]
    assert isinstance(s, JavaArray) and list(s) == [1, 2, 3]
    s[0] = 100
    assert a[1] == 1
    assert fx.describe(a[::2]) == "[I[0, 2, 4]"
    assert list(a[::-1]) == [5, 4, 3, 2, 1, 0]
    assert list(a[5:0:-2]) == [5, 3, 1]
    assert len(a[4:1]) == 0
    strings = fx.strings3()
    assert fx.describe(strings[0:2]) == "[Ljava.lang.String;[a, b]"
    assert fx.describe(strings[::-2]) == "[Ljava.lang.String;[null, a]"


def test_slice_assignment(fx):
    a = fx.ints(6)
    a[1:3] = [10, 20]
    assert list(a) == [0, 10, 20, 3, 4, 5]
    a[::2] = (7, 8, 9)
    assert list(a) == [7, 10, 8, 3, 9, 5]
    a[::-1] = range(6)
    assert list(a) == [5, 4, 3, 2, 1, 0]
    with pytest.raises(ValueError, match="fixed"):
        a[0:2] = [1, 2, 3]
    with pytest.raises(ValueError):
        a[::2] = [1]
    s = fx.strings3()
    s[0:2] = ["x", "y"]
    assert list(s) == ["x", "y", None]


def test_every_primitive_type_reads(fx):
    assert list(fx.longs(2)) == [2**40, 2**40 + 1]
    assert list(fx.doubles(3)) == [0.0, 0.5, 1.0]
    floats = fx.floats()
    assert list(floats) == [0.1, 1.5, -2.25] and floats[0] == 0.1  # Float.toString's value
    assert list(fx.shorts()) == [-32768, 0, 32767]
    assert list(fx.chars("h\u00e9!")) == ["h", "\u00e9", "!"]
    assert list(fx.booleans()) == [True, False, True] and fx.booleans()[0] is True


def test_element_types_are_checked(fx):
    # py4j raises Py4JError for every element it cannot store ("Cannot convert ...");
    # py4jni too, with its own message
    a = fx.ints(2)
    with pytest.raises(Py4JError, match="int"):
        a[0] = "x"
    with pytest.raises(Py4JError, match="None"):
        a[0] = None
    with pytest.raises(Py4JError, match="int"):
        a[0] = 1.5
    with pytest.raises(Py4JError, match="int"):
        a[0] = True
    with pytest.raises(Py4JError, match="int"):
        a[0] = 2**31
    sh = fx.shorts()
    with pytest.raises(Py4JError, match="short"):
        sh[0] = 40000
    b = fx.booleans()
    b[1] = True
    assert b[1] is True
    with pytest.raises(Py4JError, match="boolean"):
        b[0] = 1
    c = fx.chars("ab")
    c[0] = "z"
    assert list(c) == ["z", "b"]
    with pytest.raises(Py4JError, match="char"):
        c[0] = "zz"
    with pytest.raises(Py4JError, match="BMP"):
        c[0] = "\U0001f600"
    d = fx.doubles(2)
    d[0] = 3  # an int is a fine double
    d[1] = 0.25
    assert list(d) == [3.0, 0.25]
    with pytest.raises(Py4JError, match="double"):
        d[0] = "1.0"
    f = fx.floats()
    f[0] = 0.3
    assert f[0] == 0.3
    with pytest.raises(Py4JError, match="None"):
        f[1:3] = [None, 1.0]


def test_reference_arrays(gw, fx):
    s = fx.strings3()
    assert list(s) == ["a", "b", None] and s[-1] is None
    s[2] = "c"
    assert list(s) == ["a", "b", "c"]
    with pytest.raises(Py4JError, match="java.lang.String"):
        s[0] = 5
    longs = fx.boxedLongs()
    longs[0] = 2**40
    longs[1] = None
    assert list(longs) == [2**40, None]
    with pytest.raises(Py4JError, match="java.lang.Long"):
        longs[0] = "x"
    if bulk(gw):  # in-process, a small int is boxed as the array wants
        longs[0] = 5
        assert list(longs) == [5, None]
        chars = gw.new_array(gw.jvm.java.lang.Character, 1)
        chars[0] = "q"
        assert list(chars) == ["q"]
        with pytest.raises(Py4JError, match="java.lang.Byte"):
            gw.new_array(gw.jvm.java.lang.Byte, 1)[0] = 300
    else:  # over plain calls it arrives as an Integer, which a Long[] refuses
        with pytest.raises(Py4JError, match="java.lang.Long"):
            longs[0] = 5
    m = fx.matrix()
    assert isinstance(m[0], JavaArray) and [list(r) for r in m] == [[1, 2], [3]]
    m[1] = fx.ints(2)
    assert [list(r) for r in m] == [[1, 2], [0, 1]]
    with pytest.raises(Py4JError, match=r"int\[\]"):
        m[0] = fx.strings3()


def test_object_array_has_no_buffer(fx):
    with pytest.raises(BufferError, match="reference"):
        memoryview(fx.strings3())


# ------------------------------------------------------------------ new_array

@pytest.mark.parametrize("name,expected", [
    ("int", "[I[0, 0, 0]"), ("long", "[J[0, 0, 0]"), ("double", "[D[0.0, 0.0, 0.0]"),
    ("float", "[F[0.0, 0.0, 0.0]"), ("short", "[S[0, 0, 0]"), ("char", "[C[\x00, \x00, \x00]"),
    ("boolean", "[Z[false, false, false]")])
def test_new_array_primitive(gw, fx, name, expected):
    a = gw.new_array(getattr(gw.jvm, name), 3)
    assert isinstance(a, JavaArray) and len(a) == 3
    assert fx.describe(a) == expected


def test_new_byte_array(gw, fx):
    """py4j's answer in both transports: a byte[] result is bytes, so a one-dimensional
    new byte[] is zeros that Java filling its own copy leaves as they are."""
    a = gw.new_array(gw.jvm.byte, 3)
    assert a == b"\x00\x00\x00"
    gw.jvm.java.security.SecureRandom().nextBytes(a)
    assert a == b"\x00\x00\x00"
    assert gw.new_array(gw.jvm.byte, 0) == b""
    assert fx.describe(gw.new_array(gw.jvm.byte, 2, 2)) == "[[B[[0, 0], [0, 0]]"
    if bulk(gw):  # in-process, a Java byte[] to fill: to_java_array of a bytearray
        b = to_java_array(gw, bytearray(3))
        assert isinstance(b, JavaArray)
        b[0] = -1
        b[1:3] = b"\x05\x06"
        assert bytes(b) == b"\xff\x05\x06" and list(b) == [-1, 5, 6]
        assert fx.describe(b) == "[B[-1, 5, 6]"


def test_new_array_objects_and_dimensions(gw, fx):
    s = gw.new_array(gw.jvm.java.lang.String, 2)
    assert fx.describe(s) == "[Ljava.lang.String;[null, null]"
    s[0] = "hi"
    assert list(s) == ["hi", None]
    m = gw.new_array(gw.jvm.int, 2, 3)
    assert fx.describe(m) == "[[I[[0, 0, 0], [0, 0, 0]]"
    m[1][2] = 5
    assert [list(r) for r in m] == [[0, 0, 0], [0, 0, 5]]
    cube = gw.new_array(gw.jvm.double, 2, 1, 2)
    assert fx.describe(cube) == "[[[D[[[0.0, 0.0]], [[0.0, 0.0]]]"
    grid = gw.new_array(gw.jvm.java.lang.String, 1, 2)
    assert fx.describe(grid) == "[[Ljava.lang.String;[[null, null]]"
    assert len(gw.new_array(gw.jvm.int, 0)) == 0
    with pytest.raises(TypeError):
        gw.new_array(gw.jvm.int)
    with pytest.raises(Py4JJavaError):
        gw.new_array(gw.jvm.int, -1)


# ------------------------------------------------------------------ buffer protocol

@pytest.mark.parametrize("maker,fmt,itemsize,values", [
    (lambda fx: fx.ints(3), "i", 4, [0, 1, 2]),
    (lambda fx: fx.longs(2), "q", 8, [2**40, 2**40 + 1]),
    (lambda fx: fx.doubles(2), "d", 8, [0.0, 0.5]),
    (lambda fx: fx.floats(), "f", 4, [struct.unpack("f", struct.pack("f", 0.1))[0], 1.5, -2.25]),
    (lambda fx: fx.shorts(), "h", 2, [-32768, 0, 32767]),
    (lambda fx: fx.chars("ab"), "H", 2, [97, 98]),
    (lambda fx: fx.booleans(), "?", 1, [True, False, True]),
])
def test_memoryview_format_and_values(fx, maker, fmt, itemsize, values):
    a = maker(fx)
    with memoryview(a) as mv:
        assert mv.format == fmt and mv.itemsize == itemsize and mv.ndim == 1
        assert mv.shape == (len(values),) and mv.readonly
        assert mv.tolist() == values
        assert mv.nbytes == itemsize * len(values)
    assert bytes(a) == struct.pack(f"={len(values)}{fmt}", *values)


def test_read_only_export_is_a_snapshot(fx):
    a = fx.ints(3)
    with memoryview(a) as mv:
        with pytest.raises(TypeError):
            mv[0] = 9
        fx.poke(a, 0, 42)
        assert mv[0] == 0  # a copy taken at export
    assert a[0] == 42


def test_writable_export_writes_back_on_release(fx):
    a = fx.ints(4)
    io.BytesIO(struct.pack("=2i", 7, 8)).readinto(a)  # readinto asks for a writable buffer
    assert list(a) == [7, 8, 2, 3] and fx.sum(a) == 20
    struct.pack_into("=i", a, 12, -1)
    assert list(a) == [7, 8, 2, -1]


class _PyBuffer(ctypes.Structure):
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.py_object), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int),
                ("ndim", ctypes.c_int), ("format", ctypes.c_char_p),
                ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("suboffsets", ctypes.c_void_p), ("internal", ctypes.c_void_p)]


PyBUF_WRITABLE, PyBUF_FORMAT, PyBUF_ND = 0x0001, 0x0004, 0x0008


def writable_export(obj) -> _PyBuffer:
    """Takes a writable buffer export of obj through the C API (held until released)."""
    view = _PyBuffer()
    get = ctypes.pythonapi.PyObject_GetBuffer
    get.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
    assert get(obj, ctypes.byref(view), PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_ND) == 0
    return view


def release_export(view: _PyBuffer) -> None:
    ctypes.pythonapi.PyBuffer_Release.argtypes = [ctypes.POINTER(_PyBuffer)]
    ctypes.pythonapi.PyBuffer_Release(ctypes.byref(view))


def test_writable_export_writes_only_what_changed(fx):
    a = fx.ints(4)
    view = writable_export(a)
    assert view.readonly == 0 and view.format == b"i" and view.len == 16
    data = (ctypes.c_int32 * 4).from_address(view.buf)
    assert list(data) == [0, 1, 2, 3]
    data[0] = 5
    fx.poke(a, 3, 33)  # Java changes another element meanwhile
    assert a[0] == 0  # not written back yet
    release_export(view)  # element 0 goes back, element 3 stays Java's
    assert list(a) == [5, 1, 2, 33]
    view = writable_export(a)
    release_export(view)  # nothing changed: nothing written
    assert list(a) == [5, 1, 2, 33]


def test_ctypes_sees_a_read_only_snapshot(fx):
    with pytest.raises(TypeError, match="not writable"):
        (ctypes.c_int32 * 2).from_buffer(fx.ints(2))
    assert list((ctypes.c_int32 * 2).from_buffer_copy(fx.ints(2))) == [0, 1]


@pytest.mark.inproc_only("counts JNI global references")
def test_exports_hold_no_java_references(fx, gw):
    client = gw._gateway_client
    a = fx.doubles(1000)
    bytes(a)
    before = client.global_ref_count()
    for _ in range(300):
        with memoryview(a) as mv:
            mv.tolist()
        bytes(a)
    assert client.global_ref_count() == before


@needs_numpy
def test_numpy_views(fx):
    a = fx.doubles(4)
    x = np.asarray(a)
    assert x.dtype == np.float64 and x.tolist() == [0.0, 0.5, 1.0, 1.5]
    assert not x.flags.writeable  # a snapshot: writes go through the JavaArray
    for maker, dtype in ((fx.ints(2), np.int32), (fx.longs(2), np.int64), (fx.floats(), np.float32),
                         (fx.shorts(), np.int16), (fx.booleans(), np.bool_),
                         (fx.chars("a"), np.uint16)):
        assert np.asarray(maker).dtype == dtype
    y = np.array(a)
    y[0] = 9
    assert a[0] == 0.0
    strings = np.asarray(fx.strings3())  # no buffer: numpy falls back to the sequence
    assert strings.tolist() == ["a", "b", None]


# ------------------------------------------------------------------ Python -> Java arrays

def test_to_java_array_from_buffers(gw, fx):
    d = to_java_array(gw, array.array("d", [1.5, 2.5]))
    assert fx.describe(d) == "[D[1.5, 2.5]" and fx.sum(d) == 4.0
    i = to_java_array(gw, array.array("i", [1, 2, 3]))
    assert fx.describe(i) == "[I[1, 2, 3]"
    q = to_java_array(gw, array.array("q", [2**40]))
    assert fx.describe(q) == "[J[1099511627776]"
    h = to_java_array(gw, array.array("h", [-5]))
    assert fx.describe(h) == "[S[-5]"
    f = to_java_array(gw, array.array("f", [0.5]))
    assert fx.describe(f) == "[F[0.5]"
    lng = to_java_array(gw, array.array("l", [7]))
    assert fx.describe(lng) == ("[J[7]" if array.array("l").itemsize == 8 else "[I[7]")
    b = to_java_array(gw, memoryview(b"\x01\x02"))
    assert fx.length(b) == 2


def test_to_java_array_from_values(gw, fx):
    assert fx.describe(to_java_array(gw, [1, 2], gw.jvm.int)) == "[I[1, 2]"
    assert fx.describe(to_java_array(gw, [1, 2.5], "double")) == "[D[1.0, 2.5]"
    assert fx.describe(to_java_array(gw, (True, False), "Z")) == "[Z[true, false]"
    assert fx.describe(to_java_array(gw, "hi", "char")) == "[C[h, i]"
    assert fx.describe(to_java_array(gw, [], "long")) == "[J[]"
    assert fx.describe(to_java_array(gw, range(3), gw.jvm.short)) == "[S[0, 1, 2]"


def test_to_java_array_errors(gw):
    with pytest.raises(TypeError, match="java_type"):
        to_java_array(gw, [1, 2])
    with pytest.raises(TypeError, match="int"):
        to_java_array(gw, array.array("d", [1.0]), "int")
    with pytest.raises(TypeError, match="format"):
        to_java_array(gw, array.array("I", [1]))
    with pytest.raises(Py4JError, match="None"):
        to_java_array(gw, [1, None], "int")
    with pytest.raises(Py4JError, match="byte"):
        to_java_array(gw, [1, 300], "byte")
    with pytest.raises(TypeError, match="primitive"):
        to_java_array(gw, [1], gw.jvm.java.lang.String)
    with pytest.raises(TypeError, match="iterable of values, not object"):
        to_java_array(gw, object(), "int")


class _IterRaises:
    def __iter__(self):
        raise ValueError("the iterable's own error")


def test_an_iterables_own_error_is_kept(gw):
    # the iterable's exception reaches the caller; only "not iterable" becomes the
    # bridge's TypeError
    with pytest.raises(ValueError, match="the iterable's own error"):
        to_java_array(gw, _IterRaises(), "int")
    ja = gw.new_array(gw.jvm.int, 2)
    with pytest.raises(ValueError, match="the iterable's own error"):
        ja[0:2] = _IterRaises()


class _Shrinks:
    """An int and a float whose conversion empties (or grows) the list it is in."""

    def __init__(self, items: list, grow: bool = False) -> None:
        self.items, self.grow = items, grow

    def _change(self) -> None:
        if self.grow:
            self.items.append(5)
        else:
            self.items.clear()

    def __index__(self) -> int:
        self._change()
        return 1

    def __float__(self) -> float:
        self._change()
        return 1.0


@pytest.mark.parametrize("grow", [False, True], ids=["emptied", "grown"])
@pytest.mark.parametrize("java_type", ["int", "double"])
def test_a_list_changed_by_its_items_conversion_converts_as_it_was(gw, fx, java_type, grow):
    # an item's __index__/__float__ that empties or grows the list being converted: the
    # items as they were when the conversion began, not a read of freed ones (this
    # crashed the interpreter)
    items: list = []
    items[:] = [_Shrinks(items, grow), _Shrinks(items, grow), 3]
    made = to_java_array(gw, items, java_type)
    assert list(made) == [1, 1, 3] and len(items) == (5 if grow else 0)
    ja = gw.new_array(getattr(gw.jvm, java_type), 3)
    items[:] = [3, _Shrinks(items, grow), 4]
    ja[0:3] = items
    assert list(ja) == [3, 1, 4] and len(items) == (4 if grow else 0)


@pytest.mark.inproc_only("new_collection is the in-process bulk operation")
def test_a_collection_is_made_from_the_items_as_they_were(gateway):
    # new_collection reads a list's items in C: an item whose conversion changes the list
    # (and drops the other items' last references) must not leave it reading freed ones
    items: list = []
    keep = gateway.jvm.java.lang.StringBuilder("kept")
    items[:] = [_Shrinks(items), keep, 3]
    del keep
    made = _py4jni.new_collection(gateway._gateway_client, "l", items)
    assert items == []
    assert [made.get(0), str(made.get(1)), made.get(2)] == [1, "kept", 3]


def test_buffer_arguments_become_primitive_arrays(fx):
    assert fx.sum(array.array("i", [1, 2, 3])) == 6
    assert fx.sum(array.array("d", [0.5, 0.25])) == 0.75
    assert fx.describe(array.array("h", [1])) == "[S[1]"
    assert fx.describe(memoryview(array.array("q", [3]))) == "[J[3]"


@needs_numpy
def test_numpy_round_trips(gw, fx):
    data = np.linspace(0.0, 1.0, 10_001)
    ja = to_java_array(gw, data)
    assert len(ja) == 10_001 and fx.sum(ja) == pytest.approx(data.sum())
    assert np.array_equal(np.asarray(ja), data)
    assert fx.sum(np.arange(5, dtype=np.int32)) == 10
    assert fx.describe(np.arange(3, dtype=np.int64)) == "[J[0, 1, 2]"
    strided = np.arange(10, dtype=np.int32)[::3]  # not contiguous: copied once
    assert fx.describe(to_java_array(gw, strided)) == "[I[0, 3, 6, 9]"
    with pytest.raises(ValueError, match="dimensional"):
        to_java_array(gw, np.zeros((2, 2)))
    a = fx.ints(4)
    a[:] = np.array([9, 8, 7, 6], dtype=np.int32)
    assert list(a) == [9, 8, 7, 6]
    with pytest.raises(TypeError, match="format"):
        a[:] = np.zeros(4)


def test_big_primitive_round_trip(gw, fx):
    n = 300_000
    src = array.array("d", (i * 0.5 for i in range(n)))
    ja = to_java_array(gw, src) if bulk(gw) else to_java_array(gw, src[:2000])
    expected = src if bulk(gw) else src[:2000]
    assert bytes(ja) == expected.tobytes()
    assert list(ja) == expected.tolist()


def test_list_of_arrays_and_arrays_of_lists(gw, fx, gateway):
    lst = gw.jvm.java.util.ArrayList()
    lst.add(fx.ints(2))
    assert isinstance(lst[0], JavaArray) and list(lst[0]) == [0, 1]
    objs = gw.new_array(gw.jvm.java.lang.Object, 1)
    objs[0] = fx.range(2)
    assert isinstance(objs[0], JavaList) and list(objs[0]) == [0, 1]


def test_detached_array(gw, fx):
    a = fx.ints(2)
    gw.detach(a)
    with pytest.raises(Py4JError):
        len(a)
    with pytest.raises(Py4JError):
        memoryview(a)


@needs_numpy
def test_non_native_byte_order_is_refused(gw):
    other = ">i4" if sys.byteorder == "little" else "<i4"
    with pytest.raises(TypeError, match="format"):
        to_java_array(gw, np.arange(3, dtype=other), "int")


def test_chunked_iteration_of_big_arrays(gw, fx):
    n = 70_000 if bulk(gw) else 1_000
    a = fx.ints(n)
    assert sum(a) == n * (n - 1) // 2
