"""JavaList, JavaSet, JavaMap, JavaIterator and the converters (py4j's
java_collections module), against real Java collections.

Every test runs in each transport and, in-process, twice: with the transport's bulk
operations (batched iteration, one-call conversion) and with them turned off, so the
plain-call fallback that socket mode uses is exercised even before socket mode exists.
"""
from __future__ import annotations

import collections.abc as abc
import threading
from decimal import Decimal

import pytest

from py4jni import (JavaArray, JavaIterator, JavaList, JavaMap, JavaObject, JavaSet,
                    ListConverter, MapConverter, Py4JError, Py4JJavaError, SetConverter,
                    _py4jni, get_method)


@pytest.fixture(params=["bulk", "fallback"])
def gw(gateway, request):
    """The gateway, in-process also with the bulk operations off (the fallback path)."""
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


@pytest.fixture
def client(gw):
    return gw._gateway_client


@pytest.fixture
def auto(gw):
    """The gateway with auto_convert on for the test's duration."""
    old = gw._auto_convert
    gw._auto_convert = True
    yield gw
    gw._auto_convert = old


def java_name(exc: Py4JJavaError) -> str:
    return exc.java_exception.getClass().getName()


# ------------------------------------------------------------------ JavaList: reading

def test_list_type_len_and_str(fx):
    lst = fx.range(3)
    assert isinstance(lst, JavaList) and isinstance(lst, JavaObject)
    assert isinstance(lst, abc.MutableSequence)
    assert len(lst) == 3
    assert str(lst) == "[0, 1, 2]" and repr(lst) == "[0, 1, 2]"
    assert str(fx.range(0)) == "[]"
    assert str(fx.fixed()) == "['a', 'b', 'c']"


def test_list_indexing(fx):
    lst = fx.range(5)
    assert lst[0] == 0 and lst[4] == 4
    assert lst[-1] == 4 and lst[-5] == 0
    for bad in (5, 99, -6, -100):
        with pytest.raises(IndexError):
            lst[bad]
    with pytest.raises(TypeError, match="integers"):
        lst["1"]
    with pytest.raises(TypeError):
        lst[1.0]


def test_list_slices_are_copies(fx):
    lst = fx.range(6)
    part = lst[1:4]
    assert isinstance(part, JavaList) and list(part) == [1, 2, 3]
    part.append(99)
    assert list(lst) == [0, 1, 2, 3, 4, 5]
    part[0] = 42
    assert lst[1] == 1
    assert list(lst[::2]) == [0, 2, 4]
    assert list(lst[::-1]) == [5, 4, 3, 2, 1, 0]
    assert list(lst[-2:]) == [4, 5]
    assert list(lst[4:1]) == []
    assert list(lst[10:]) == []
    assert list(lst[5:0:-2]) == [5, 3, 1]
    linked = fx.linked(5)
    assert list(linked[1:3]) == [1, 2]


def test_list_iteration_converts_every_kind(fx):
    values = list(fx.mixed())
    assert values[:11] == [1, "two", 3.5, None, True, "c", 2**40, 0.1, -2, -3, Decimal("1.10")]
    assert type(values[0]) is int and type(values[2]) is float and values[4] is True
    assert values[11] == b"\x01\x02"
    assert isinstance(values[12], JavaList) and list(values[12]) == ["x", "y"]
    assert isinstance(values[13], JavaMap) and dict(values[13].items()) == {"k": 1}
    assert isinstance(values[14], JavaArray) and list(values[14]) == [4, 5]
    assert isinstance(values[15], JavaSet) and set(values[15]) == {7}
    assert isinstance(values[16], JavaIterator) and list(values[16]) == [1, 2]
    assert type(values[17]) is JavaObject and values[17].name() == "RED"
    assert values[18:] == ["", "a\x00b\U0001f600"]


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 1000, 10_000])
def test_list_iteration_sizes(fx, n):
    assert list(fx.range(n)) == list(range(n))


def test_list_iteration_of_strings(fx):
    expected = [("\u00e9\u4e2d\U0001f600" if i % 7 == 3 else "s") + str(i) for i in range(3000)]
    assert list(fx.strings(3000)) == expected
    assert list(fx.linked(300)) == list(range(300))


def test_list_reversed_contains_index_count(fx, client):
    lst = ListConverter().convert([3, 1, 3, "a", None], client)
    assert list(reversed(lst)) == [None, "a", 3, 1, 3]
    assert 3 in lst and "a" in lst and None in lst and 7 not in lst
    assert lst.index(3) == 0 and lst.index("a") == 3
    assert lst.index(3, 1) == 2 and lst.index(3, 1, 2) == -1
    assert lst.index(42) == -1  # py4j's indexOf rule
    assert lst.count(3) == 2 and lst.count(None) == 1 and lst.count(8) == 0


def test_list_equality_uses_java_equals(fx):
    assert fx.range(3) == fx.range(3)
    assert fx.range(3) != fx.range(4)
    assert hash(fx.range(3)) == hash(fx.range(3))


# ------------------------------------------------------------------ JavaList: writing

def test_list_append_insert_extend(fx, client):
    lst = fx.range(3)
    lst.append(3)
    lst.append("x")
    assert list(lst) == [0, 1, 2, 3, "x"]
    lst.insert(0, "first")
    lst.insert(-1, "before-last")
    lst.insert(100, "end")
    lst.insert(-100, "start")
    assert list(lst) == ["start", "first", 0, 1, 2, 3, "before-last", "x", "end"]
    lst = fx.range(2)
    lst.extend([7, 8])
    lst.extend(fx.range(2))
    lst.extend(x for x in (5,))
    lst.extend(lst)
    assert list(lst) == [0, 1, 7, 8, 0, 1, 5] * 2


def test_list_pop_and_remove(fx):
    lst = fx.range(5)
    assert lst.pop() == 4
    assert lst.pop(0) == 0
    assert lst.pop(-2) == 2
    assert list(lst) == [1, 3]
    with pytest.raises(IndexError):
        lst.pop(5)
    lst = fx.range(4)
    lst.remove(2)  # the value 2, not index 2
    assert list(lst) == [0, 1, 3]
    lst.remove(0)
    assert list(lst) == [1, 3]
    with pytest.raises(ValueError):
        lst.remove(42)
    empty = fx.range(0)
    with pytest.raises(IndexError, match="empty"):
        empty.pop()
    strings = fx.strings(3)
    strings.remove("s1")
    assert list(strings) == ["s0", "s2"]


def test_list_setitem(fx):
    lst = fx.range(5)
    lst[0] = "zero"
    lst[-1] = 40
    assert list(lst) == ["zero", 1, 2, 3, 40]
    for bad in (5, -6):
        with pytest.raises(IndexError):
            lst[bad] = 1


def test_list_slice_assignment(fx):
    lst = fx.range(6)
    lst[1:3] = ["a", "b", "c"]
    assert list(lst) == [0, "a", "b", "c", 3, 4, 5]
    lst[1:4] = []
    assert list(lst) == [0, 3, 4, 5]
    lst[2:2] = [9]
    assert list(lst) == [0, 3, 9, 4, 5]
    lst[::2] = [10, 11, 12]
    assert list(lst) == [10, 3, 11, 4, 12]
    with pytest.raises(ValueError, match="extended slice"):
        lst[::2] = [1]
    lst[:] = fx.range(2)
    assert list(lst) == [0, 1]
    lst[:] = lst
    assert list(lst) == [0, 1]


def test_list_delitem(fx):
    lst = fx.range(8)
    del lst[0]
    del lst[-1]
    assert list(lst) == [1, 2, 3, 4, 5, 6]
    del lst[1:3]
    assert list(lst) == [1, 4, 5, 6]
    del lst[::2]
    assert list(lst) == [4, 6]
    del lst[5:9]
    assert list(lst) == [4, 6]
    with pytest.raises(IndexError):
        del lst[2]
    with pytest.raises(IndexError):
        del lst[-3]
    lst.clear()
    assert len(lst) == 0


def test_list_sort_and_reverse(fx, client):
    lst = ListConverter().convert([3, 1, 2], client)
    lst.sort()
    assert list(lst) == [1, 2, 3]
    lst.reverse()
    assert list(lst) == [3, 2, 1]
    lst.sort(reverse=True)
    assert list(lst) == [3, 2, 1]
    words = ListConverter().convert(["bb", "a", "ccc"], client)
    words.sort(key=len, reverse=True)
    assert list(words) == ["ccc", "bb", "a"]
    fixed = fx.fixed()
    fixed.sort(key=lambda s: -ord(s))  # in place, even on a fixed-size list
    assert list(fixed) == ["c", "b", "a"]
    mixed = ListConverter().convert([1, "a"], client)
    with pytest.raises(Py4JJavaError) as exc:
        mixed.sort()
    assert java_name(exc.value) == "java.lang.ClassCastException"


def test_list_operators(fx, client):
    a, b = fx.range(2), fx.range(3)
    c = a + b
    assert isinstance(c, JavaList) and list(c) == [0, 1, 0, 1, 2]
    assert list(a) == [0, 1]
    assert list(a + [7]) == [0, 1, 7]
    assert list([7] + a) == [7, 0, 1]
    assert list((5, 6) + a) == [5, 6, 0, 1]
    assert list(a * 3) == [0, 1] * 3 and list(3 * a) == [0, 1] * 3
    assert list(a * 0) == []
    with pytest.raises(TypeError):
        a + 1
    with pytest.raises(TypeError):
        a * "x"
    a += [2]
    assert list(a) == [0, 1, 2]
    a *= 2
    assert list(a) == [0, 1, 2, 0, 1, 2]
    a *= 0
    assert list(a) == []


def test_list_java_methods_stay_reachable(fx):
    lst = fx.range(4)
    assert lst.java_remove(0) == 0  # Java's remove(int): removes index 0
    assert get_method(lst, "remove")(0) == 1
    assert lst.size() == 2 and lst.get(0) == 2
    assert lst.subList(0, 1).size() == 1


def test_list_unsupported_operation_surfaces(fx):
    fixed = fx.fixed()
    with pytest.raises(Py4JJavaError) as exc:
        fixed.append("d")
    assert java_name(exc.value) == "java.lang.UnsupportedOperationException"
    with pytest.raises(Py4JJavaError):
        fx.unmodifiable()[0] = 5


@pytest.mark.parametrize("n", [3, 200])
def test_list_modified_while_iterating_raises(fx, n):
    lst = fx.range(n)
    with pytest.raises(Py4JJavaError) as exc:
        for x in lst:
            lst.append(x)
    assert java_name(exc.value) == "java.util.ConcurrentModificationException"


def test_iterable_stays_a_plain_object(gw):
    it = gw.jvm.org.py4jni.fixtures.Conversions.iterable()
    assert type(it) is JavaObject


# ------------------------------------------------------------------ JavaSet

def test_set_basics(fx):
    s = fx.letters()
    assert isinstance(s, JavaSet) and isinstance(s, abc.MutableSet)
    assert len(s) == 3 and "a" in s and "z" not in s
    assert list(s) == ["a", "b", "c"]
    assert str(s) == "{'a', 'b', 'c'}" and repr(s) == str(s)
    s.add("d")
    s.add("a")
    assert len(s) == 4
    s.remove("d")
    with pytest.raises(KeyError):
        s.remove("d")
    s.discard("c")
    with pytest.raises(KeyError):  # py4j's discard raises for an absent element
        s.discard("c")
    assert set(s) == {"a", "b"}
    s.clear()
    assert len(s) == 0 and str(s) == "set()"


def test_set_operators_and_pop(fx):
    s = fx.letters()
    assert s | {"z"} == {"a", "b", "c", "z"}
    assert s & {"a", "q"} == {"a"}
    assert s - {"a"} == {"b", "c"}
    assert s ^ {"a", "q"} == {"b", "c", "q"}
    assert s <= {"a", "b", "c", "d"} and s.isdisjoint({"q"})
    s |= {"d"}
    assert "d" in s
    s -= {"d", "absent"}
    assert set(s) == {"a", "b", "c"}
    s &= {"a", "b"}
    assert set(s) == {"a", "b"}
    popped = s.pop()
    assert popped in ("a", "b") and len(s) == 1


def test_set_converter(client, fx):
    js = SetConverter().convert({1, 2, 3}, client)
    assert isinstance(js, JavaSet) and set(js) == {1, 2, 3}
    assert fx.describe(js).startswith("java.util.HashSet")
    assert SetConverter().can_convert(frozenset()) and not SetConverter().can_convert([1])


# ------------------------------------------------------------------ JavaMap

def test_map_basics(fx):
    m = fx.map(3)
    assert isinstance(m, JavaMap) and isinstance(m, abc.MutableMapping)
    assert len(m) == 3
    assert m["k1"] == 1 and m["missing"] is None  # py4j: None for an absent key
    assert "k0" in m and "zz" not in m
    assert list(m) == ["k0", "k1", "k2"]
    assert list(m.keys()) == ["k0", "k1", "k2"]
    assert list(m.values()) == [0, 1, 2]
    assert list(m.items()) == [("k0", 0), ("k1", 1), ("k2", 2)]
    assert ("k1", 1) in m.items() and ("k1", 2) not in m.items() and ("q", None) not in m.items()
    assert 2 in m.values() and "k2" in m.keys()
    assert str(m) == "{'k0': 0, 'k1': 1, 'k2': 2}" and repr(m) == str(m)
    assert str(fx.map(0)) == "{}"
    assert dict(m) == {"k0": 0, "k1": 1, "k2": 2}


def test_map_writes(fx):
    m = fx.map(2)
    m["k9"] = 9
    m["k0"] = "zero"
    assert m["k9"] == 9 and m["k0"] == "zero"
    del m["k9"]
    del m["never"]  # py4j: remove(), no KeyError
    assert "k9" not in m and len(m) == 2
    assert m.get("k1") == 1 and m.get("nope") is None and m.get("nope", 5) == 5
    assert m.pop("k1") == 1 and m.pop("k1", "gone") == "gone"
    with pytest.raises(KeyError):
        m.pop("k1")
    assert m.setdefault("k0", 7) == "zero" and m.setdefault("new", 7) == 7 and m["new"] == 7
    m.update({"a": 1}, b=2)
    m.update([("c", 3)])
    m.update(fx.map(1))
    assert dict(m) == {"k0": 0, "new": 7, "a": 1, "b": 2, "c": 3}
    key, value = m.popitem()
    assert key not in m
    m.clear()
    assert len(m) == 0


def test_map_keys_of_other_types(fx):
    m = fx.treeMap()
    assert m[1] == "one" and m[3] is None and 3 in m and 4 not in m
    assert list(m.items()) == [(1, "one"), (2, "two"), (3, None)]
    assert m.get(3, "dflt") is None  # present with a null value: not the default


def test_map_java_methods_stay_reachable(fx):
    m = fx.map(2)
    assert get_method(m, "get")("k1") == 1
    assert m.size() == 2 and m.containsKey("k0")
    assert get_method(m, "remove")("k0") == 0


@pytest.mark.parametrize("n", [0, 1, 100, 5000])
def test_map_iteration_sizes(fx, n):
    m = fx.map(n)
    assert list(m.items()) == [(f"k{i}", i) for i in range(n)]
    assert list(m.values()) == list(range(n))


def test_map_modified_while_iterating_raises(fx):
    m = fx.map(200)
    with pytest.raises(Py4JJavaError) as exc:
        for k in m:
            m["new" + k] = 1
    assert java_name(exc.value) == "java.util.ConcurrentModificationException"


def test_map_converter(client, fx):
    jm = MapConverter().convert({"a": 1, 2: "b"}, client)
    assert isinstance(jm, JavaMap) and jm["a"] == 1 and jm[2] == "b"
    assert fx.describe(jm).startswith("java.util.HashMap")

    class Custom:
        def keys(self):
            return ["x", "y"]

        def __getitem__(self, k):
            return k.upper()

    assert MapConverter().can_convert(Custom())
    assert dict(MapConverter().convert(Custom(), client).items()) == {"x": "X", "y": "Y"}


# ------------------------------------------------------------------ JavaIterator

def test_iterator(fx):
    it = fx.iterator(3)
    assert isinstance(it, JavaIterator)
    assert iter(it) is it
    assert next(it) == 0
    assert it.next() == 1  # py4j's Python name
    assert list(it) == [2]
    with pytest.raises(StopIteration):
        next(it)


def test_iterator_consumes_one_element_per_next(fx):
    it = fx.iterator(3)
    assert next(it) == 0
    assert it.hasNext()
    assert get_method(it, "next")() == 1  # Java's own next() sees the same position
    assert list(it) == [2]


def test_iterator_ends_on_no_such_element(fx):
    assert list(fx.lyingIterator(2)) == [0, 1]


def test_iterator_other_exceptions_surface(fx):
    it = fx.brokenIterator(2)
    assert next(it) == 0 and next(it) == 1
    with pytest.raises(Py4JJavaError) as exc:
        next(it)
    assert java_name(exc.value) == "java.lang.IllegalStateException"


# ------------------------------------------------------------------ converters

def test_list_converter(client, fx):
    jl = ListConverter().convert([1, "a", 2.5, None, True, 2**40, Decimal("1.5"), b"\x01"], client)
    assert isinstance(jl, JavaList)
    assert list(fx.elementTypes(jl)) == [
        "java.lang.Integer", "java.lang.String", "java.lang.Double", "null",
        "java.lang.Boolean", "java.lang.Long", "java.math.BigDecimal", "[B"]
    assert list(jl) == [1, "a", 2.5, None, True, 2**40, Decimal("1.5"), b"\x01"]
    assert list(ListConverter().convert(range(5), client)) == [0, 1, 2, 3, 4]
    assert list(ListConverter().convert((x * 2 for x in range(3)), client)) == [0, 2, 4]
    assert list(ListConverter().convert(["\U0001f600", "caf\u00e9", "x" * 1000], client)) == [
        "\U0001f600", "caf\u00e9", "x" * 1000]
    latin1 = ["".join(chr(0x41 + i % 26) if i % 3 else chr(0xe0 + i % 32) for i in range(n))
              for n in (3, 4, 7, 8, 9, 15, 16, 17, 33)]  # around the widening's blocks
    assert list(ListConverter().convert(latin1, client)) == latin1
    assert list(ListConverter().convert([], client)) == []
    inner = fx.range(2)
    outer = ListConverter().convert([inner, fx.map(1)], client)
    assert outer[0] == inner and list(outer[1].items()) == [("k0", 0)]
    conv = ListConverter()
    assert conv.can_convert([1]) and conv.can_convert((1,)) and conv.can_convert({1: 2})
    assert not conv.can_convert("abc") and not conv.can_convert(b"x")
    assert not conv.can_convert(bytearray(b"x")) and not conv.can_convert(5)


def test_nested_lists_need_auto_convert(client, gw):
    assert not gw._auto_convert
    with pytest.raises(Py4JError, match="cannot pass"):
        ListConverter().convert([[1, 2]], client)


def test_big_list_converter(client, fx):
    data = list(range(20_000))
    jl = ListConverter().convert(data, client)
    assert fx.size(jl) == 20_000 and list(jl) == data


# ------------------------------------------------------------------ auto_convert

def test_without_auto_convert_lists_are_refused(fx):
    with pytest.raises(Py4JError, match="cannot pass"):
        fx.size([1, 2])


def test_auto_convert_arguments(auto, fx):
    assert fx.size([1, 2, 3]) == 3
    assert fx.describe((1, 2)) == "java.util.ArrayList[1, 2]"
    assert fx.describe({5}).startswith("java.util.HashSet[5]")
    assert fx.describe(frozenset({6})).startswith("java.util.HashSet")
    assert fx.describe({"a": 1}) == "java.util.HashMap{a=1}"
    assert fx.describe(x for x in (1,)) == "java.util.ArrayList[1]"
    assert fx.describe(range(2)) == "java.util.ArrayList[0, 1]"
    assert list(fx.elementTypes([[1], {"k": 2}, {3}])) == [
        "java.util.ArrayList", "java.util.HashMap", "java.util.HashSet"]
    assert fx.describe("abc") == "java.lang.Stringabc"  # str stays a String
    assert fx.describe(b"ab").startswith("[B")


def test_auto_convert_constructor_arguments(auto):
    jl = auto.jvm.java.util.ArrayList([1, 2, 3])
    assert isinstance(jl, JavaList) and list(jl) == [1, 2, 3]
    hm = auto.jvm.java.util.HashMap({"a": 1})
    assert hm["a"] == 1


def test_auto_convert_still_refuses_other_objects(auto, fx):
    with pytest.raises(Py4JError, match="cannot pass"):
        fx.describe(object())


@pytest.mark.inproc_only("counts JNI global references")
def test_auto_convert_temporaries_are_released(auto, fx, client):
    fx.size([1, 2, 3])
    before = client.global_ref_count()
    for _ in range(500):
        assert fx.size([1, 2, 3]) == 3
        assert fx.describe({1: [2]}) == "java.util.HashMap{1=[2]}"
    assert client.global_ref_count() - before < 10


@pytest.mark.inproc_only("counts JNI global references")
def test_iteration_leaves_no_references(fx, client):
    lst = fx.mixed()
    list(lst)
    before = client.global_ref_count()
    for _ in range(200):
        list(lst)
        list(fx.map(3).items())
        it = iter(fx.range(500))
        next(it)
        del it  # abandoned mid-walk: the cursor is released
    assert client.global_ref_count() - before < 10


def test_concurrent_iteration(fx):
    lst = fx.range(5000)
    errors: list = []

    def walk():
        try:
            for _ in range(20):
                assert list(lst) == list(range(5000))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=walk) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_shared_iterator_across_threads_is_safe(fx):
    it = iter(fx.range(20_000))
    seen: list = []
    errors: list = []

    def drain():
        try:
            for x in it:
                seen.append(x)
        except (RuntimeError, ValueError) as exc:  # another thread was fetching: refused
            errors.append(exc)

    threads = [threading.Thread(target=drain) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == len(set(seen)) and set(seen) <= set(range(20_000))


class _NextOnCollect:
    """Garbage in a cycle whose __del__ takes an item from `it`: a collection run by the
    iterator's own conversion of a chunk (an allocation there) re-enters it."""

    def __init__(self, it, taken: list) -> None:
        self.it, self.taken, self.cycle = it, taken, self

    def __del__(self) -> None:
        try:
            self.taken.append(next(self.it))
        except (RuntimeError, ValueError, StopIteration):  # refused while it fetches; its end
            pass


def test_iterator_re_entered_by_its_own_conversion(gw):
    # each item once, none lost and none detached: a re-entry during the conversion of a
    # chunk fetched the next chunk into the buffer being converted (items came out
    # 'detached', the chunk's other Java references were lost)
    import gc
    lst = gw.jvm.java.util.ArrayList()
    for k in range(1500):
        lst.add(gw.jvm.java.lang.StringBuilder(str(k)))
    it, got, taken = iter(lst), [], []
    old = gc.get_threshold()
    gc.set_threshold(1, 1, 1)
    try:
        while True:
            _NextOnCollect(it, taken)
            try:
                got.append(next(it))
            except StopIteration:
                break
    finally:
        gc.set_threshold(*old)
        gc.collect()
    texts = sorted(int(str(x)) for x in got + taken)
    assert texts == list(range(1500))


@pytest.mark.inproc_only("creates a second in-process gateway")
def test_shutdown_releases_the_class_cache(gateway):
    import gc

    from conftest import fixtures_jar
    from py4jni import JavaGateway, java_collections

    gw2 = JavaGateway(classpath=fixtures_jar())
    client = gw2._gateway_client
    lst = gw2.jvm.java.util.ArrayList()
    lst.append(1)
    assert lst.count(1) == 1  # caches java.util.Collections for this client
    assert client in java_collections._CLASSES
    del lst
    gw2.shutdown()
    assert client not in java_collections._CLASSES
    ref = __import__("weakref").ref(client)
    del client, gw2
    gc.collect()
    assert ref() is None


@pytest.mark.inproc_only("the in-process cursor operation")
def test_walk_modes_need_a_map(fx):
    if not _py4jni.bulk_enabled():
        pytest.skip("bulk operations off")
    with pytest.raises(Py4JError, match="needs a Map"):
        _py4jni.iterate(fx.range(2), "e")
    assert list(_py4jni.iterate(fx.map(2), "v")) == [0, 1]
    assert list(_py4jni.iterate(fx.map(2), "e", 1, 1)) == [("k0", 0), ("k1", 1)]


class _TaggedBufferConverter:
    """A framework's converter of numeric buffers (as PySpark's numpy array converter,
    registered with prepend=True): an ArrayList holding a tag and the items."""

    def can_convert(self, obj: object) -> bool:
        import array
        return isinstance(obj, array.array)

    def convert(self, obj: object, gateway_client: object) -> object:
        from py4jni.java_collections import ListConverter
        return ListConverter().convert(["tagged", *obj], gateway_client)  # type: ignore[misc]


def test_framework_converters_come_before_buffer_conversion(auto) -> None:
    """Under auto_convert a converter registered first (prepend=True) sees a numeric
    buffer before py4jni makes it a primitive array, as under py4j (where no buffer
    conversion exists); without one, or without auto_convert, py4jni converts it as
    before (a primitive array in-process with the bulk operations, else a list)."""
    import array

    from py4jni import protocol
    objects = auto.jvm.java.util.Objects
    data = array.array("b", [1, 2])
    before = objects.toString(data)
    assert "tagged" not in before
    conv = _TaggedBufferConverter()
    protocol.register_input_converter(conv, prepend=True)
    try:
        assert objects.toString(data) == "[tagged, 1, 2]"
        auto._auto_convert = False  # py4j tries no converter then
        try:
            assert "tagged" not in objects.toString(data)
        except Py4JError:
            pass  # a list without auto_convert: refused, as py4j refuses it
    finally:
        protocol.INPUT_CONVERTER.remove(conv)
