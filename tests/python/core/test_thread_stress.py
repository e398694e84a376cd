"""Many Python threads on one gateway at once: shared objects, classes, name spaces,
collections, callbacks and natives, while other threads detach objects in use and run
the garbage collector. Each test asserts results only (never a timing); all of them run
on every build, and on a free-threaded one (sys._is_gil_enabled() False) they are the
check that the extension's shared state holds without the GIL.

Fixtures: org.py4jni.fixtures.NativeCodec (tests/java) for the natives.
"""
from __future__ import annotations

import gc
import sys
import threading
from typing import Callable

import pytest

from py4jni import Py4JError

THREADS = 8
ROUNDS = 150
CODEC = "org.py4jni.fixtures.NativeCodec"


@pytest.fixture(autouse=True)
def _switch_often():
    """GIL builds: switch threads every few microseconds, so that they interleave inside
    the extension's calls as free-threaded ones do."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


def run_threads(work: Callable[[int], None], n: int = THREADS,
                background: list[Callable[[threading.Event], None]] | None = None) -> None:
    """Runs work(0..n-1) on n threads started together, with the `background` loops on
    their own threads until the workers end; re-raises the first failure."""
    errors: list[BaseException] = []
    start = threading.Barrier(n + len(background or []))
    done = threading.Event()

    def wrap(fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                start.wait()
                fn()
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                errors.append(exc)
                done.set()
        return run

    workers = [threading.Thread(target=wrap(lambda i=i: work(i))) for i in range(n)]
    others = [threading.Thread(target=wrap(lambda b=b: b(done))) for b in background or []]
    for t in workers + others:
        t.start()
    for t in workers:
        t.join()
    done.set()
    for t in others:
        t.join()
    if errors:
        raise errors[0]


def collector(done: threading.Event) -> None:
    """Runs the garbage collector until `done` (a collection each millisecond)."""
    while not done.wait(0.001):
        gc.collect()


@pytest.fixture
def rounds(request: pytest.FixtureRequest) -> int:
    """Calls per thread: socket mode's calls each cost a round trip, so it makes fewer."""
    return ROUNDS if request.node.callspec.params.get("gateway") == "inproc" else ROUNDS // 5


def test_shared_objects_classes_and_name_spaces(gateway, rounds):
    jvm = gateway.jvm
    shared_map = jvm.java.util.concurrent.ConcurrentHashMap()
    shared_sb = jvm.java.lang.StringBuffer()  # synchronized in Java: appends may race
    math = jvm.java.lang.Math

    def work(i: int) -> None:
        for r in range(rounds):
            key = f"{i}-{r}"
            shared_map.put(key, r)                        # a shared object's method
            assert shared_map.get(key) == r
            assert math.max(r, i) == max(r, i)            # a shared class's static
            assert jvm.java.lang.Integer.valueOf(r) == r  # name spaces resolved anew
            sb = jvm.java.lang.StringBuilder()            # objects made and dropped
            sb.append(i).append("/").append(r)
            assert sb.toString() == f"{i}/{r}"
            shared_sb.append("x")
            assert jvm.java.lang.String.valueOf(r * 7) == str(r * 7)

    run_threads(work, background=[collector])
    assert shared_map.size() == THREADS * rounds
    assert shared_sb.length() == THREADS * rounds
    assert all(shared_map.get(f"{i}-{r}") == r for i in (0, THREADS - 1) for r in (0, rounds - 1))


def test_shared_collections(gateway, rounds):
    jvm = gateway.jvm
    items = jvm.java.util.ArrayList()
    for k in range(200):
        items.add(k)
    expected = sum(range(200))
    walks = rounds // 5
    synced = jvm.java.util.Collections.synchronizedList(jvm.java.util.ArrayList())

    def work(i: int) -> None:
        for r in range(walks):
            assert sum(items) == expected                 # a walk in chunks per thread
            assert items[r] == r and len(items) == 200
            synced.append(i * 1000 + r)
            walked = list(jvm.java.util.HashSet(items))   # a collection per call
            assert len(walked) == 200

    run_threads(work, background=[collector])
    assert sorted(synced) == sorted(i * 1000 + r for i in range(THREADS)
                                    for r in range(walks))


def use_while_detached(pool: list, use: Callable[[int, object], None],
                       background: list[Callable[[threading.Event], None]]) -> None:
    """Runs use(k, pool[k]) for every k on THREADS - 1 threads while another detaches the
    pool's objects in order: each use succeeds or raises Py4JError 'detached'."""
    outcomes = {"ok": 0, "detached": 0}
    lock = threading.Lock()

    def work(i: int) -> None:
        for k, obj in enumerate(pool):
            try:
                use(k, obj)
                key = "ok"
            except Py4JError as exc:
                assert "detached" in str(exc), exc
                key = "detached"
            with lock:
                outcomes[key] += 1

    def releaser(done: threading.Event) -> None:
        for obj in pool:
            obj._detach()

    run_threads(work, n=THREADS - 1, background=[releaser, *background])
    assert outcomes["ok"] + outcomes["detached"] == (THREADS - 1) * len(pool)
    assert all(obj._detached for obj in pool)


def test_objects_detached_while_other_threads_call_them(gateway):
    """A detach on one thread while others call the object: each call either returns
    the right value or raises 'detached'; none crashes or sees another object."""
    pool = [gateway.jvm.java.lang.StringBuilder(str(k)) for k in range(60)]

    def use(k: int, sb) -> None:
        assert sb.toString() == str(k)

    use_while_detached(pool, use, background=[collector])


def test_arrays_detached_while_other_threads_read_them(gateway):
    """Reads of large regions (made without the GIL) and first looks at an array's type,
    while another thread detaches the arrays: each read gives the array's own values or
    raises 'detached' (the op once read the handle unpinned: 'the array is null', or
    another array's elements once the handle was reused)."""
    jvm = gateway.jvm
    n = 32768  # 128 KiB an array: a region read releases the GIL
    template = gateway.new_array(jvm.int, n)
    pool = []
    for k in range(40):
        made = jvm.java.util.Arrays.copyOf(template, n)  # type not looked at yet
        jvm.java.util.Arrays.fill(made, k)
        pool.append(made)

    def use(k: int, arr) -> None:
        got = arr[0:n]
        assert len(got) == n and got[0] == k and got[n - 1] == k

    use_while_detached(pool, use, background=[])


class Key:
    """A Python java.lang.Comparable (py4j's proxy form)."""

    def __init__(self, key: int) -> None:
        self.key = key

    def compareTo(self, other: object) -> int:  # noqa: N802 - Java's name
        o = other.hashCode()  # type: ignore[attr-defined]
        return (self.key > o) - (self.key < o)

    def hashCode(self) -> int:  # noqa: N802 - Java's name
        return self.key

    class Java:
        implements = ["java.lang.Comparable"]


def test_callbacks_from_many_threads(gateway, rounds):
    """Java sorts Python objects on each thread; some objects are shared by every thread
    (one Java proxy each, reused), the others are each thread's own."""
    jvm = gateway.jvm
    shared = [Key(k) for k in range(20)]

    def work(i: int) -> None:
        for r in range(max(2, rounds // 25)):
            own = [Key(1000 + (k * 37 + i + r) % 40) for k in range(20)]
            lst = jvm.java.util.ArrayList()
            for o in own + shared:
                lst.add(o)
            jvm.java.util.Collections.sort(lst)
            keys = [lst.get(k).hashCode() for k in range(lst.size())]
            assert keys == sorted(o.key for o in own + shared)

    run_threads(work, background=[collector])


@pytest.mark.inproc_only("Python-implemented natives are an in-process feature")
def test_natives_from_many_threads(gateway):
    gateway.register_natives(CODEC, {"twice": lambda x: 2 * x})
    nc = gateway.jvm.org.py4jni.fixtures.NativeCodec

    def work(i: int) -> None:
        for r in range(10):
            assert nc.loop(100 + i + r) == 2 * sum(range(100 + i + r))

    run_threads(work, background=[collector])


@pytest.mark.parametrize("package", ["pyspark", "pyflink"])
def test_frameworks_are_not_run_in_process_on_a_free_threaded_python(package, monkeypatch,
                                                                     capfd):
    """Under the switch on a free-threaded CPython, importing PySpark or PyFlink says on
    stderr that it is not run in-process and goes on as without the switch (the adapter's
    enable() raises the same reason)."""
    from py4jni import _switch, frameworks
    from py4jni.frameworks import adapter

    monkeypatch.setattr(_switch, "settings", lambda: _switch.Settings("inproc", None, None))
    monkeypatch.setattr(adapter, "free_threaded", lambda: True)
    monkeypatch.setattr(frameworks, "_SAID", set())
    assert frameworks._Finder().find_spec(package) is None
    assert frameworks._Finder().find_spec(package) is None  # said once
    err = capfd.readouterr().err
    assert err.count(f"py4jni: {package} is not run in-process: ") == 1
    assert "needs a CPython with the GIL" in err
    adapter_of = frameworks.adapter_module(package).ADAPTER
    monkeypatch.setattr(adapter_of, "is_enabled", False)  # another test may have enabled it
    with pytest.raises(Py4JError, match="needs a CPython with the GIL"):
        adapter_of.enable()
