"""Start-up cost: what ``import py4jni`` loads, and the class-data-sharing (AppCDS)
archive the first JVM start creates and later starts map (py4jni/_cds.py)."""
from __future__ import annotations

import subprocess
import sys

import pytest

# Modules that cost milliseconds to import and that neither `import py4jni` nor the
# first call needs (each is imported where it is used).
HEAVY = ["typing", "threading", "re", "collections", "decimal", "logging", "subprocess",
         "socket", "queue", "glob", "weakref", "enum", "functools", "pydoc", "types",
         "py4jni.java_collections", "py4jni.inproc_mode.callbacks", "py4jni.socket_mode.callbacks",
         "py4jni.socket_mode.transport", "py4jni.launcher"]


def _python(code: str, timeout: float = 120,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Runs ``code`` in a fresh interpreter (``env`` added to the environment) and
    checks that it exited 0."""
    import os
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=timeout, env={**os.environ, **(env or {})})
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def _loaded_by(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code`` that it did not
    hold before."""
    script = ("import sys; before = set(sys.modules)\n" + code +
              "\nprint(' '.join(sorted(set(sys.modules) - before)))")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return set(r.stdout.split())


def test_import_py4jni_leaves_heavy_modules_unloaded() -> None:
    loaded = _loaded_by("import py4jni")
    assert "py4jni.java_gateway" in loaded  # the check sees what the import loads
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_first_gateway_and_call_leave_heavy_modules_unloaded(tmp_path, monkeypatch) -> None:
    """What the first in-process gateway and call need is loaded (the collection
    wrappers); the switch, the callbacks module (no callback setting was given),
    weakref, the socket transport's callbacks, inspect and traceback wait for their
    first use."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the child's archive goes there
    loaded = _loaded_by("import py4jni\n"
                        "gw = py4jni.JavaGateway()\n"
                        "gw.jvm.java.lang.System.currentTimeMillis()")
    heavy = set(HEAVY) - {"py4jni.java_collections"}
    heavy |= {"inspect", "traceback", "importlib.abc", "py4jni._switch", "zlib", "operator",
              "resource"}
    assert "py4jni.java_collections" in loaded
    assert not loaded & heavy, sorted(loaded & heavy)


def test_names_loaded_on_first_use_are_the_modules_own() -> None:
    """launch_gateway and find_jar_path (py4jni, py4jni.java_gateway) and the socket
    transport load on first use and are then what their modules define."""
    out = _python("import py4jni, py4jni.java_gateway as g\n"
                  "from py4jni import launch_gateway, find_jar_path\n"
                  "import py4jni.launcher as l\n"
                  "assert launch_gateway is l.launch_gateway is g.launch_gateway\n"
                  "assert find_jar_path is l.find_jar_path is g.find_jar_path\n"
                  "from py4jni import _transports\n"
                  "t = _transports.for_mode('socket')\n"
                  "import py4jni.socket_mode.transport as s\n"
                  "print(type(t).__name__, t is _transports.TRANSPORTS['socket'],\n"
                  "      s.PINNED.mode, g.__getattr__('launch_gateway') is l.launch_gateway)\n")
    assert out.stdout.split() == ["SocketTransport", "True", "socket", "True"], out.stdout


def test_the_packages_helper_jar_is_stored_and_has_no_manifest() -> None:
    """The jar every start opens (the first class-path lookup reads it in interpreted JDK
    code): no entry deflated and no manifest, each of which costs that lookup time
    (docs/performance.md, Start-up), and the classes of the jar the build compiled."""
    import os
    import zipfile

    import py4jni
    with zipfile.ZipFile(py4jni.helper_jar_path()) as z:
        infos = z.infolist()
    names = {i.filename for i in infos}
    assert "org/py4jni/Bridge.class" in names
    assert not any(n.startswith("META-INF/") for n in names), sorted(names)
    assert {i.compress_type for i in infos} == {zipfile.ZIP_STORED}
    built = os.path.join(os.environ.get("P4J_BUILD", ""), "py4jni-helper.jar")
    if os.path.exists(built):  # the in-tree build's compiled jar, deflated
        with zipfile.ZipFile(built) as z:
            classes = {n for n in z.namelist() if n.endswith(".class")}
        assert classes == {n for n in names if n.endswith(".class")}


@pytest.mark.parametrize("soft_kib, xss", [(4096, "-Xss4096k"), (None, "-Xss16384k"),
                                           (65536, "-Xss16384k"), (512, "")])
def test_the_stack_limit_becomes_the_jvms_xss(soft_kib: int | None, xss: str) -> None:
    """The JVM gets -Xss of the process's soft stack limit (RLIMIT_STACK; unlimited counts
    as 16 MiB), at most 16 MiB, and none when that is not above the JDK's 1 MiB: the
    main thread's Java calls share its stack."""
    import os
    import resource
    hard = resource.getrlimit(resource.RLIMIT_STACK)[1]
    soft = resource.RLIM_INFINITY if soft_kib is None else soft_kib * 1024
    if hard != resource.RLIM_INFINITY and (soft == resource.RLIM_INFINITY or soft > hard):
        pytest.skip(f"the hard stack limit ({hard}) is below {soft}")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_STACK, (soft, hard))

    code = ("from py4jni import JavaGateway\n"
            "gw = JavaGateway(cds=False)\n"
            "bean = gw.jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()\n"
            "print(' '.join(a for a in bean.getInputArguments() if a.startswith('-Xss')))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ), preexec_fn=limit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == xss, r.stdout + r.stderr


def test_parts_left_out_of_start_up_work_when_first_used_on_a_java_thread(
        tmp_path, monkeypatch) -> None:
    """A default gateway imports neither py4jni.inproc_mode.callbacks nor weakref, nor resolves
    BigDecimal; each is made on first use from a callback on a Java thread: the
    traceback of a failing callback, the class cache of the collections
    (ListConverter), a Decimal argument (and its overload check)."""
    from conftest import fixtures_jar
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    code = (
        "import sys\n"
        "from decimal import Decimal\n"
        "from py4jni import JavaGateway, ListConverter, Py4JJavaError\n"
        f"gw = JavaGateway(classpath={fixtures_jar()!r})\n"
        "assert 'py4jni.inproc_mode.callbacks' not in sys.modules and 'weakref' not in sys.modules\n"
        "sizes = []\n"
        "class R:\n"
        "    def run(self):\n"
        "        made = ListConverter().convert([1, 2, 2], gw._gateway_client)\n"
        "        sizes.append(made.count(2))  # Collections.frequency, through the cache\n"
        "        sb = gw.jvm.java.lang.StringBuilder()\n"
        "        sizes.append(str(sb.append(Decimal('1.50'))))  # append(Object): a BigDecimal\n"
        "        raise ValueError('raised on a Java thread')\n"
        "    class Java:\n"
        "        implements = ['java.lang.Runnable']\n"
        "try:\n"
        "    gw.jvm.org.py4jni.fixtures.Callbacks.runOnThread(R())\n"
        "except Py4JJavaError as e:\n"
        "    text = str(e)\n"
        "assert sizes == [2, '1.50'], sizes\n"
        "assert 'ValueError: raised on a Java thread' in text, text\n"
        "assert 'py4jni.inproc_mode.callbacks' in sys.modules and 'weakref' in sys.modules\n"
        "print('ok')\n")
    assert "ok" in _python(code).stdout


def test_lazy_names_still_resolve() -> None:
    """py4j's names that are now made on first use are the same objects as before."""
    loaded = _loaded_by(
        "import collections, queue, threading\n"
        "import py4jni\n"
        "from py4jni import JavaList, ListConverter\n"
        "from py4jni.java_gateway import (deque, RLock, Thread, Queue, CompatThread,\n"
        "                                 OutputConsumer, ProcessConsumer)\n"
        "from py4jni.compat import Empty\n"
        "from py4jni import compat, java_collections, _py4jni\n"
        "assert deque is collections.deque and Queue is queue.Queue\n"
        "assert RLock is threading.RLock and Thread is threading.Thread\n"
        "assert Empty is queue.Empty and issubclass(CompatThread, Thread)\n"
        "assert compat.CompatThread is CompatThread\n"
        "assert issubclass(OutputConsumer, CompatThread)\n"
        "assert JavaList is java_collections.JavaList is py4jni.JavaList\n"
        "assert issubclass(JavaList, _py4jni.JavaObject)\n")
    assert "py4jni.java_collections" in loaded


# ---- the class-data-sharing archive (py4jni/_cds.py) -------------------------------

TEMURIN_25 = "/usr/lib/jvm/temurin-25-jdk-amd64/lib/server/libjvm.so"
JDK_17 = "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"
FIRST_CALL = ("from py4jni import JavaGateway\n"
              "gw = JavaGateway({args})\n"
              "assert gw.jvm.java.lang.Math.max(3, 4) == 4\n"
              "print('called')\n")


def _run(cache: str, args: str = "", env: dict[str, str] | None = None,
         log: str | None = None) -> subprocess.CompletedProcess[str]:
    """A fresh process that starts a gateway (``JavaGateway(args)``, plus a class-load
    log to ``log``) and makes one call, with ``cache`` as XDG_CACHE_HOME."""
    import os
    if log:
        args = f"jvm_options=['-Xlog:class+load:file={log}']" + (", " + args if args else "")
    r = subprocess.run([sys.executable, "-c", FIRST_CALL.format(args=args)],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "XDG_CACHE_HOME": cache, **(env or {})})
    assert r.returncode == 0 and "called" in r.stdout, r.stdout + r.stderr
    return r


def _archive(cache: str, libjvm: str | None = None, wait: float = 120.0) -> str:
    """The archive _cds made for this JVM in ``cache`` (waits for the background
    creator up to ``wait`` seconds)."""
    import os
    import time

    from py4jni import _cds, _py4jni, helper_jar_path
    key = _cds.archive_key(helper_jar_path(), _py4jni.find_libjvm(libjvm))
    directory = os.path.join(cache, "py4jni")
    deadline = time.monotonic() + wait
    while True:
        found = _cds.find_archive(directory, key)
        if found or time.monotonic() > deadline:
            assert found, f"no archive in {directory}: {os.listdir(directory)}"
            return found
        time.sleep(0.2)


def _bridge_source(log: str) -> str:
    """Where the class-load log says org.py4jni.Bridge came from."""
    with open(log) as f:
        line = next(line for line in f if " org.py4jni.Bridge source: " in line)
    return line.split(" source: ", 1)[1].strip()


def test_first_start_creates_the_archive_later_starts_map_it(tmp_path) -> None:
    cache, log = str(tmp_path), str(tmp_path / "classes.log")
    _run(cache, log=log)
    assert _bridge_source(log).endswith("py4jni-helper.jar")  # no archive yet
    _archive(cache)
    r = _run(cache, log=log)
    # a dynamic archive on top of the JDK's ("(top)"); JDK 25+: an AOT cache
    assert _bridge_source(log) in ("shared objects file (top)", "shared objects file")
    assert "cds" not in (r.stdout + r.stderr).lower()


def test_opt_out_by_environment_and_keyword(tmp_path) -> None:
    import os
    cache, log = str(tmp_path), str(tmp_path / "classes.log")
    _run(cache, env={"PY4JNI_CDS": "0"})
    _run(cache, args="cds=False")
    assert not os.path.exists(tmp_path / "py4jni")  # no creator was started
    _run(cache)
    _archive(cache)
    _run(cache, env={"PY4JNI_CDS": "0"}, log=log)
    assert _bridge_source(log).endswith("py4jni-helper.jar")
    _run(cache, args="cds=False", log=log)
    assert _bridge_source(log).endswith("py4jni-helper.jar")


def test_users_own_cds_options_are_left_alone_and_later_gateways_join() -> None:
    code = ("from py4jni import _cds, helper_jar_path\n"
            "assert _cds.options_for_start(helper_jar_path(), None,\n"
            "                              ['-XX:SharedArchiveFile=/nowhere.jsa'], True,\n"
            "                              False) == []\n"
            "assert _cds.options_for_start(helper_jar_path(), None, ['-Xmx64m'], True,\n"
            "                              False) == []  # decided once per process\n")
    _python(code, timeout=60)


def test_later_gateways_join_a_jvm_started_with_the_archive(tmp_path) -> None:
    cache = str(tmp_path)
    _run(cache)
    _archive(cache)
    _run(cache, args="jvm_options=['-Xmx256m'])\n"
                     "gw2 = JavaGateway()\n"
                     "gw3 = JavaGateway(jvm_options=['-Xmx256m']")


def _replace_archive(path: str, data: bytes, honest_name: bool) -> str:
    """Puts ``data`` where ``path`` was, named for its own size and CRC when
    ``honest_name`` (so only HotSpot can reject it), else under the old name."""
    import os
    import zlib
    os.unlink(path)
    if honest_name:
        key_part = os.path.basename(path).split(".")[0]
        path = os.path.join(os.path.dirname(path),
                            f"{key_part}.{len(data)}.{zlib.crc32(data):08x}"
                            f"{os.path.splitext(path)[1]}")
    with open(path, "wb") as f:
        f.write(data)
    return path


def test_corrupt_or_truncated_archive_is_ignored(tmp_path) -> None:
    import os
    cache, log = str(tmp_path), str(tmp_path / "classes.log")
    _run(cache)
    good = _archive(cache)
    with open(good, "rb") as f:
        data = f.read()
    # Truncated under its name (HotSpot 17 would crash mapping it): removed, remade.
    truncated = _replace_archive(good, data[: len(data) // 3], honest_name=False)
    r = _run(cache, log=log)
    assert not os.path.exists(truncated)
    assert _bridge_source(log).endswith("py4jni-helper.jar")
    # Garbage under a matching name: HotSpot rejects it, silently.
    garbage = _replace_archive(_archive(cache), os.urandom(len(data)), honest_name=True)
    r = _run(cache, log=log)
    assert _bridge_source(log).endswith("py4jni-helper.jar")
    assert "cds" not in (r.stdout + r.stderr).lower() and "warning" not in r.stderr.lower()
    assert os.path.exists(garbage)


def test_archive_of_another_jdk_is_ignored(tmp_path) -> None:
    """The running JDK's archive under the name py4jni gives another JDK's (Temurin 25
    when the default is JDK 17, JDK 17 when it is Temurin 25): HotSpot rejects it
    (another JVM build), silently, and the gateway works."""
    import os
    import shutil

    import pytest

    from py4jni import _cds, _py4jni, helper_jar_path
    ours_jvm = os.path.realpath(_py4jni.find_libjvm(None))
    other = next((j for j in (TEMURIN_25, JDK_17)
                  if os.path.exists(j) and os.path.realpath(j) != ours_jvm), None)
    if other is None:
        pytest.skip(f"no JDK other than {ours_jvm} among {TEMURIN_25}, {JDK_17}")
    cache = str(tmp_path)
    _run(cache)
    ours = _archive(cache)
    key = _cds.archive_key(helper_jar_path(), other)
    shutil.copy(ours, os.path.join(cache, "py4jni", os.path.basename(ours).replace(
        os.path.basename(ours).split(".")[0], f"py4jni-{key}")))
    assert _archive(cache, other, wait=0)
    r = _run(cache, args=f"libjvm={other!r}")
    assert "cds" not in (r.stdout + r.stderr).lower()


# ---- the start-up warm-up thread (java/org/py4jni/StartWarmup.java) ------------------

def test_start_warmup_runs_beside_the_first_call_and_can_be_turned_off(tmp_path) -> None:
    """The daemon thread starts with the JVM (its class loads), the first calls work
    while it runs, and PY4JNI_START_WARMUP=0 leaves it out."""
    import os
    cache, log = str(tmp_path), str(tmp_path / "classes.log")
    calls = ("jvm_options=['-Xlog:class+load:file=" + log + "'])\n"
             "assert gw.jvm.java.util.ArrayList().size() == 0\n"
             "assert gw.jvm.java.lang.String.valueOf(12) == '12'\n"
             "assert isinstance(gw.jvm.no.such.Name, type(gw.jvm.java))\n"
             # the thread runs beside the calls: under load it may load its class only
             # after them, so the child waits for that (bounded) unless it is turned off
             "import os, time\n"
             "end = time.monotonic() + 60\n"
             "while os.environ.get('PY4JNI_START_WARMUP') != '0' and "
             "' org.py4jni.StartWarmup ' not in open(" + repr(log) + ").read() and "
             "time.monotonic() < end: time.sleep(0.02)\n"
             "gw2 = JavaGateway(")
    _run(cache, args=calls)
    with open(log) as f:
        loaded = f.read()
    assert " org.py4jni.StartWarmup " in loaded
    os.unlink(log)
    _run(cache, args=calls, env={"PY4JNI_START_WARMUP": "0"})
    with open(log) as f:
        assert " org.py4jni.StartWarmup " not in f.read()


def test_start_warmup_is_clean_under_check_jni(tmp_path) -> None:
    """-Xcheck:jni reports nothing about the start-up path (warm-up included)."""
    r = _run(str(tmp_path), args="check_jni=True")
    assert "WARNING" not in r.stderr and "FATAL" not in r.stderr, r.stderr


def test_start_up_and_first_call_leave_big_decimal_uninitialised(tmp_path) -> None:
    """BigDecimal's static initialiser (~1 ms) waits for the first Decimal argument."""
    log = tmp_path / "init.log"
    _run(str(tmp_path), args=f"jvm_options=['-Xlog:class+init=info:file={log}']")
    text = log.read_text()
    assert "'org/py4jni/Bridge'" in text  # the log covers py4jni's start-up
    assert "java/math/BigDecimal" not in text


def test_archive_key_is_the_same_in_every_process() -> None:
    """The key names a file shared by processes: it may not depend on Python's
    per-process hash randomisation (PYTHONHASHSEED), only on the JVM and the jar."""
    code = ("from py4jni import _cds, _py4jni, helper_jar_path\n"
            "print(_cds.archive_key(helper_jar_path(), _py4jni.find_libjvm(None)))\n")
    keys = {_python(code, 60, {"PYTHONHASHSEED": seed}).stdout.strip()
            for seed in ("1", "2", "random")}
    assert len(keys) == 1 and len(keys.pop()) == 16


def test_a_jdk_25_start_uses_an_aot_cache(tmp_path) -> None:
    """From JDK 25 the archive is an AOT cache (-XX:AOTCacheOutput, then -XX:AOTCache):
    py4jni's classes come from it already loaded; a garbage cache under its name is
    dropped silently."""
    import os

    import pytest
    if not os.path.exists(TEMURIN_25):
        pytest.skip(f"no JDK 25 at {TEMURIN_25}")
    cache, log = str(tmp_path), str(tmp_path / "classes.log")
    args = f"libjvm={TEMURIN_25!r}"
    _run(cache, args=args)
    path = _archive(cache, TEMURIN_25)
    assert path.endswith(".aot")
    r = _run(cache, args=args, log=log)
    assert _bridge_source(log) == "shared objects file"
    assert "aot" not in (r.stdout + r.stderr).lower()
    with open(path, "rb") as f:
        size = len(f.read())
    _replace_archive(path, os.urandom(size), honest_name=True)
    r = _run(cache, args=args, log=log)
    assert _bridge_source(log).endswith("py4jni-helper.jar")
    assert "aot" not in (r.stdout + r.stderr).lower() and "error" not in r.stderr.lower()


# ---- the class-path archive (cds="classpath", py4jni/_cds.py) -----------------------

CP_CALL = ("from py4jni import JavaGateway\n"
           "gw = JavaGateway(classpath={jar!r}, cds='classpath', libjvm={libjvm!r},\n"
           "                 jvm_options=['-Xlog:class+load:file={log}'])\n"
           "assert gw.jvm.org.py4jni.fixtures.Strings is not None\n"
           "print('called')\n")


def _cp_run(cache: str, jar: str, log: str, libjvm: str | None) -> str:
    """A fresh process whose gateway, on class path ``jar`` with ``cds="classpath"``,
    loads a class of it; returns where the class-load log says it came from."""
    import os
    r = subprocess.run([sys.executable, "-c", CP_CALL.format(jar=jar, log=log, libjvm=libjvm)],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "XDG_CACHE_HOME": cache})
    assert r.returncode == 0 and "called" in r.stdout, r.stdout + r.stderr
    assert "cds" not in (r.stdout + r.stderr).lower() and "warning" not in r.stderr.lower()
    with open(log) as f:
        line = next(ln for ln in f if " org.py4jni.fixtures.Strings source: " in ln)
    return line.split(" source: ", 1)[1].strip()


def _cp_archives(cache: str, wait: float = 300.0) -> list[str]:
    """The class-path archives in ``cache`` once no creator holds a lock (waits up to
    ``wait`` seconds for the background dumps)."""
    import os
    import time
    directory = os.path.join(cache, "py4jni")
    deadline = time.monotonic() + wait
    while any(n.endswith(".lock") for n in os.listdir(directory)) and \
            time.monotonic() < deadline:
        time.sleep(0.2)
    names = os.listdir(directory)
    assert not any(n.endswith(".failed") for n in names), names
    return sorted(os.path.join(directory, n) for n in names
                  if n.startswith("py4jni-cp-") and n.endswith(".jsa"))


def _jdks() -> list[str | None]:
    import os
    return [None] + [j for j in (TEMURIN_25,) if os.path.exists(j)]



@pytest.mark.parametrize("libjvm", _jdks(), ids=lambda j: "default" if j is None else "jdk25")
def test_classpath_archive_is_made_reused_and_keyed_by_the_class_path(tmp_path, libjvm) -> None:
    """The first start records the classes it loads; when it exits a background dump
    makes the archive; later starts map the class path's classes from it; a changed jar
    (its mtime) makes another key: recorded again, a second archive."""
    import os
    import shutil
    cache, log = str(tmp_path), str(tmp_path / "classes.log")
    jar = str(tmp_path / "app.jar")
    shutil.copy(os.environ.get("P4J_FIXTURES_JAR") or "build/tests/py4jni-test-fixtures.jar",
                jar)
    assert _cp_run(cache, jar, log, libjvm) == f"file:{jar}"  # recording run
    (first,) = _cp_archives(cache)
    assert not any(n.endswith(".classlist") for n in os.listdir(tmp_path / "py4jni"))
    assert _cp_run(cache, jar, log, libjvm) == "shared objects file"
    with open(log) as f:
        assert " java.lang.Object source: shared objects file" in f.read()
    st = os.stat(jar)
    os.utime(jar, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert _cp_run(cache, jar, log, libjvm) == f"file:{jar}"
    archives = _cp_archives(cache)
    assert first in archives and len(archives) == 2
    assert _cp_run(cache, jar, log, libjvm) == "shared objects file"


def test_damaged_classpath_archive_is_dropped(tmp_path) -> None:
    """A truncated archive is deleted (and made again); garbage under an honest name is
    rejected by HotSpot, silently, and the gateway works with the jar's classes."""
    import os
    import shutil
    cache, log = str(tmp_path), str(tmp_path / "classes.log")
    jar = str(tmp_path / "app.jar")
    shutil.copy(os.environ.get("P4J_FIXTURES_JAR") or "build/tests/py4jni-test-fixtures.jar",
                jar)
    # a list left by a recording process that was killed is removed by the next one
    from py4jni import _cds, _py4jni, helper_jar_path
    key = _cds.classpath_key(helper_jar_path(), _py4jni.find_libjvm(None),
                             f"{helper_jar_path()}{os.pathsep}{jar}", [])
    dead = subprocess.Popen(["true"])
    dead.wait()
    os.makedirs(tmp_path / "py4jni")
    orphan = tmp_path / "py4jni" / f"py4jni-{key}.{dead.pid}.classlist"
    orphan.write_text("java/lang/Object\n")
    _cp_run(cache, jar, log, None)
    assert not orphan.exists()
    (good,) = _cp_archives(cache)
    with open(good, "rb") as f:
        data = f.read()
    truncated = _replace_archive(good, data[: len(data) // 3], honest_name=False)
    assert _cp_run(cache, jar, log, None) == f"file:{jar}"
    assert not os.path.exists(truncated)
    (remade,) = _cp_archives(cache)
    garbage = _replace_archive(remade, os.urandom(len(data)), honest_name=True)
    assert _cp_run(cache, jar, log, None) == f"file:{jar}"
    assert os.path.exists(garbage)


def test_classpath_recording_of_a_jvm_that_did_not_start_leaves_nothing(tmp_path) -> None:
    """A start that fails (the JVM's own error) records nothing: no creator runs, no
    list, lock or ``.failed`` is left, so a later good start records and dumps."""
    import os
    jar = os.environ.get("P4J_FIXTURES_JAR") or "build/tests/py4jni-test-fixtures.jar"
    code = ("from py4jni import JavaGateway, Py4JError\n"
            "try:\n"
            f"    JavaGateway(classpath={jar!r}, cds='classpath', jvm_options=['-Xmx1k'])\n"
            "except Py4JError:\n"
            "    print('refused')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert "refused" in r.stdout, r.stdout + r.stderr
    left = os.listdir(tmp_path / "py4jni")
    assert not [n for n in left if n.startswith("py4jni-cp-")], left


def test_a_jdk_25_start_with_module_options_keeps_the_jdks_archive(tmp_path) -> None:
    """HotSpot 25 refuses an AOT cache made without the start's module options and then
    maps no archive at all: with module options py4jni passes none of its own, and the
    JDK's archive serves the JDK's classes."""
    import os
    if not os.path.exists(TEMURIN_25):
        pytest.skip(f"no JDK 25 at {TEMURIN_25}")
    cache, log = str(tmp_path), str(tmp_path / "classes.log")
    opts = "['--add-opens=java.base/java.nio=ALL-UNNAMED', '-Xlog:class+load:file=" + log + "']"
    _run(cache, args=f"libjvm={TEMURIN_25!r}")
    _archive(cache, TEMURIN_25)  # py4jni's AOT cache exists
    _run(cache, args=f"libjvm={TEMURIN_25!r}, jvm_options={opts}")
    with open(log) as f:
        assert " java.lang.Object source: shared objects file" in f.read()


@pytest.mark.parametrize("warmup", ["1", "0"])
def test_input_arguments_hold_only_real_options(warmup: str) -> None:
    """RuntimeMXBean.getInputArguments() is what a program passes to a JVM it starts
    like itself: the JNI hook options py4jni gives JNI_CreateJavaVM ("vfprintf",
    "abort", "exit") are taken out of it by the warm-up thread (also when
    PY4JNI_START_WARMUP=0 leaves the warm-up's own work out), the real options stay.
    The deadline only bounds a hang: the list is cleaned a few tens of milliseconds
    after the start."""
    code = """
import time
from py4jni import JavaGateway
gw = JavaGateway(jvm_options=["-Xss2m"], cds=False)
bean = gw.jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
deadline = time.monotonic() + 60
while "vfprintf" in list(bean.getInputArguments()) and time.monotonic() < deadline:
    time.sleep(0.05)
print(" ".join(bean.getInputArguments()))
"""
    r = _python(code, env={"PY4JNI_START_WARMUP": warmup})
    args = r.stdout.split()
    assert not {"vfprintf", "abort", "exit"} & set(args), args
    assert "-Xrs" in args and "-Xss2m" in args, args
