"""Zero-copy buffers: gateway.direct_buffer (Python memory as a Java direct ByteBuffer)
and as_memoryview (a Java direct ByteBuffer's memory as a Python memoryview)."""
from __future__ import annotations

import gc
import mmap
import time
import weakref

import pytest

from conftest import run_python
from py4jni import Py4JError, as_memoryview

try:
    import numpy as np
except ImportError:  # pragma: no cover - numpy is in the dev environment
    np = None

needs_numpy = pytest.mark.skipif(np is None, reason="numpy not installed")
INPROC = pytest.mark.inproc_only("Java sees Python's memory only in the same process")


def _buffers(gw):
    return gw.jvm.org.py4jni.fixtures.Buffers


def _checksum(data: bytes) -> int:
    """Buffers.sumDirect in Python: big-endian 8-byte words, then trailing bytes."""
    words = len(data) & ~7
    total = sum(int.from_bytes(data[i:i + 8], "big", signed=True) for i in range(0, words, 8))
    total += sum(data[words:])
    return (total + 2**63) % 2**64 - 2**63


@INPROC
def test_java_writes_are_seen_in_the_bytearray(gateway):
    data = bytearray(64)
    bb = gateway.direct_buffer(data)
    assert bb.isDirect() and bb.capacity() == 64
    _buffers(gateway).fill(bb, 0x5A)
    assert data == bytearray(b"\x5a" * 64)
    bb.put(3, 1)
    assert data[3] == 1


@INPROC
def test_python_writes_are_seen_by_java(gateway):
    data = bytearray(range(100))
    bb = gateway.direct_buffer(data)
    assert _buffers(gateway).sumDirect(bb) == _checksum(bytes(data))
    data[:8] = b"\xff" * 8
    assert bb.get(0) == -1
    assert _buffers(gateway).sumDirect(bb) == _checksum(bytes(data))


@INPROC
@needs_numpy
def test_numpy_array_and_mmap_are_shared(gateway):
    a = np.arange(16, dtype=np.float64)
    bb = gateway.direct_buffer(a)
    order = gateway.jvm.java.nio.ByteOrder.nativeOrder()
    db = bb.order(order).asDoubleBuffer()
    assert db.get(5) == 5.0
    db.put(2, 42.5)
    assert a[2] == 42.5
    m = mmap.mmap(-1, 4096)
    mb = gateway.direct_buffer(m)
    _buffers(gateway).fill(mb, 7)
    assert m[:4] == b"\x07" * 4
    with pytest.raises(BufferError):  # the export is held while Java holds the buffer
        m.close()
    del mb


@INPROC
def test_object_lives_while_java_holds_the_buffer(gateway):
    B = _buffers(gateway)

    class Blob(bytearray):
        pass  # bytearray itself cannot be weakly referenced

    data = Blob(b"\x01" * 32)
    alive = weakref.ref(data)
    B.hold(gateway.direct_buffer(data))
    del data
    gc.collect()
    assert alive() is not None, "the Python object went away while Java holds its memory"
    B.fill(B.held(), 9)
    assert bytes(alive()) == b"\x09" * 32
    assert B.sumDirect(B.held()) == _checksum(b"\x09" * 32)
    B.drop()
    deadline = time.monotonic() + 20
    while alive() is not None and time.monotonic() < deadline:
        B.collect()  # Java collects the ByteBuffer, its Cleaner releases the export
        gc.collect()
    assert alive() is None, "the export was not released after Java dropped the buffer"


@INPROC
def test_refused_buffers_say_why(gateway):
    with pytest.raises(BufferError, match="read-only"):
        gateway.direct_buffer(b"immutable")
    with pytest.raises(TypeError, match="buffer protocol"):
        gateway.direct_buffer("text")
    if np is not None:
        with pytest.raises(BufferError, match="not C-contiguous"):
            gateway.direct_buffer(np.zeros((4, 4))[:, 1])


@INPROC
def test_memoryview_of_a_java_direct_buffer(gateway):
    bb = gateway.jvm.java.nio.ByteBuffer.allocateDirect(16)
    mv = as_memoryview(bb)
    assert mv.nbytes == 16 and not mv.readonly
    mv[1] = 200
    assert bb.get(1) == 200 - 256
    bb.put(2, 5)
    assert mv[2] == 5
    ro = as_memoryview(bb.asReadOnlyBuffer())
    assert ro.readonly and ro[2] == 5
    with pytest.raises(TypeError):
        ro[0] = 1


@INPROC
def test_memoryview_keeps_the_java_buffer(gateway):
    mv = as_memoryview(gateway.jvm.java.nio.ByteBuffer.allocateDirect(1 << 20))
    mv[: 1 << 20] = b"\x03" * (1 << 20)
    _buffers(gateway).collect()  # the JavaObject inside the view keeps it reachable
    assert mv[(1 << 20) - 1] == 3 and bytes(mv[:4]) == b"\x03" * 4


@INPROC
def test_memoryview_outlives_a_detach_of_its_buffer(gateway):
    # the view holds a reference of its own: a detach of the JavaObject it was made from
    # (gateway.detach, or _detach) leaves its memory alive; it was freed by Java's
    # Cleaner, and reading the view crashed the interpreter (SIGSEGV)
    for detach in (gateway.detach, lambda o: o._detach()):
        bb = gateway.jvm.java.nio.ByteBuffer.allocateDirect(4 << 20)
        mv = as_memoryview(bb)
        mv[: 4 << 20] = b"\x07" * (4 << 20)
        detach(bb)
        del bb
        _buffers(gateway).collect()
        assert sum(mv[::4096]) == 7 * 1024 and mv[(4 << 20) - 1] == 7
    bb = gateway.jvm.java.nio.ByteBuffer.allocateDirect(8)
    bb._detach()
    with pytest.raises(Py4JError, match="detached"):
        as_memoryview(bb)


@INPROC
def test_memoryview_releases_a_detached_buffer_when_it_goes(gateway):
    # the reference a detach left to the view is released with the view, not kept until
    # the JavaObject goes (here they live on) nor leaked
    client = gateway._gateway_client
    allocate = gateway.jvm.java.nio.ByteBuffer.allocateDirect
    as_memoryview(allocate(8)).release()  # warm the caches (they hold references)
    gc.collect()
    before = client.global_ref_count()
    kept = []
    for _ in range(50):
        bb = allocate(8)
        kept.append(bb)
        mv = as_memoryview(bb)
        gateway.detach(bb)
        mv[0] = 1
        mv.release()
        del mv
    gc.collect()
    assert client.global_ref_count() == before
    del kept, bb
    gc.collect()
    assert client.global_ref_count() == before


@INPROC
@needs_numpy
def test_numpy_view_of_java_doubles(gateway):
    jvm = gateway.jvm
    bb = jvm.java.nio.ByteBuffer.allocateDirect(8 * 10).order(jvm.java.nio.ByteOrder.nativeOrder())
    bb.asDoubleBuffer().put(gateway.new_array(jvm.double, 10))
    bb.putDouble(8 * 3, 2.5)
    a = np.frombuffer(as_memoryview(bb), dtype=np.float64)
    assert a[3] == 2.5 and a.shape == (10,)


@INPROC
def test_buffer_kinds_alternating_stay_right(gateway, tmp_path):
    """What a buffer is (direct or heap, read-only or not) is asked once per class: each
    kind in turn, slices and a file mapping included, still answers as its own."""
    jvm = gateway.jvm
    path = tmp_path / "mapped"
    path.write_bytes(b"\x07" * 64)
    raf = jvm.java.io.RandomAccessFile(str(path), "rw")
    mode = jvm.java.nio.channels.FileChannel.MapMode
    mapped = raf.getChannel().map(mode.READ_WRITE, 0, 64)
    mapped_ro = raf.getChannel().map(mode.READ_ONLY, 0, 64)
    rw = jvm.java.nio.ByteBuffer.allocateDirect(32)
    for _ in range(3):
        for bb, nbytes, readonly in ((rw, 32, False), (rw.asReadOnlyBuffer(), 32, True),
                                     (rw.slice(), 32, False), (mapped, 64, False),
                                     (mapped_ro, 64, True)):
            mv = as_memoryview(bb)
            assert (mv.nbytes, mv.readonly) == (nbytes, readonly)
        assert as_memoryview(mapped_ro)[5] == 7
        with pytest.raises(Py4JError, match="heap ByteBuffer"):
            as_memoryview(jvm.java.nio.ByteBuffer.allocate(4).asReadOnlyBuffer())
    raf.close()


@INPROC
def test_heap_buffers_and_other_objects_are_refused(gateway):
    with pytest.raises(Py4JError, match="heap ByteBuffer"):
        as_memoryview(gateway.jvm.java.nio.ByteBuffer.allocate(4))
    with pytest.raises(Py4JError, match="not a java.nio.ByteBuffer"):
        as_memoryview(gateway.jvm.java.util.ArrayList())
    with pytest.raises(TypeError, match="JavaObject"):
        as_memoryview(bytearray(4))


@pytest.mark.socket_only("the refusal of socket mode")
def test_socket_mode_refuses_zero_copy(gateway):
    with pytest.raises(Py4JError, match="in-process"):
        gateway.direct_buffer(bytearray(8))
    with pytest.raises(Py4JError, match="in-process"):
        as_memoryview(gateway.jvm.java.nio.ByteBuffer.allocateDirect(8))


def test_exit_while_java_holds_and_releases_buffers():
    # Python exits while Java holds one buffer and its Cleaner is releasing others:
    # the releases must not enter the exiting interpreter (exit status 0, no crash).
    code = (
        "import os\n"
        "from py4jni import JavaGateway\n"
        "gw = JavaGateway(classpath=os.environ['P4J_FIXTURES_JAR'])\n"
        "B = gw.jvm.org.py4jni.fixtures.Buffers\n"
        "B.hold(gw.direct_buffer(bytearray(1 << 20)))\n"
        "for _ in range(200):\n"
        "    gw.direct_buffer(bytearray(4096))\n"
        "gw.jvm.java.lang.System.gc()\n"
        "print('done', flush=True)\n")
    r = run_python(code)
    assert r.returncode == 0 and "done" in r.stdout, (r.stdout[-3000:], r.stderr[-2000:])
