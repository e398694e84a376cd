"""The scenario table: every timed scenario of perf/README.md, defined once.

A row says what the work is and how each kind of bridge expresses it:
  py4j  -- code for py4j's Python API, shared by the three backends that have it (py4jni
           in-process, py4jni socket mode, py4j): only the import differs. It sees
           `gateway` (a JavaGateway), `api` (JavaGateway, GatewayParameters,
           CallbackServerParameters, java_import, Py4JJavaError, ListConverter, as the
           backend's package provides them), `callback_gateway()` (a gateway that can take
           Python callbacks: in-process the gateway itself, in socket mode a second gateway
           with a callback server on an ephemeral port) and `mode` ("inproc"/"socket").
  jpype -- code for JPype; it sees the `jpype` module.
Both also see the names of perf/helpers.py, the row's parameters (`N`, ...) and
`need_fixtures()`, which raises FixturesUnavailable (the cell says "failed" and why) when
the Java test fixtures (tests/java/org/py4jni/fixtures) are not on the JVM's class path.
Rows with `fixtures=True` use them: perf/bench.py then builds or finds their jar and puts
it on every JVM's class path (embedded JVMs and GatewayServers alike).

Each expression has `setup` (run once, untimed; the names it binds are visible to the
rest), `check` (run once after setup, untimed: asserts the bridge did the work right, so a
fast but wrong backend is an error, not a figure), `op` (one unit of work: the timed
part), `between` (untimed, after every batch) and `stats` (an expression evaluated after
every batch, untimed, giving extra figures such as percentiles). `ops` is how many
reported operations ("calls", "elements", ...) one unit holds: a number, or the name of a
variable that setup binds (X4 counts its callbacks).

Scenarios that are not timed in rounds (COLD-*, MEM, FLOOR, BW) are described in
EXTRA_IDS; perf/bench.py and perf/worker.py run them.
"""
from dataclasses import dataclass, field
import textwrap


@dataclass(frozen=True)
class Expr:
    setup: str = ""
    op: str = ""
    check: str = ""
    between: str = ""
    stats: str = ""
    teardown: str = ""
    na: str = ""  # non-empty: this backend cannot express the scenario, and why

    def clean(self):
        return Expr(**{k: textwrap.dedent(v).strip() for k, v in self.__dict__.items()})


@dataclass(frozen=True)
class Scenario:
    id: str
    group: str
    work: str  # one line, as perf/README.md's scenario table puts it
    op_name: str  # what one reported operation is: "call", "element", ...
    ops: object  # operations per unit: int, or the name of a variable setup binds
    py4j: Expr
    jpype: Expr
    params: dict = field(default_factory=dict)
    note: str = ""
    fixtures: bool = False  # needs the Java test fixtures jar on the class path
    may_skip: bool = False  # large sizes: a cell over budget is skipped (perf/bench.py)

    def expr(self, flavour):
        return (self.py4j if flavour == "py4j" else self.jpype).clean()


SIZES_X2 = {"1k": 1000, "10k": 10000, "100k": 100000}
SIZES_X3 = {"100": 100, "1k": 1000, "10k": 10000}
SIZES_BYTES = {"1k": 1024, "16k": 16384, "256k": 262144, "1M": 1 << 20, "16M": 16 << 20,
               "64M": 64 << 20}
SIZE_X9 = 256 << 20  # bytes Java sums in X9
LARGE_BYTES = 1 << 20  # X7/X8 from this size on may be skipped as over budget
SIZES_LAT = [16, 256, 4096, 16384, 65536]
THREADS_X1 = [1, 4, 16]
SIZE_ARR = 1_000_000  # doubles (8 MB) per ARR unit
# CB-*: Java loop length per unit. In-process a callback takes ~0.5-3 us, so a unit of
# 100k is 0.05-0.3 s. Over a socket every callback is a round trip (~0.1 ms): 100k would
# be 10+ s a unit, so socket backends loop 1,000 times; figures are per callback.
LOOP_CB = 100_000
LOOP_CB_SOCKET = 1_000
FIXTURES_PKG = "org.py4jni.fixtures"

# ARR through py4j's API. In-process: py4jni's to_java_array (one copy of the numpy
# buffer into a new double[]) and numpy.asarray (the buffer protocol: one copy out).
# Socket mode: py4j's API has no primitive-array transfer (py4jni's socket to_java_array
# writes element by element: 1 M round trips), so both socket backends take the byte[]
# route: numpy's bytes cross as a byte[] and a ByteBuffer view copies them into / out of
# the double[] on the Java side (native byte order); numpy reads the bytes back with
# frombuffer.
_ARR_PY4J_SETUP = """
np = need_numpy()
src = np.random.default_rng(1).random(N)
Arrays = gateway.jvm.java.util.Arrays
if mode == "inproc":
    if api.to_java_array is None:
        raise NotApplicable("no to_java_array in this package")
    to_java_array = api.to_java_array
    asarray = np.asarray

    def send():
        return to_java_array(gateway, src)

    def recv(ja):
        return asarray(ja)
else:
    jvm = gateway.jvm
    BB = jvm.java.nio.ByteBuffer
    order = jvm.java.nio.ByteOrder.nativeOrder()
    double = jvm.double
    new_array = gateway.new_array
    frombuffer = np.frombuffer
    f8 = np.float64

    def send():
        ja = new_array(double, N)
        BB.wrap(src.tobytes()).order(order).asDoubleBuffer().get(ja)
        return ja

    def recv(ja):
        bb.asDoubleBuffer().put(ja)
        return frombuffer(bb.array(), dtype=f8)
"""


def _table():
    rows = []
    add = rows.append

    # ---- M: single calls ---------------------------------------------------------------
    add(Scenario(
        "M1", "M", "System.currentTimeMillis(), resolved through the whole name each call",
        "call", 1,
        py4j=Expr(setup="jvm = gateway.jvm",
                  check="assert isinstance(jvm.java.lang.System.currentTimeMillis(), int)",
                  op="jvm.java.lang.System.currentTimeMillis()"),
        jpype=Expr(setup='java = jpype.JPackage("java")',
                   check="assert int(java.lang.System.currentTimeMillis()) > 0",
                   op="java.lang.System.currentTimeMillis()"),
        note="py4j resolves `System` and the member over the wire each time (3 round trips)"))
    add(Scenario(
        "M1-bound", "M", "f = ...System.currentTimeMillis; f()", "call", 1,
        py4j=Expr(setup="f = gateway.jvm.java.lang.System.currentTimeMillis", op="f()"),
        jpype=Expr(setup='f = jpype.JClass("java.lang.System").currentTimeMillis', op="f()")))
    # JPype finds sb.append(<Python int>) ambiguous (boolean, char, Object): its idiom is a
    # typed value, made once in setup.
    for sid, arg, jarg, jsetup in (("M2a", "42", "v", "v = jpype.JInt(42)"),
                                   ("M2b", '"hello"', '"hello"', "")):
        add(Scenario(
            sid, "M", f"sb.append({arg}) on one StringBuilder (setLength(0) between rounds)",
            "call", 1,
            py4j=Expr(setup="sb = gateway.jvm.java.lang.StringBuilder()",
                      check=f"sb.append({arg}); assert sb.toString() == str({arg}); sb.setLength(0)",
                      op=f"sb.append({arg})", between="sb.setLength(0)"),
            jpype=Expr(setup=f'sb = jpype.JClass("java.lang.StringBuilder")()\n{jsetup}',
                       check=f"sb.append({jarg}); assert str(sb.toString()) == str({arg}); sb.setLength(0)",
                       op=f"sb.append({jarg})", between="sb.setLength(0)"),
            note="JPype: sb.append(JInt(42)), the JInt made once (a plain int is ambiguous)"
            if sid == "M2a" else ""))
    add(Scenario(
        "M3", "M", "class resolution: gw.jvm.java.lang.String", "call", 1,
        py4j=Expr(setup="jvm = gateway.jvm", op="jvm.java.lang.String"),
        jpype=Expr(setup="JClass = jpype.JClass", op='JClass("java.lang.String")')))
    add(Scenario(
        "M4", "M", "new StringBuilder() and its release", "object", 1,
        py4j=Expr(setup="SB = gateway.jvm.java.lang.StringBuilder", op="SB()"),
        jpype=Expr(setup='SB = jpype.JClass("java.lang.StringBuilder")', op="SB()")))

    # ---- X1: calls from several threads ------------------------------------------------
    for n in THREADS_X1:
        add(Scenario(
            f"X1-{n}", "X1", f"10,000 calls of f() (M1-bound) spread over {n} threads",
            "call", 10000, params={"N": n},
            py4j=Expr(setup="f = gateway.jvm.java.lang.System.currentTimeMillis\n"
                            "team = CallTeam(N, 10000, f)",
                      op="team.run()", teardown="team.close()"),
            jpype=Expr(setup='f = jpype.JClass("java.lang.System").currentTimeMillis\n'
                             "team = CallTeam(N, 10000, f)",
                       op="team.run()", teardown="team.close()"),
            note="threads are made once, in setup"))

    # ---- X2: iterate a Java list -------------------------------------------------------
    for name, n in SIZES_X2.items():
        add(Scenario(
            f"X2-{name}", "X2", f"iterate a java.util.ArrayList of {n:,} Integers", "element", n,
            params={"N": n},
            py4j=Expr(setup="""
                jvm = gateway.jvm
                lst = jvm.java.util.ArrayList(jvm.java.util.stream.IntStream.range(0, N)
                                              .boxed().collect(jvm.java.util.stream.Collectors.toList()))
                """,
                check="assert lst.size() == N",
                op="for x in lst:\n    pass"),
            jpype=Expr(setup="""
                JClass = jpype.JClass
                lst = JClass("java.util.ArrayList")(JClass("java.util.stream.IntStream").range(0, N)
                                                    .boxed().collect(JClass("java.util.stream.Collectors").toList()))
                """,
                check="assert lst.size() == N",
                op="for x in lst:\n    pass"),
            note="the list is built on the Java side in setup"))

    # ---- X3: Python list -> java.util.List ---------------------------------------------
    for name, n in SIZES_X3.items():
        add(Scenario(
            f"X3-{name}", "X3", f"convert a Python list of {n:,} ints to a java.util.List",
            "conversion", 1, params={"N": n},
            py4j=Expr(setup="""
                if api.ListConverter is None:
                    raise NotApplicable("no ListConverter in this package")
                data = list(range(N))
                conv = api.ListConverter()
                client = gateway._gateway_client
                """,
                check="assert conv.convert(data, client).size() == N",
                op="conv.convert(data, client)"),
            jpype=Expr(setup='AL = jpype.JClass("java.util.ArrayList")\ndata = list(range(N))',
                       check="assert AL(data).size() == N",
                       op="AL(data)"),
            note="py4j: ListConverter().convert(data, gateway._gateway_client); "
                 "JPype: ArrayList(data) (JPype boxes the ints as Long)"))

    # ---- X4: callbacks -----------------------------------------------------------------
    add(Scenario(
        "X4", "X4", "Collections.sort of 100 Python objects implementing java.lang.Comparable",
        "callback", "CALLBACKS",
        py4j=Expr(setup="""
            gw = callback_gateway()
            Cmp, CountingCmp = py4j_comparables()
            AL = gw.jvm.java.util.ArrayList
            sort = gw.jvm.java.util.Collections.sort
            probe = AL()
            for k in ORDER100:
                probe.add(CountingCmp(k))
            sort(probe)
            CALLBACKS = CountingCmp.calls
            del probe
            tmpl = AL()
            for k in ORDER100:
                tmpl.add(Cmp(k))
            """,
            check="w = AL(tmpl); sort(w); assert [w.get(i).hashCode() for i in (0, 50, 99)] == [0, 50, 99]",
            op="w = AL(tmpl)\nsort(w)"),
        jpype=Expr(setup="""
            Cmp, CountingCmp = jpype_comparables()
            AL = jpype.JClass("java.util.ArrayList")
            sort = jpype.JClass("java.util.Collections").sort
            probe = AL()
            for k in ORDER100:
                probe.add(CountingCmp(k))
            sort(probe)
            CALLBACKS = CountingCmp.calls
            del probe
            tmpl = AL()
            for k in ORDER100:
                tmpl.add(Cmp(k))
            """,
            check="w = AL(tmpl); sort(w); assert [w.get(i).key for i in (0, 50, 99)] == [0, 50, 99]",
            op="w = AL(tmpl)\nsort(w)"),
        note="a unit copies a fixed shuffled list (new ArrayList(tmpl)) and sorts the copy; "
             "reported per callback (compareTo, plus hashCode where the bridge hands "
             "`other` back as a Java reference, as py4j does)"))

    # ---- CB: Java loops calling Python (fixtures: CallbackFixtures, NativeCodec) -------
    # py4j API: the proxy goes through callback_gateway(); a unit is one Java call that
    # loops CALLS times (LOOP_CB in-process, LOOP_CB_SOCKET over a socket).
    proxies = {
        "CB-FN-100k": ("java.util.function.Function", "apply", "x", "applyFunction",
                       "sum(range(1000))", "Function.apply(Integer) -> Object",
                       "Object in, Object out (boxing both ways)"),
        "CB-INT-100k": ("java.util.function.IntUnaryOperator", "applyAsInt", "x + x",
                        "applyIntOp", "2 * sum(range(1000))",
                        "IntUnaryOperator.applyAsInt(int) -> int",
                        "int in, int out: the closest JPype gets to a primitive callback"),
    }
    for sid, (iface, meth, result, call, expect, kind, what) in proxies.items():
        add(Scenario(
            sid, "CB", f"a Java loop calling a Python {kind} {LOOP_CB:,} times", "callback",
            "CALLS", params={"N": LOOP_CB, "N_SOCKET": LOOP_CB_SOCKET}, fixtures=True,
            py4j=Expr(setup=f"""
                need_fixtures()
                gw = callback_gateway()
                CF = gw.jvm.{FIXTURES_PKG}.CallbackFixtures
                CALLS = N if mode == "inproc" else N_SOCKET

                class Py:
                    def {meth}(self, x):
                        return {result}

                    class Java:
                        implements = ["{iface}"]

                f = Py()
                """,
                check=f"assert CF.{call}(f, 1000) == {expect}",
                op=f"CF.{call}(f, CALLS)"),
            jpype=Expr(setup=f"""
                need_fixtures()
                CF = jpype.JClass("{FIXTURES_PKG}.CallbackFixtures")
                CALLS = N

                @jpype.JImplements("{iface}")
                class Py:
                    @jpype.JOverride
                    def {meth}(self, x):
                        return {result}

                f = Py()
                """,
                check=f"assert CF.{call}(f, 1000) == {expect}",
                op=f"CF.{call}(f, CALLS)"),
            note=f"CallbackFixtures.{call}(f, n): Java calls the Python object n times and "
                 f"sums the results; {what}; n = {LOOP_CB:,} in-process, "
                 f"{LOOP_CB_SOCKET:,} over a socket; figures per callback"))
    add(Scenario(
        "CB-NATIVE-100k", "CB",
        f"a Java loop calling a `native int twice(int)` implemented in Python {LOOP_CB:,} times",
        "callback", "CALLS", params={"N": LOOP_CB}, fixtures=True,
        py4j=Expr(setup=f"""
            if mode != "inproc":
                raise NotApplicable("socket mode: Java runs in another process, so it cannot "
                                    "call a Python function as a native method (py4jni "
                                    "in-process only)")
            if not hasattr(gateway, "register_natives"):
                raise NotApplicable("no register_natives in this package")
            need_fixtures()
            NC = gateway.jvm.{FIXTURES_PKG}.NativeCodec
            gateway.register_natives("{FIXTURES_PKG}.NativeCodec", {{"twice": lambda x: x + x}})
            CALLS = N
            """,
            check="assert NC.loop(1000) == 2 * sum(range(1000))",
            op="NC.loop(CALLS)"),
        jpype=Expr(na="JPype cannot implement a Java native method in Python; its nearest "
                      "equivalent is its IntUnaryOperator proxy, row CB-INT-100k"),
        note="gateway.register_natives(NativeCodec, {\"twice\": fn}): RegisterNatives binds a "
             "libffi closure with the method's JNI signature (no Proxy, no boxing); "
             "NativeCodec.loop(n) sums twice(i) for i < n"))

    # ---- X5: error path ----------------------------------------------------------------
    add(Scenario(
        "X5", "X5", "1,000 x ArrayList.get(-1) raising, caught", "error", 1000,
        py4j=Expr(setup="""
            lst = gateway.jvm.java.util.ArrayList()
            E = api.Py4JJavaError
            try:
                lst.get(-1)
                raise AssertionError("get(-1) did not raise")
            except E:
                pass
            """,
            op="""
            for _i in range(1000):
                try:
                    lst.get(-1)
                except E:
                    pass
            """),
        jpype=Expr(setup="""
            lst = jpype.JClass("java.util.ArrayList")()
            E = jpype.JException
            try:
                lst.get(-1)
                raise AssertionError("get(-1) did not raise")
            except E:
                pass
            """,
            op="""
            for _i in range(1000):
                try:
                    lst.get(-1)
                except E:
                    pass
            """),
        note="caught as Py4JJavaError (py4j API) or JException (JPype)"))

    # ---- X6: saturation, tail latency --------------------------------------------------
    add(Scenario(
        "X6", "X6", "50 threads x 20 calls of f() (M1-bound), each call timed", "call", 1000,
        py4j=Expr(setup="f = gateway.jvm.java.lang.System.currentTimeMillis\n"
                        "team = LatencyTeam(50, 20, f)",
                  op="team.run()", stats="team.stats()", teardown="team.close()"),
        jpype=Expr(setup='f = jpype.JClass("java.lang.System").currentTimeMillis\n'
                         "team = LatencyTeam(50, 20, f)",
                   op="team.run()", stats="team.stats()", teardown="team.close()"),
        note="figure: wall time / 1000 calls; p50/p99 of per-call latency across the batch"))

    # ---- X7 / X8: bytes ----------------------------------------------------------------
    for name, n in SIZES_BYTES.items():
        add(Scenario(
            f"X7-{name}", "X7", f"bytes RECV: bb.array() of ByteBuffer.allocate({n}) -> Python bytes",
            "call", 1, params={"N": n}, may_skip=n >= LARGE_BYTES,
            py4j=Expr(setup="bb = gateway.jvm.java.nio.ByteBuffer.allocate(N)",
                      check="r = bb.array(); assert isinstance(r, (bytes, bytearray)) and len(r) == N",
                      op="bb.array()"),
            jpype=Expr(setup='bb = jpype.JClass("java.nio.ByteBuffer").allocate(N)',
                       check="r = bytes(bb.array()); assert len(r) == N",
                       op="bytes(bb.array())"),
            note="the ByteBuffer is made once; JPype's array() is a Java array view, "
                 "bytes() copies it"))
    for name, n in SIZES_BYTES.items():
        add(Scenario(
            f"X8-{name}", "X8", f"bytes SEND: baos.write(data, 0, {n}); baos.reset()",
            "call", 1, params={"N": n}, may_skip=n >= LARGE_BYTES,
            py4j=Expr(setup="baos = gateway.jvm.java.io.ByteArrayOutputStream(N)\ndata = payload(N)",
                      check="baos.write(data, 0, N); assert baos.toByteArray() == data; baos.reset()",
                      op="baos.write(data, 0, N)\nbaos.reset()"),
            jpype=Expr(setup='baos = jpype.JClass("java.io.ByteArrayOutputStream")(N)\ndata = payload(N)',
                       check="baos.write(data, 0, N); assert bytes(baos.toByteArray()) == data; baos.reset()",
                       op="baos.write(data, 0, N)\nbaos.reset()")))

    # ---- ARR: primitive arrays through the buffer protocol -----------------------------
    add(Scenario(
        "ARR-1M-send", "ARR", "numpy float64[1,000,000] -> a new Java double[] (8 MB)",
        "array", 1, params={"N": SIZE_ARR},
        py4j=Expr(setup=_ARR_PY4J_SETUP,
                  check="assert Arrays.hashCode(send()) == double_array_hash(src)",
                  op="send()"),
        jpype=Expr(setup="""
            np = need_numpy()
            src = np.random.default_rng(1).random(N)
            Arrays = jpype.JClass("java.util.Arrays")
            make = jpype.JArray(jpype.JDouble)
            """,
            check="assert Arrays.hashCode(make(src)) == double_array_hash(src)",
            op="make(src)"),
        note="in-process py4jni: to_java_array(gateway, a); JPype: JArray(JDouble)(a); socket "
             "backends (no array transfer in py4j's API): new_array(double, N) + "
             "ByteBuffer.wrap(a.tobytes()).order(native).asDoubleBuffer().get(ja). A new "
             "double[] each time: Java's allocation of 8 MB is part of the figure"))
    add(Scenario(
        "ARR-1M-recv", "ARR", "Java double[1,000,000] -> numpy through the buffer protocol",
        "array", 1, params={"N": SIZE_ARR},
        py4j=Expr(setup=_ARR_PY4J_SETUP + textwrap.dedent("""
            ja = send()
            if mode != "inproc":
                bb = BB.allocate(8 * N).order(order)  # what recv() copies ja into
            """),
                  check="assert np.array_equal(recv(ja), src)",
                  op="recv(ja)"),
        jpype=Expr(setup="""
            np = need_numpy()
            src = np.random.default_rng(1).random(N)
            ja = jpype.JArray(jpype.JDouble)(src)
            asarray = np.asarray
            """,
            check="assert np.array_equal(asarray(ja), src)",
            op="asarray(ja)"),
        note="the double[] is made once; in-process py4jni and JPype: numpy.asarray(ja) (one "
             "copy, a read-only snapshot); socket backends: bb.asDoubleBuffer().put(ja) on the "
             "Java side, then np.frombuffer(bb.array(), float64)"))
    add(Scenario(
        "ARR-1M-recv-view", "ARR",
        "a Java direct ByteBuffer of 1,000,000 doubles -> numpy, zero-copy view",
        "array", 1, params={"N": SIZE_ARR},
        py4j=Expr(setup=_ARR_PY4J_SETUP + textwrap.dedent("""
            if mode != "inproc":
                raise NotApplicable("socket mode: Java's memory is in another process "
                                    "(zero-copy views are in-process only)")
            as_memoryview = getattr(api.package, "as_memoryview", None)
            if as_memoryview is None:
                raise NotApplicable("no as_memoryview in this package")
            jvm = gateway.jvm
            bb = jvm.java.nio.ByteBuffer.allocateDirect(8 * N).order(
                jvm.java.nio.ByteOrder.nativeOrder())
            bb.asDoubleBuffer().put(send())
            frombuffer = np.frombuffer
            f8 = np.float64
            """),
                  check="assert np.array_equal(frombuffer(as_memoryview(bb), dtype=f8), src)",
                  op="frombuffer(as_memoryview(bb), dtype=f8)"),
        jpype=Expr(setup="""
            np = need_numpy()
            src = np.random.default_rng(1).random(N)
            JC = jpype.JClass
            bb = JC("java.nio.ByteBuffer").allocateDirect(8 * N).order(
                JC("java.nio.ByteOrder").nativeOrder())
            bb.asDoubleBuffer().put(jpype.JArray(jpype.JDouble)(src))
            frombuffer = np.frombuffer
            f8 = np.float64
            """,
            check="assert np.array_equal(frombuffer(memoryview(bb), dtype=f8), src)",
            op="frombuffer(memoryview(bb), dtype=f8)"),
        note="the direct buffer (native order) is filled once; py4jni: "
             "np.frombuffer(py4jni.as_memoryview(bb), float64); JPype: "
             "np.frombuffer(memoryview(bb), float64); no copy, the array views Java's "
             "memory (compare ARR-1M-recv, one copy)"))

    # ---- X9: Java reads a large Python buffer ------------------------------------------
    x9_na = ("socket mode: Java cannot see Python's memory, and 256 MiB a call through a "
             "socket is X8-64M's business")
    # (id, work, py4j setup lines, JPype setup lines, the data, the call, note)
    x9 = (
        ("X9-direct", "bytearray through a direct ByteBuffer over it",
         'if not hasattr(gateway, "direct_buffer"):\n'
         '    raise NotApplicable("no direct_buffer in this package")\n'
         "direct_buffer = gateway.direct_buffer",
         "import jpype.nio\ndirect_buffer = jpype.nio.convertToDirectBuffer",
         "bytearray(payload(N))", "Bf.sumDirect(direct_buffer(data))",
         "a unit wraps the bytearray (py4jni: gateway.direct_buffer; JPype: "
         "jpype.nio.convertToDirectBuffer) and calls Buffers.sumDirect (fixtures), which "
         "sums the 8-byte words with getLong: no copy"),
        ("X9-copy", "bytes object passed as a byte[] (a copy)", "", "", "payload(N)",
         "Bf.sumBytes(data)",
         "Buffers.sumBytes(byte[]) runs the same loop over ByteBuffer.wrap(b): the "
         "difference to X9-direct is the 256 MiB copy into a new byte[]"),
    )
    for sid, what, py4j_extra, jpype_extra, data, call, note in x9:
        add(Scenario(
            sid, "X9", f"Java sums a {SIZE_X9 >> 20} MiB Python {what}", "call", 1,
            params={"N": SIZE_X9}, fixtures=True, may_skip=True,
            py4j=Expr(setup=f'if mode != "inproc":\n    raise NotApplicable("{x9_na}")\n'
                            f"{py4j_extra}\nneed_fixtures()\n"
                            f"Bf = gateway.jvm.{FIXTURES_PKG}.Buffers\ndata = {data}",
                      check=f"assert {call} == word_checksum(data)", op=call),
            jpype=Expr(setup=f"need_fixtures()\n{jpype_extra}\n"
                             f'Bf = jpype.JClass("{FIXTURES_PKG}.Buffers")\ndata = {data}',
                       check=f"assert {call} == word_checksum(data)", op=call),
            note=note))

    # ---- LAT: string-argument latency curve --------------------------------------------
    for n in SIZES_LAT:
        add(Scenario(
            f"LAT-{n}", "LAT", f"java.util.Objects.hashCode(s), s an ASCII str of {n:,} bytes",
            "call", 1, params={"N": n},
            py4j=Expr(setup="f = gateway.jvm.java.util.Objects.hashCode\ns = text(N)",
                      check="assert f(s) == java_string_hash(s)",
                      op="f(s)"),
            jpype=Expr(setup='f = jpype.JClass("java.util.Objects").hashCode\ns = text(N)',
                       check="assert f(s) == java_string_hash(s)",
                       op="f(s)")))
    return rows


SCENARIOS = _table()
BY_ID = {s.id: s for s in SCENARIOS}
TIMED_IDS = [s.id for s in SCENARIOS]
FLOOR_IDS = (["M1", "M2a", "M2b", "M4"] + [f"LAT-{n}" for n in SIZES_LAT]
             + [f"X7-{k}" for k in SIZES_BYTES] + [f"X8-{k}" for k in SIZES_BYTES])

# Scenarios measured outside the rounds, with what they are.
EXTRA_IDS = {
    "BW": "MB/s (10^6 bytes) of X7 (recv) and X8 (send) at 1 KiB .. 64 MiB, from their rounds",
    "COLD-full": "fresh python process start -> first Java call returned",
    "COLD-handshake": "server already up: gateway creation + first call (socket backends)",
    "COLD-ratio": "first call / warm median of the same call, in the cold process",
    "FLOOR": "M1, M2a, M2b, M4, LAT, X7, X8 from C through JNI alone (perf/floor.c)",
    "MEM": "a million StringBuilder() created and dropped: RSS change (in-process backends)",
}

# Names --scenarios accepts besides the ids: each expands to these ids.
GROUPS = {
    "M": ["M1", "M1-bound", "M2a", "M2b", "M3", "M4"],
    "M2": ["M2a", "M2b"],
    "X1": [f"X1-{n}" for n in THREADS_X1],
    "X2": [f"X2-{k}" for k in SIZES_X2],
    "X3": [f"X3-{k}" for k in SIZES_X3],
    "X7": [f"X7-{k}" for k in SIZES_BYTES],
    "X8": [f"X8-{k}" for k in SIZES_BYTES],
    "LAT": [f"LAT-{n}" for n in SIZES_LAT],
    "ARR": ["ARR-1M-send", "ARR-1M-recv", "ARR-1M-recv-view"],
    "X9": ["X9-direct", "X9-copy"],
    "CB": ["CB-FN-100k", "CB-INT-100k", "CB-NATIVE-100k"],
    "COLD": ["COLD-full", "COLD-handshake", "COLD-ratio"],
}

ALL_NAMES = TIMED_IDS + list(EXTRA_IDS)


class NotApplicable(Exception):
    """Raised by scenario setup code: this backend cannot run the scenario (the message
    says why); shown as "n/a (<reason>)"."""


class FixturesUnavailable(Exception):
    """Raised by need_fixtures(): the Java test fixtures are not on the class path (the
    message says why: no javac, build failed, ...); shown as "failed (<reason>)"."""


def needs_fixtures(ids):
    """True when one of the scenario ids uses the Java test fixtures."""
    return any(BY_ID[sid].fixtures for sid in ids if sid in BY_ID)


def source(scenario, flavour):
    """Python source of a module-level function `_prepare()` for one scenario and one
    expression flavour ("py4j" or "jpype"). _prepare() runs setup and returns
    (run, between, stats, teardown, ops), where run(n) does n units of work."""
    e = scenario.expr(flavour)

    def body(code, depth):
        return textwrap.indent(code or "pass", " " * depth)

    return (
        "def _prepare():\n"
        f"{body(e.setup, 4)}\n"
        f"{body(e.check, 4)}\n"
        "    def _run(_n):\n"
        "        for _ in range(_n):\n"
        f"{body(e.op, 12)}\n"
        "    def _between():\n"
        f"{body(e.between, 8)}\n"
        "    def _stats():\n"
        f"        return {e.stats or 'None'}\n"
        "    def _teardown():\n"
        f"{body(e.teardown, 8)}\n"
        f"    return _run, _between, _stats, _teardown, {scenario.ops}\n"
    )
