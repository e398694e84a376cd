"""PySpark's Arrow collect without its loopback socket, for a driver JVM in this process.

Stock ``DataFrame._collect_as_arrow`` (behind ``toPandas()`` with Arrow and ``toArrow()``)
calls ``Dataset.collectAsArrowToPython()``, which starts a socket server whose thread runs
the job and writes an Arrow IPC stream (the schema, the record batches in the order the
partitions finish, then their order indices), and reads that stream back through
loopback TCP with ``ArrowCollectSerializer``. In-process the same Spark code writes the
stream into memory (``org.py4jni.ByteChunks``: one copy of each batch), the batches
cross to Python as ``byte[]`` (one copy each) and ``ArrowCollectSerializer`` reads them
in place (pyarrow wraps them without copying). Everything else is PySpark's: the job
runs inside ``withAction`` (SQL execution id, query listeners, ``observe()``), the same
batch order, time zone, large-var-types and struct settings, selfDestruct's split, the
empty result; an error in the job surfaces as from ``getResult()`` (a Java exception
PySpark knows is converted; any other is wrapped as ``awaitResult`` wraps it).

The writer is the body of the function ``collectAsArrowToPython`` hands to
``PythonRDD.serveToStream``: a static method of ``org.apache.spark.sql.classic.Dataset``
(Spark 4.x). Where the running Spark has no such method (``writer()`` finds none), the
stock path runs unchanged.
"""
from __future__ import annotations

import threading
from typing import IO, Any, Callable, Optional, cast

from ..protocol import Py4JError, Py4JJavaError

__all__ = ["install", "writer", "ChunkReader", "collect_as_arrow"]

# Spark 4.x: the serveToStream body of Dataset.collectAsArrowToPython, taking
# (Dataset, timeZoneId, errorOnDuplicatedFieldNames, largeVarTypes, OutputStream).
_WRITER_CLASS = "org.apache.spark.sql.classic.Dataset"
_WRITER_NAME = "$anonfun$collectAsArrowToPython$1"

_lock = threading.Lock()
_found: dict[int, Optional[Any]] = {}


class ChunkReader:
    """A read-only binary file over a list of bytes-like chunks, handing out memoryview
    slices of a chunk where a read lies inside one (no copy: pyarrow's buffers point into
    the chunks) and joined bytes where a read spans chunks."""

    def __init__(self, chunks: list[Any]) -> None:
        self._chunks = [memoryview(c) for c in chunks]
        self._i = 0
        self._pos = 0
        self.closed = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def writable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True
        self._chunks = []

    def __enter__(self) -> "ChunkReader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def read(self, n: int = -1) -> Any:
        """Up to ``n`` bytes (all that is left for a negative ``n``)."""
        chunks = self._chunks
        if n is None or n < 0:
            n = sum(len(c) for c in chunks[self._i:]) - self._pos
        while self._i < len(chunks) and self._pos == len(chunks[self._i]):
            self._i += 1
            self._pos = 0
        if n == 0 or self._i >= len(chunks):
            return b""
        first = chunks[self._i]
        if self._pos + n <= len(first):
            view = first[self._pos:self._pos + n]
            self._pos += n
            return view
        parts = []
        while n > 0 and self._i < len(chunks):
            c = chunks[self._i]
            take = min(n, len(c) - self._pos)
            parts.append(c[self._pos:self._pos + take])
            self._pos += take
            n -= take
            if self._pos == len(c):
                self._i += 1
                self._pos = 0
        return b"".join(parts)


def writer(gateway: Any) -> Optional[Any]:
    """Spark's Arrow stream writer (the static method above) on ``gateway``'s JVM, or
    None when this Spark has none with that signature. Looked up once per gateway
    (a few Java calls)."""
    with _lock:
        key = id(gateway)
        if key not in _found:
            _found[key] = _lookup(gateway)
        return _found[key]


def _lookup(gateway: Any) -> Optional[Any]:
    jvm = gateway.jvm
    try:
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        cls = jvm.java.lang.Class.forName(_WRITER_CLASS, False, loader)
        jclass = jvm.java.lang.Class
        types = gateway.new_array(jclass, 5)
        types[0] = cls
        types[1] = jclass.forName("java.lang.String")
        types[2] = getattr(jvm.java.lang.Boolean, "TYPE")
        types[3] = getattr(jvm.java.lang.Boolean, "TYPE")
        types[4] = jclass.forName("java.io.OutputStream")
        method = cls.getMethod(_WRITER_NAME, types)
        if not jvm.java.lang.reflect.Modifier.isStatic(method.getModifiers()):
            return None
        jclass.forName("org.py4jni.ByteChunks", False, loader)  # py4jni's helper jar
    except Py4JError:
        return None
    return getattr(jvm.org.apache.spark.sql.classic.Dataset, _WRITER_NAME)


def collect_as_arrow(df: Any, write: Any, split_batches: bool = False,
                     empty_list_if_zero_records: bool = True,
                     prefers_large_var_types: bool = False) -> list[Any]:
    """PySpark's ``_collect_as_arrow`` (same arguments, same result) with the stream
    in memory: ``write`` is ``writer(gateway)``."""
    import pyarrow as pa

    from pyspark.errors.exceptions.captured import unwrap_spark_exception
    from pyspark.sql.pandas.serializers import ArrowCollectSerializer
    from pyspark.traceback_utils import SCCallSiteSync

    jvm = df._sc._jvm
    sqlconf = df._jdf.sparkSession().sessionState().conf()
    time_zone = sqlconf.sessionLocalTimeZone()
    error_on_duplicated = sqlconf.pandasStructHandlingMode() == "legacy"
    large_var_types = sqlconf.arrowUseLargeVarTypes()
    out = jvm.org.py4jni.ByteChunks()
    with SCCallSiteSync(df._sc):  # type: ignore[no-untyped-call]
        with unwrap_spark_exception():
            try:
                write(df._jdf, time_zone, error_on_duplicated, large_var_types, out)
            except Py4JJavaError as exc:
                # getResult() raises the serving thread's error wrapped by awaitResult
                wrapped = jvm.org.apache.spark.SparkException(
                    "Exception thrown in awaitResult: ", exc.java_exception)
                raise Py4JJavaError("An error occurred while calling getResult.\n",
                                    wrapped) from None
    with ChunkReader(list(out.chunks())) as stream:
        batch_stream = ArrowCollectSerializer().load_stream(cast(IO[bytes], stream))
        if split_batches:
            # as PySpark: each column in its own allocation, so selfDestruct frees them
            batches = [pa.RecordBatch.from_arrays([pa.concat_arrays([array]) for array in batch],
                                                  schema=batch.schema)
                       for batch in batch_stream]
        else:
            batches = list(batch_stream)
    if len(batches) or empty_list_if_zero_records:
        return batches
    from pyspark.sql.pandas.types import to_arrow_schema
    schema = to_arrow_schema(df.schema, timezone="UTC",
                             prefers_large_types=prefers_large_var_types)
    empty_arrays = [pa.array([], type=field.type) for field in schema]
    return [pa.RecordBatch.from_arrays(empty_arrays, schema=schema)]


def install(gateway_of: Callable[[], Any]) -> None:
    """Replaces PySpark's ``PandasConversionMixin._collect_as_arrow`` by one that takes
    the in-memory path while ``gateway_of()`` (the in-process gateway, or None) is
    PySpark's gateway and Spark has the writer; otherwise PySpark's own runs."""
    from pyspark.sql.pandas.conversion import PandasConversionMixin
    stock = PandasConversionMixin.__dict__["_collect_as_arrow"]
    if getattr(stock, "_py4jni_in_memory", False):
        return

    def _collect_as_arrow(self: Any, split_batches: bool = False,
                          empty_list_if_zero_records: bool = True,
                          prefers_large_var_types: bool = False) -> list[Any]:
        gateway = gateway_of()
        write = writer(gateway) if gateway is not None and \
            self._sc._gateway is gateway else None
        if write is None:
            result: list[Any] = stock(self, split_batches, empty_list_if_zero_records,
                                      prefers_large_var_types)
            return result
        return collect_as_arrow(self, write, split_batches, empty_list_if_zero_records,
                                prefers_large_var_types)

    _collect_as_arrow.__doc__ = stock.__doc__
    _collect_as_arrow._py4jni_in_memory = True  # type: ignore[attr-defined]
    _collect_as_arrow._py4jni_stock = stock  # type: ignore[attr-defined]
    PandasConversionMixin._collect_as_arrow = _collect_as_arrow  # type: ignore[method-assign]
