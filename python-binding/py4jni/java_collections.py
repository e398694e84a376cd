"""py4j's collection wrappers: Java collections and arrays that feel like Python's.

A Java method returning a ``java.util.List``, ``Set``, ``Map``, ``Iterator`` or an
array (other than ``byte[]``, which stays ``bytes``) returns a :class:`JavaList`,
:class:`JavaSet`, :class:`JavaMap`, :class:`JavaIterator` or :class:`JavaArray`.
Any attribute these classes do not define is a Java method, as for every JavaObject;
where Python's name hides Java's (``remove``, ``sort``, ``get`` ...), call Java through
``get_method(obj, "remove")``.

What things cost (in-process; socket mode does the same work with plain Java calls
that py4j's GatewayServer serves, one round trip each):

- iterating a JavaList, JavaSet or JavaMap (keys, values, items) fetches chunks of
  elements, one Java call per chunk (64 elements first, growing to 4096);
- a JavaIterator calls ``next()`` once per element (it may be shared with Java code);
- ``ListConverter``/``SetConverter``/``MapConverter`` (and ``auto_convert``) build the
  Java collection in one call;
- a primitive JavaArray (``int[]``, ``double[]``, ... and ``byte[]`` made by
  ``new_array``) reads and writes regions with one copy and no Java call, and exports
  the buffer protocol: ``memoryview(arr)``, ``bytes(arr)``, ``numpy.asarray(arr)``
  copy the array once. A read-only export is a snapshot; a writable export (asked for
  explicitly: ``numpy.frombuffer(arr, dtype)``, ``file.readinto(arr)``,
  ``struct.pack_into``) writes the span of elements that changed back to Java when it
  is released.

Where py4jni differs from py4j 0.10.9.9 on purpose:

- ``JavaList.insert`` and ``pop`` follow Python list rules for out-of-range and
  negative indexes (py4j appends for an index below ``-len``; ``pop()`` of an empty
  list raises IndexError instead of a Java exception);
- ``JavaList.remove(x)`` raises ValueError exactly when ``x`` is absent (py4j's check
  misfires for elements equal to 0 or False);
- ``JavaList + iterable`` accepts Python iterables, ``iterable + JavaList`` keeps the
  order; ``sort`` takes ``key`` and ``reverse``;
- ``JavaMap.get(key, default)`` returns ``default`` for an absent key (``m[key]`` still
  returns None, as in py4j); ``setdefault`` and ``update`` work on the Java map;
- set operators (``|``, ``&``, ``-``, ``^``) of a JavaSet return Python sets;
- iteration that meets a Java exception other than NoSuchElementException (e.g. a
  ConcurrentModificationException) raises it as Py4JJavaError (py4j stops silently);
- a Python buffer of a numeric format (``array.array``, ``numpy`` arrays,
  ``memoryview``) passed as an argument becomes the matching primitive array
  (``'d'`` -> ``double[]``), also under auto_convert (py4j would build an ArrayList).
"""
from __future__ import annotations

import _operator as operator  # operator's C half: index() without operator.py (~0.4 ms)
import itertools
# collections.abc is _collections_abc re-exported; importing it runs collections'
# __init__ (~2 ms), while _collections_abc is loaded with the interpreter.
from _collections_abc import (ItemsView, KeysView, Mapping, MutableMapping,
                              MutableSequence, MutableSet, Sequence, Set, ValuesView)

TYPE_CHECKING = False  # typing's constant without importing typing (~5 ms)
if TYPE_CHECKING:
    import weakref
    from typing import Any, Callable, Iterable, Iterator

from . import _hooks, _py4jni
from . import protocol as proto
from ._py4jni import JavaArrayBase, JavaClass, JavaMember, JavaObject  # noqa: F401
from .compat import (basestring, hasattr2, isbytearray, ispython3bytestr,  # noqa: F401
                     iteritems, next)
from ._base import get_method  # noqa: F401 - py4j exports it here too
from .protocol import (Py4JError, Py4JJavaError, get_command_part,  # noqa: F401
                       get_return_value, register_input_converter,
                       register_output_converter)

__all__ = [
    "JavaIterator", "JavaList", "JavaSet", "JavaMap", "JavaArray", "ListConverter",
    "SetConverter", "MapConverter", "new_array", "to_java_array",
]

_iterate = _py4jni.iterate
_member = _py4jni.member

# ------------------------------------------------------------------ helpers

# JavaClasses this module calls (java.util.ArrayList, ...), per client. A JavaClass
# holds its client, so an entry keeps its client alive until forget_client() (called
# by JavaGateway.shutdown through _hooks.before_shutdown) or until the client is found
# closed. Made on first use: weakref costs ~1 ms to import, at every JavaGateway().
_CLASSES: "weakref.WeakKeyDictionary[Any, dict[str, Any]] | None" = None


def _jclass(client: Any, fqn: str) -> Any:
    """The JavaClass ``fqn`` of ``client`` (resolved once per client)."""
    global _CLASSES
    if _CLASSES is None:
        import weakref
        _CLASSES = weakref.WeakKeyDictionary()
    try:
        cache = _CLASSES[client]
    except KeyError:
        cache = _CLASSES.setdefault(client, {})
    cls = cache.get(fqn)
    if cls is None:
        if client.closed:
            forget_client(client)
            raise Py4JError("py4jni: the gateway has been shut down")
        cls = client.resolve(None, fqn)
        if cls is None:
            raise Py4JError(f"py4jni: class {fqn} not found")
        cache[fqn] = cls
    return cls


def forget_client(client: Any) -> None:
    """Drops the classes cached for ``client`` (at shutdown)."""
    if _CLASSES is not None:
        _CLASSES.pop(client, None)


def _bulk(client: Any) -> bool:
    """True when ``client`` serves the in-process helpers and bulk operations."""
    return client.bulk and _py4jni.bulk_enabled()


def _exc_class(exc: Py4JJavaError) -> str:
    """The Java class name of a Py4JJavaError's throwable (one Java call)."""
    try:
        return exc.java_exception.getClass().getName()
    except Py4JError:
        return ""


_INDEX_ERRORS = frozenset((
    "java.lang.IndexOutOfBoundsException", "java.lang.ArrayIndexOutOfBoundsException",
    "java.lang.StringIndexOutOfBoundsException"))


def _index(key: Any, what: str = "list") -> int:
    if not hasattr(key, "__index__"):
        raise TypeError(f"{what} indices must be integers, not {type(key).__name__}")
    return operator.index(key)


def _norm(i: int, size: int, what: str = "list") -> int:
    """Python's index rule: -size <= i < size, negative counting from the end."""
    if i < 0:
        i += size
    if not 0 <= i < size:
        raise IndexError(f"{what} index out of range")
    return i


def _convertible(obj: Any) -> bool:
    return hasattr(obj, "__iter__") and not isinstance(obj, (str, bytes, bytearray))


def _as_java_collection(client: Any, obj: Any) -> Any:
    """A JavaObject as it is; a Python iterable as a new java.util.ArrayList."""
    if isinstance(obj, JavaObject):
        return obj
    if not _convertible(obj):
        raise TypeError(f"py4jni: expected an iterable, not {type(obj).__name__}")
    return ListConverter().convert(obj, client)


def _iterator_fallback(java_iterator: Any) -> Iterator[Any]:
    """Plain-call iteration, as py4j does it: ``next()`` until NoSuchElementException
    (one Java call per element)."""
    nxt = _member(java_iterator, "next")
    while True:
        try:
            value = nxt()
        except Py4JJavaError as exc:
            if _exc_class(exc) == "java.util.NoSuchElementException":
                return
            raise
        yield value


def _walk(obj: Any, mode: str = "k") -> Iterator[Any]:
    """Batched iteration of a Java collection (fallback: its iterator()). Mode 'k':
    elements (a map's keys), 'v': a map's values, 'e': a map's (key, value) pairs."""
    it = _iterate(obj, mode)
    if it is not NotImplemented:
        return it
    if mode == "e":
        get = _member(obj, "get")
        return ((k, get(k)) for k in _walk(obj, "k"))
    is_map = isinstance(obj, Mapping)  # (a flag: keeps obj's type for _member)
    if is_map:
        source = _member(obj, "keySet" if mode == "k" else "values")()
    else:
        source = obj
    return _iterator_fallback(_member(source, "iterator")())


# ------------------------------------------------------------------ iterator

class JavaIterator(JavaObject):
    """A java.util.Iterator as a Python iterator: each ``next()`` calls Java's
    ``next()`` once (one Java call); NoSuchElementException ends the iteration."""

    __slots__ = ("_batch",)
    _batch: Any

    def __iter__(self) -> "JavaIterator":
        return self

    def __next__(self) -> Any:
        try:
            batch = self._batch
        except AttributeError:
            batch = self._batch = _iterate(self, "k", 1, 1)
        if batch is NotImplemented:
            try:
                return _member(self, "next")()
            except Py4JJavaError as exc:
                if _exc_class(exc) == "java.util.NoSuchElementException":
                    raise StopIteration from None
                raise
        return next(batch)

    next = __next__


# ------------------------------------------------------------------ list

class JavaList(JavaObject, MutableSequence["Any"]):
    """A java.util.List as a Python MutableSequence.

    Indexing, ``len`` and ``in`` are one Java call each (a negative index adds a
    ``size()`` call); slices are new Java ArrayLists (copies); iteration is batched.
    ``str()`` and ``repr()`` render like a Python list. Java's ``remove`` is
    ``java_remove`` (or ``get_method(l, "remove")``).
    """

    __slots__ = ()

    # -- reading
    def __len__(self) -> int:
        return self.size()

    def __iter__(self) -> Iterator[Any]:
        return _walk(self)

    def __reversed__(self) -> Iterator[Any]:
        return reversed(list(_walk(self)))

    def __contains__(self, value: Any) -> bool:
        return self.contains(value)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return self._slice(key)
        i = _index(key)
        if i < 0:
            i = _norm(i, self.size())
        try:
            return self.get(i)
        except Py4JJavaError as exc:
            if _exc_class(exc) in _INDEX_ERRORS:
                raise IndexError("list index out of range") from None
            raise

    def _slice(self, key: slice) -> "JavaList":
        client = self._gateway_client
        start, stop, step = key.indices(self.size())
        if step == 1:
            return _jclass(client, "java.util.ArrayList")(self.subList(start, max(start, stop)))
        idx = range(start, stop, step)
        if not idx:
            return _jclass(client, "java.util.ArrayList")()
        lo, hi = min(idx), max(idx) + 1
        window = list(self.subList(lo, hi))
        return ListConverter().convert([window[i - lo] for i in idx], client)

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        """``indexOf(value)``: the first index of value, or -1 (py4j's rule)."""
        if start == 0 and stop is None:
            return self.indexOf(value)
        size = self.size()
        lo, hi, _ = slice(start, stop).indices(size)
        if hi <= lo:
            return -1
        found = self.subList(lo, hi).indexOf(value)
        return found + lo if found >= 0 else -1

    def count(self, value: Any) -> int:
        """``Collections.frequency(list, value)`` (one Java call)."""
        return _jclass(self._gateway_client, "java.util.Collections").frequency(self, value)

    # -- writing
    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(key, slice):
            self._set_slice(key, value)
            return
        i = _index(key)
        if i < 0:
            i = _norm(i, self.size())
        try:
            self.set(i, value)
        except Py4JJavaError as exc:
            if _exc_class(exc) in _INDEX_ERRORS:
                raise IndexError("list assignment index out of range") from None
            raise

    def _set_slice(self, key: slice, value: Any) -> None:
        client = self._gateway_client
        start, stop, step = key.indices(self.size())
        values = list(value)  # a copy: value may be this list
        if step == 1:
            stop = max(start, stop)
            if stop > start:
                self.subList(start, stop).clear()
            if values:
                self.addAll(start, ListConverter().convert(values, client))
            return
        idx = range(start, stop, step)
        if len(idx) != len(values):
            raise ValueError(f"attempt to assign sequence of size {len(values)} to extended "
                             f"slice of size {len(idx)}")
        setter = self.set
        for i, v in zip(idx, values):
            setter(i, v)

    def __delitem__(self, key: Any) -> None:
        if isinstance(key, slice):
            start, stop, step = key.indices(self.size())
            if step == 1:
                if stop > start:
                    self.subList(start, stop).clear()
                return
            remove = _member(self, "remove")
            for i in sorted(range(start, stop, step), reverse=True):
                remove(i)
            return
        i = _index(key)
        if i < 0:
            i = _norm(i, self.size())
        try:
            _member(self, "remove")(i)
        except Py4JJavaError as exc:
            if _exc_class(exc) in _INDEX_ERRORS:
                raise IndexError("list assignment index out of range") from None
            raise

    @property
    def java_remove(self) -> Any:
        """Java's ``remove`` (py4j's name for it)."""
        return _member(self, "remove")

    def append(self, value: Any) -> None:
        self.add(value)

    def insert(self, key: Any, value: Any) -> None:
        """Inserts before index ``key`` (Python's rule: clamped to the list)."""
        i = _index(key)
        size = self.size()
        if i < 0:
            i = max(0, i + size)
        self.add(min(i, size), value)

    def extend(self, other_list: Any) -> None:
        """``addAll``: a Java collection directly, a Python iterable converted in one call."""
        self.addAll(_as_java_collection(self._gateway_client, other_list))

    def pop(self, key: Any = None) -> Any:
        """Removes and returns the element at index ``key`` (None: the last one, as py4j;
        negative from the end); IndexError when out of range or empty."""
        size = self.size()
        if size == 0:
            raise IndexError("pop from empty list")
        i = _norm(_index(-1 if key is None else key), size, "pop")
        return _member(self, "remove")(i)

    def remove(self, value: Any) -> None:
        """Removes the first element equal to value (Java's equals); ValueError if absent."""
        i = self.indexOf(value)
        if i < 0:
            raise ValueError("java_list.remove(x): x not in java_list")
        _member(self, "remove")(i)

    def clear(self) -> None:
        _member(self, "clear")()

    def sort(self, key: Any = None, reverse: bool = False) -> None:
        """Natural order through ``Collections.sort`` (reverse: ``reverseOrder()``); with a
        ``key``, Python sorts a copy and the list is overwritten in place."""
        colls = _jclass(self._gateway_client, "java.util.Collections")
        if key is None:
            if reverse:
                colls.sort(self, colls.reverseOrder())
            else:
                colls.sort(self)
            return
        items = sorted(self, key=key, reverse=reverse)
        colls.copy(self, ListConverter().convert(items, self._gateway_client))

    def reverse(self) -> None:
        _jclass(self._gateway_client, "java.util.Collections").reverse(self)

    # -- operators
    def __add__(self, other: Any) -> Any:
        if not isinstance(other, JavaObject) and not _convertible(other):
            return NotImplemented
        result = _jclass(self._gateway_client, "java.util.ArrayList")(self)
        result.addAll(_as_java_collection(self._gateway_client, other))
        return result

    def __radd__(self, other: Any) -> Any:
        if not _convertible(other):
            return NotImplemented
        result = ListConverter().convert(other, self._gateway_client)
        result.addAll(self)
        return result

    def __iadd__(self, other: Any) -> "JavaList":
        self.extend(other)
        return self

    def __mul__(self, n: Any) -> Any:
        if not hasattr(n, "__index__"):
            return NotImplemented
        result = _jclass(self._gateway_client, "java.util.ArrayList")()
        for _ in range(operator.index(n)):
            result.addAll(self)
        return result

    __rmul__ = __mul__

    def __imul__(self, n: Any) -> "JavaList":
        n = operator.index(n)
        if n <= 0:
            self.clear()
        elif n > 1:
            copy = _jclass(self._gateway_client, "java.util.ArrayList")(self)
            for _ in range(n - 1):
                self.addAll(copy)
        return self

    def __repr__(self) -> str:
        return "[" + ", ".join(repr(x) for x in self) + "]"

    __str__ = __repr__


# ------------------------------------------------------------------ set

class JavaSet(JavaObject, MutableSet["Any"]):
    """A java.util.Set as a Python MutableSet.

    ``add``, ``remove``, ``in`` and ``len`` are one Java call each; ``discard`` raises
    KeyError for an absent element (py4j's rule); iteration is batched; operators
    (``|``, ``&``, ``-``, ``^``) return Python sets. ``str()`` renders like a set.
    """

    __slots__ = ()

    @classmethod
    def _from_iterable(cls, it: Iterable[Any]) -> set[Any]:
        return set(it)

    # Subset comparisons as Python sets have them (== stays Java's equals, as in py4j).
    __le__ = Set.__le__
    __lt__ = Set.__lt__
    __ge__ = Set.__ge__
    __gt__ = Set.__gt__

    def __len__(self) -> int:
        return self.size()

    def __iter__(self) -> Iterator[Any]:
        return _walk(self)

    def __contains__(self, value: Any) -> bool:
        return self.contains(value)

    def add(self, value: Any) -> None:
        _member(self, "add")(value)

    def remove(self, value: Any) -> None:
        """Removes value; KeyError when it is absent (one Java call)."""
        if not _member(self, "remove")(value):
            raise KeyError(value)

    def discard(self, value: Any) -> None:
        """py4j's discard: the same as remove (KeyError when absent)."""
        self.remove(value)

    def clear(self) -> None:
        _member(self, "clear")()

    def __isub__(self, it: Set[Any]) -> "JavaSet":
        if it is self:
            self.clear()
        else:
            remove = _member(self, "remove")
            for value in it:
                remove(value)
        return self

    def __repr__(self) -> str:
        items = [repr(x) for x in self]
        return "{" + ", ".join(items) + "}" if items else "set()"

    __str__ = __repr__


# ------------------------------------------------------------------ map

class _JavaKeysView(KeysView["Any"]):
    __slots__ = ()


class _JavaValuesView(ValuesView["Any"]):
    __slots__ = ()
    _mapping: "JavaMap"

    def __iter__(self) -> Iterator[Any]:
        return _walk(self._mapping, "v")


class _JavaItemsView(ItemsView["Any", "Any"]):
    __slots__ = ()
    _mapping: "JavaMap"

    def __iter__(self) -> Iterator[Any]:
        return _walk(self._mapping, "e")

    def __contains__(self, item: Any) -> bool:
        key, value = item
        m = self._mapping
        return m.containsKey(key) and _member(m, "get")(key) == value


class JavaMap(JavaObject, MutableMapping["Any", "Any"]):
    """A java.util.Map as a Python MutableMapping.

    ``m[k]`` is ``get(k)`` and returns None for an absent key (py4j's rule);
    ``m[k] = v`` is ``put``, ``del m[k]`` is ``remove`` (no KeyError, as py4j), ``in`` is
    ``containsKey``; iteration over keys, ``values()`` and ``items()`` is batched.
    ``str()`` renders like a dict.
    """

    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        return _member(self, "get")(key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.put(key, value)

    def __delitem__(self, key: Any) -> None:
        _member(self, "remove")(key)

    def __len__(self) -> int:
        return self.size()

    def __iter__(self) -> Iterator[Any]:
        return _walk(self, "k")

    def __contains__(self, key: Any) -> bool:
        return self.containsKey(key)

    def keys(self) -> KeysView[Any]:
        return _JavaKeysView(self)

    def values(self) -> ValuesView[Any]:
        return _JavaValuesView(self)

    def items(self) -> ItemsView[Any, Any]:
        return _JavaItemsView(self)

    def get(self, key: Any, default: Any = None) -> Any:
        """Java's ``get``; ``default`` when the key is absent (a second call only then)."""
        value = _member(self, "get")(key)
        if value is None and default is not None and not self.containsKey(key):
            return default
        return value

    _MISSING = object()

    def pop(self, key: Any, default: Any = _MISSING) -> Any:
        if not self.containsKey(key):
            if default is JavaMap._MISSING:
                raise KeyError(key)
            return default
        return _member(self, "remove")(key)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if self.containsKey(key):
            return _member(self, "get")(key)
        self.put(key, default)
        return default

    def update(self, other: Any = (), /, **kwds: Any) -> None:
        """``putAll``: a Java map directly, a Python mapping or pairs in one conversion."""
        client = self._gateway_client
        if isinstance(other, JavaObject):
            self.putAll(other)
        elif isinstance(other, Mapping) or hasattr(other, "keys"):
            if len(other):
                self.putAll(MapConverter().convert(other, client))
        else:
            pairs = dict(other)
            if pairs:
                self.putAll(MapConverter().convert(pairs, client))
        if kwds:
            self.putAll(MapConverter().convert(kwds, client))

    def clear(self) -> None:
        _member(self, "clear")()

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in _walk(self, "e")) + "}"

    __str__ = __repr__


# ------------------------------------------------------------------ array

# JNI letter of each primitive type name, and Java's typed java.lang.reflect.Array setter.
_PRIMITIVES = {"boolean": "Z", "byte": "B", "char": "C", "short": "S", "int": "I",
               "long": "J", "float": "F", "double": "D"}
_BOXES = {"Z": "java.lang.Boolean", "B": "java.lang.Byte", "C": "java.lang.Character",
          "S": "java.lang.Short", "I": "java.lang.Integer", "J": "java.lang.Long",
          "F": "java.lang.Float", "D": "java.lang.Double"}
_SETTERS = {"Z": "setBoolean", "B": "setByte", "C": "setChar", "S": "setShort",
            "I": "setInt", "J": "setLong", "F": "setFloat", "D": "setDouble"}
_READ_CHUNK = 65536


class JavaArray(JavaArrayBase, Sequence["Any"]):
    """A Java array as a fixed-length Python Sequence with item assignment.

    Primitive arrays (``int[]``, ``double[]`` ...) read and write through region copies
    (no Java call in-process) and export the buffer protocol (format ``'i'``, ``'d'``,
    ``'?'`` for boolean, ``'H'`` for char ...): ``memoryview(a)``, ``bytes(a)`` and
    ``numpy.asarray(a)`` copy the array once. Reference arrays use
    ``java.lang.reflect.Array`` (one Java call per element; iteration is batched).
    Slices are new Java arrays (copies). ``str()`` is Java's ``toString()``, as in py4j.
    """

    __slots__ = ()

    def _elem(self) -> str:
        return self._info()[0]

    # -- reading (``a[i]`` of a primitive array runs in JavaArrayBase, in C)
    def _getitem(self, key: Any) -> Any:
        if isinstance(key, slice):
            return self._slice(key)
        elem, size = self._info()
        i = _norm(_index(key, "array"), size, "array")
        if elem != "L":
            return self._read(i, i + 1)[0]
        return _jclass(self._gateway_client, "java.lang.reflect.Array").get(self, i)

    def __iter__(self) -> Iterator[Any]:
        elem, size = self._info()
        if elem != "L":
            if size <= _READ_CHUNK:
                return iter(self._read(0, size))
            return itertools.chain.from_iterable(
                self._read(start, min(size, start + _READ_CHUNK))
                for start in range(0, size, _READ_CHUNK))
        it = _iterate(self)
        if it is not NotImplemented:
            return it
        get = _jclass(self._gateway_client, "java.lang.reflect.Array").get
        return (get(self, i) for i in range(size))

    def __reversed__(self) -> Iterator[Any]:
        return reversed(list(self))

    def __contains__(self, value: Any) -> bool:
        return any(x is value or x == value for x in self)

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        lo, hi, _ = slice(start, stop).indices(len(self))
        for i, x in enumerate(list(self)[lo:hi], lo):
            if x is value or x == value:
                return i
        raise ValueError(f"{value!r} is not in the array")

    def count(self, value: Any) -> int:
        return sum(1 for x in self if x is value or x == value)

    def _slice(self, key: slice) -> "JavaArray":
        elem, size = self._info()
        start, stop, step = key.indices(size)
        idx = range(start, stop, step)
        client = self._gateway_client
        if elem != "L":
            data: Any = ()
            if idx:
                lo, hi = min(idx), max(idx) + 1
                raw = memoryview(self._read_bytes(lo, hi)).cast(_py4jni.elem_info(elem)[0])
                data = raw[start - lo::step]
            made = _py4jni.array_new(client, elem, data)
            if made is not NotImplemented:
                return made
            result = _new_array(client, self.getClass().getComponentType(), len(idx))
            if idx:
                result._write(0, data)
            return result
        result = _new_array(client, self.getClass().getComponentType(), len(idx))
        if step == 1:
            if idx:
                _jclass(client, "java.lang.System").arraycopy(self, start, result, 0, len(idx))
            return result
        values = list(self)
        for k, i in enumerate(idx):
            result._store(k, values[i])
        return result

    # -- writing (``a[i] = v`` of a primitive array runs in JavaArrayBase, in C)
    def _setitem(self, key: Any, value: Any) -> None:
        elem, size = self._info()
        if isinstance(key, slice):
            self._set_slice(elem, size, key, value)
            return
        i = _norm(_index(key, "array"), size, "array assignment")
        if elem != "L":
            self._write(i, (value,))
        else:
            self._store(i, value)

    def _set_slice(self, elem: str, size: int, key: slice, value: Any) -> None:
        start, stop, step = key.indices(size)
        idx = range(start, stop, step)
        if elem != "L":
            fmt, itemsize, _ = _py4jni.elem_info(elem)
            packed = memoryview(_py4jni.pack(elem, value)).cast(fmt)
            if len(packed) != len(idx):
                raise ValueError(f"attempt to assign sequence of size {len(packed)} to slice "
                                 f"of size {len(idx)} (a Java array's length is fixed)")
            if not idx:
                return
            if step == 1:
                self._write(start, packed)
                return
            lo, hi = min(idx), max(idx) + 1
            window = memoryview(bytearray(self._read_bytes(lo, hi))).cast(fmt)
            window[start - lo::step] = packed
            self._write(lo, window)
            return
        values = list(value)
        if len(values) != len(idx):
            raise ValueError(f"attempt to assign sequence of size {len(values)} to slice of "
                             f"size {len(idx)} (a Java array's length is fixed)")
        for i, v in zip(idx, values):
            self._store(i, v)

    def _store(self, i: int, value: Any) -> None:
        """Stores into a reference array; Py4JError naming the Java type when it does not
        fit. In-process a number is converted to the array's box type (5 into a Long[]
        is a Long); over plain calls (socket mode) it is stored as its default box."""
        client = self._gateway_client
        if _bulk(client):
            if _jclass(client, "org.py4jni.Bulk").store(self, i, value):
                return
        else:
            try:
                _jclass(client, "java.lang.reflect.Array").set(self, i, value)
                return
            except Py4JJavaError as exc:
                if _exc_class(exc) != "java.lang.IllegalArgumentException":
                    raise
        component = self.getClass().getComponentType().getTypeName()
        raise Py4JError(f"py4jni: a {type(value).__name__} cannot be stored in a Java "
                        f"{component}[]")  # py4j: Py4JError "Cannot convert ..."

    # -- fallbacks for transports without array operations (socket mode)
    def _fallback_info(self) -> tuple[str, int]:
        name = self.getClass().getName()
        elem = name[1] if len(name) == 2 and name[0] == "[" and name[1] in _SETTERS else "L"
        length = _jclass(self._gateway_client, "java.lang.reflect.Array").getLength(self)
        return elem, length

    def _fallback_read(self, start: int, stop: int) -> bytes:
        return _py4jni.pack(self._elem(), self._fallback_values(start, stop))

    def _fallback_values(self, start: int, stop: int) -> list[Any]:
        """Elements [start, stop) as the server answers for each (a float: the double of
        its Float.toString text, as py4j reads it), one call per element."""
        get = _jclass(self._gateway_client, "java.lang.reflect.Array").get
        return [get(self, i) for i in range(start, stop)]

    def _fallback_write(self, start: int, data: bytes) -> None:
        elem = self._elem()
        fmt = _py4jni.elem_info(elem)[0]
        setter = getattr(_jclass(self._gateway_client, "java.lang.reflect.Array"),
                         _SETTERS[elem])
        for k, v in enumerate(memoryview(data).cast(fmt).tolist()):
            setter(self, start + k, chr(v) if elem == "C" else v)


# ------------------------------------------------------------------ new_array

def _fqn(java_class: Any) -> str:
    if isinstance(java_class, str):
        return java_class
    fqn = getattr(java_class, "_fqn", None)
    if fqn is None:
        raise Py4JError(f"py4jni: new_array needs a class (gateway.jvm.int, "
                        f"gateway.jvm.java.lang.String, ...), not {type(java_class).__name__}")
    return fqn


def _class_object(client: Any, java_class: Any) -> Any:
    """The java.lang.Class JavaObject for a JavaClass, a JavaPackage-like name or a str."""
    if isinstance(java_class, JavaClass) and client.caps & _py4jni.CAP_CLASS_ARG:
        return java_class._java_lang_class
    fqn = _fqn(java_class)
    letter = _PRIMITIVES.get(fqn)
    if letter is not None:
        return _jclass(client, _BOXES[letter]).TYPE
    return _jclass(client, "java.lang.Class").forName(fqn)


def _int_array(client: Any, values: list[int]) -> Any:
    made = _py4jni.array_new(client, "I", values)
    if made is not NotImplemented:
        return made
    reflect = _jclass(client, "java.lang.reflect.Array")
    arr = reflect.newInstance(_jclass(client, "java.lang.Integer").TYPE, len(values))
    for i, v in enumerate(values):
        reflect.setInt(arr, i, v)
    return arr


def _new_array(client: Any, component: Any, *dims: int) -> Any:
    """``java.lang.reflect.Array.newInstance`` of a java.lang.Class JavaObject."""
    reflect = _jclass(client, "java.lang.reflect.Array")
    if len(dims) == 1:
        return reflect.newInstance(component, dims[0])
    return reflect.newInstance(component, _int_array(client, list(dims)))


_JAVA_MAX_LENGTH = 2**31 - 1  # elements of a Java array, UTF-16 units of a String


def new_array(gateway: Any, java_class: Any, *dimensions: int) -> Any:
    """``gateway.new_array(cls, *dims)``: a new Java array of ``cls`` (``gateway.jvm.int``
    and the other primitive names included), one dimension per argument. In-process a
    one-dimensional primitive array costs no Java call. A one-dimensional ``byte[]`` is
    what py4j returns in both transports: ``bytes`` of zeros (a ``byte[]`` result is a
    copy), with no Java call; ``to_java_array(gateway, bytearray(n))`` makes a Java
    ``byte[]`` to pass and read back in-process."""
    if not dimensions:
        raise TypeError("new_array needs at least one dimension")
    dims = [_index(d, "array dimension") for d in dimensions]
    for d in dims:
        if d > _JAVA_MAX_LENGTH:
            raise Py4JError(f"py4jni: an array dimension of {d} is too long for Java: a Java "
                            "array holds at most 2^31 - 1 (2147483647) elements")
    client = gateway._gateway_client
    letter = _PRIMITIVES.get(_fqn(java_class))
    if letter == "B" and len(dims) == 1 and dims[0] >= 0:
        return bytes(dims[0])
    if letter is not None and len(dims) == 1 and dims[0] >= 0:
        made = _py4jni.array_new(client, letter, dims[0])
        if made is not NotImplemented:
            return made
    return _new_array(client, _class_object(client, java_class), *dims)


def _letter_of(java_type: Any) -> str:
    if isinstance(java_type, str) and java_type in _SETTERS:
        return java_type
    name = _fqn(java_type)
    letter = _PRIMITIVES.get(name)
    if letter is None:
        raise TypeError(f"py4jni: {name} is not a primitive Java type (boolean, byte, char, "
                        "short, int, long, float, double)")
    return letter


_FORMAT_LETTERS = {"?": "Z", "b": "B", "B": "B", "c": "B", "h": "S", "H": "C", "i": "I",
                   "q": "J", "f": "F", "d": "D"}


def _buffer_letter(view: memoryview) -> str | None:
    fmt = view.format.lstrip("@=")
    if fmt in ("l", "L"):
        fmt = "q" if view.itemsize == 8 else "i"
    letter = _FORMAT_LETTERS.get(fmt)
    if letter is None or _py4jni.elem_info(letter)[1] != view.itemsize:
        return None
    return letter


def to_java_array(gateway: Any, data: Any, java_type: Any = None) -> Any:
    """A new primitive Java array holding ``data``: a buffer (``array.array``, numpy
    array, memoryview: its format picks the type unless ``java_type`` is given) or an
    iterable of numbers with ``java_type`` (``"double"``, ``gateway.jvm.double`` or a
    JNI letter ``"D"``). In-process: one copy, no Java call."""
    client = getattr(gateway, "_gateway_client", gateway)
    if java_type is None:
        try:
            view = memoryview(data)
        except TypeError:
            raise TypeError("py4jni: to_java_array needs java_type for a non-buffer "
                            f"{type(data).__name__}") from None
        letter = _buffer_letter(view)
        if letter is None:
            raise TypeError(f"py4jni: a buffer of format {view.format!r} (item size "
                            f"{view.itemsize}) has no matching Java primitive array")
    else:
        letter = _letter_of(java_type)
    made = _py4jni.array_new(client, letter, data)
    if made is not NotImplemented:
        return made
    packed = _py4jni.pack(letter, data)
    if letter == "B":
        return packed  # over plain calls a byte[] is bytes (py4j's rule)
    count = len(packed) // _py4jni.elem_info(letter)[1]
    name = {v: k for k, v in _PRIMITIVES.items()}[letter]
    arr = _new_array(client, _class_object(client, name), count)
    if count:
        arr._write(0, memoryview(packed).cast(_py4jni.elem_info(letter)[0]))
    return arr


# ------------------------------------------------------------------ converters

class SetConverter:
    """py4j's converter of Python sets to java.util.HashSet (one Java call in-process)."""

    def can_convert(self, object: Any) -> bool:
        return isinstance(object, Set)

    def convert(self, object: Any, gateway_client: Any) -> Any:
        return _java_tree(object, "h", gateway_client)


class ListConverter:
    """py4j's converter of Python iterables (not str, bytes, bytearray) to
    java.util.ArrayList (one Java call in-process)."""

    def can_convert(self, object: Any) -> bool:
        return _convertible(object)

    def convert(self, object: Any, gateway_client: Any) -> Any:
        return _java_tree(object, "l", gateway_client)


class MapConverter:
    """py4j's converter of Python mappings to java.util.HashMap (one Java call
    in-process)."""

    def can_convert(self, object: Any) -> bool:
        return hasattr(object, "keys") and hasattr(object, "__getitem__")

    def convert(self, object: Any, gateway_client: Any) -> Any:
        return _java_tree(object, "a", gateway_client)




_JAVA_COLLECTIONS = {"l": "java.util.ArrayList", "h": "java.util.HashSet",
                     "a": "java.util.HashMap"}
_BUILTIN_CONTAINERS = frozenset({list, tuple, dict, set, frozenset})


def _items(obj: Any, kind: str) -> list[Any] | tuple[Any, ...]:
    """The elements of ``obj`` as the collection of ``kind`` takes them (a map's keys and
    values in turn); a tuple, which the C side reads without copying it."""
    if kind != "a":
        return tuple(obj)
    if isinstance(obj, dict):
        return [x for pair in obj.items() for x in pair]
    return [x for key in obj.keys() for x in (key, obj[key])]


def _make(client: Any, kind: str, values: Sequence[Any]) -> Any:
    """A new Java collection of ``kind`` holding ``values`` (one transport call
    in-process; socket mode: one call per element, as py4j's converters make them)."""
    made = _py4jni.new_collection(client, "A" if kind == "a" else kind, values)
    if made is NotImplemented:
        made = _jclass(client, _JAVA_COLLECTIONS[kind])()
        if kind == "a":
            put = made.put
            for i in range(0, len(values), 2):
                put(values[i], values[i + 1])
        else:
            add = _member(made, "add")
            for element in values:
                add(element)
    return made


def _nested_kind(element: Any) -> str | None:
    """The collection kind auto_convert makes of ``element`` when it is a list, tuple,
    dict, set or frozenset that one of py4j's own converters takes (not a converter a
    framework put before them); None otherwise (the element converts as any argument)."""
    if type(element) not in _BUILTIN_CONTAINERS:
        return None
    ours = False
    for converter in proto.INPUT_CONVERTER:
        ours = ours or isinstance(converter, _PY4J_CONVERTERS)
        if converter.can_convert(element):
            kind = {SetConverter: "h", MapConverter: "a", ListConverter: "l"}.get(
                type(converter)) if ours else None
            return kind
    return None


def _java_tree(root: Any, kind: str, client: Any) -> Any:
    """``root`` as a new Java collection of ``kind`` ('l', 'h', 'a'), what py4j's
    converters make of it. Under auto_convert (the client's ``converters``) the lists,
    tuples, dicts and sets nested in it are made first, innermost first, with a stack of
    this function's own instead of recursion: any depth converts (py4j's client recurses,
    to the interpreter's recursion limit), and a collection that contains itself raises
    Py4JError. Without them, or with none nested, the collection is one call."""
    items = _items(root, kind)
    if not getattr(client, "converters", None) or _py4jni.nested_at(items) < 0:
        return _make(client, kind, items)
    # each frame: [container, kind, its items, next index, converted values]
    stack: list[list[Any]] = [[root, kind, items, 0, []]]
    on_path = {id(root)}
    while True:
        frame = stack[-1]
        container, k, elements, i, values = frame
        if i < len(elements):
            frame[3] = i + 1
            element = elements[i]
            nested = _nested_kind(element)
            if nested is None:
                values.append(element)
                continue
            if id(element) in on_path:
                raise Py4JError(f"py4jni: a Python {type(element).__name__} that contains "
                                "itself cannot become a Java collection")
            on_path.add(id(element))
            stack.append([element, nested, _items(element, nested), 0, []])
            continue
        stack.pop()
        on_path.discard(id(container))
        made = _make(client, k, values)
        if not stack:
            return made
        stack[-1][4].append(made)


def _convert_buffer(gateway: Any, obj: Any) -> Any:
    """Always on: a numeric Python buffer becomes the matching primitive array."""
    try:
        view = memoryview(obj)
    except TypeError:
        return NotImplemented
    letter = _buffer_letter(view)
    if letter is None:
        return NotImplemented
    made = to_java_array(gateway, obj, letter)
    return made if isinstance(made, JavaObject) else NotImplemented  # socket byte[]: bytes


def _convert_argument(gateway: Any, obj: Any) -> Any:
    """A Python argument the C core does not pass itself. Without auto_convert: a numeric
    buffer becomes its primitive array (_convert_buffer), nothing else converts. With
    auto_convert: py4j's INPUT_CONVERTER in order, a framework's own converters first
    (registered with ``prepend=True``: PySpark's numpy array converter), then the
    buffer's primitive array, then py4j's set -> HashSet, mapping -> HashMap, other
    iterables -> ArrayList, then converters appended with register_input_converter
    (datetime.date -> java.sql.Date...)."""
    if not getattr(gateway, "_auto_convert", False):
        return _convert_buffer(gateway, obj)
    buffer_tried = False
    for converter in proto.INPUT_CONVERTER:
        if not buffer_tried and isinstance(converter, _PY4J_CONVERTERS):
            buffer_tried = True  # where py4j's own converters begin
            made = _convert_buffer(gateway, obj)
            if made is not NotImplemented:
                return made
        if converter.can_convert(obj):
            return converter.convert(obj, gateway._gateway_client)
    return NotImplemented if buffer_tried else _convert_buffer(gateway, obj)


def _wrapper_maker(name: str) -> "Callable[[str, Any], Any]":
    """An output converter making the wrapper class ``name`` (looked up when called)."""
    def make(target_id: str, gateway_client: Any) -> Any:
        return globals()[name](target_id, gateway_client)
    return make


register_input_converter(SetConverter())  # py4j's order
register_input_converter(MapConverter())
register_input_converter(ListConverter())
for _letter, _wrapper in ((proto.MAP_TYPE, "JavaMap"), (proto.LIST_TYPE, "JavaList"),
                          (proto.ARRAY_TYPE, "JavaArray"), (proto.SET_TYPE, "JavaSet"),
                          (proto.ITERATOR_TYPE, "JavaIterator")):
    register_output_converter(_letter, _wrapper_maker(_wrapper))


_PY4J_CONVERTERS = (SetConverter, MapConverter, ListConverter)


def _install() -> None:
    for conv in (_convert_argument,):
        if conv not in _hooks.ARG_CONVERTERS:
            _hooks.ARG_CONVERTERS.append(conv)
    _hooks.new_array = new_array
    if _forget_gateway_client not in _hooks.BEFORE_SHUTDOWN:
        _hooks.BEFORE_SHUTDOWN.append(_forget_gateway_client)


def _forget_gateway_client(gateway: Any) -> None:
    """Before a gateway shuts down: drops its client's class cache (forget_client)."""
    forget_client(gateway._gateway_client)


_install()

WRAPPERS = {"list": JavaList, "set": JavaSet, "map": JavaMap, "array": JavaArray,
            "iterator": JavaIterator}
# From now on the C core wraps returned collections in these classes.
_py4jni._register(Py4JError, Py4JJavaError, proto.Py4JNetworkError,
                  proto.Py4JAuthenticationError, wrappers=WRAPPERS)
