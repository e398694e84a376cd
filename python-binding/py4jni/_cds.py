"""Class-data sharing (AppCDS) for the embedded JVM: py4jni's helper classes, and the
JDK classes its first calls load, mapped from an archive instead of parsed and verified.

The archive is made once per JVM build and helper jar, in the background, by a plain
``java -XX:ArchiveClassesAtExit=... org.py4jni.CdsWarmup`` (an embedded JVM never exits
through DestroyJavaVM, so neither ``ArchiveClassesAtExit`` nor JDK 19's
``-XX:+AutoCreateSharedArchive`` would ever write it in-process). From JDK 25 the same
run writes an AOT cache instead (``-XX:AOTCacheOutput``, JEP 483/514): its classes are
loaded and linked while the JVM starts, which spares py4jni's first class its ~4 ms of
protection-domain and package set-up. The first start without an archive spawns that
process and does not wait; later starts map the archive. The archive lives in
``$XDG_CACHE_HOME/py4jni`` (else ``~/.cache/py4jni``), named
``py4jni-<key>.<size>.<crc32>.jsa`` (``.aot`` for an AOT cache): the key hashes libjvm (path, size, mtime), the JDK's
base archive and ``release`` file, and the helper jar (path, size, mtime: what HotSpot
itself checks a dynamic archive's jars by). A start reads neither the archive nor the jar:
it checks the archive's size against its name (HotSpot 17 crashes on a truncated
archive); the creator writes under a temporary name and renames the finished file to
its final name (with its CRC, for checking by hand), so a final name never holds a
partial file; HotSpot rejects other mismatches itself (its CDS warnings are off).
Off with ``PY4JNI_CDS=0``, ``JavaGateway(cds=False)``, or when the user's options
already choose CDS (``-Xshare:``, ``-XX:SharedArchiveFile``...).

With ``cds="classpath"`` (``JavaGateway(classpath=..., cds="classpath")``; a framework
such as ``py4jni.pyspark`` asks for it) the archive holds the application's classes too:
the JDK's and the class path's, as the application loads them. A start without one
records them (``-XX:DumpLoadedClassList``); when that process exits, a detached
``python _cds.py create-classpath ...`` runs ``java -Xshare:dump`` on the same class
path and options with that list (JDK 24+: ``-XX:+AOTClassLinking``), writing a static
archive ``py4jni-cp-<key>.<size>.<crc32>.jsa``; later starts map it with
``-XX:SharedArchiveFile`` in place of the JDK's own. Its key (``classpath_key``) adds
every class path entry's path, size and mtime and the options that shape class loading.

Run as a script (``python _cds.py create ...`` / ``create-classpath ...``), this file
creates an archive.
"""
from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing's constant without importing typing
if TYPE_CHECKING:
    from typing import Callable, Sequence

# Dynamic archives (ArchiveClassesAtExit) exist from JDK 13.
MIN_JAVA = 13
# The options that, given by the user, leave CDS to them.
USER_CDS_PREFIXES = ("-Xshare:", "-XX:SharedArchiveFile", "-XX:ArchiveClassesAtExit",
                     "-XX:+AutoCreateSharedArchive", "-XX:SharedClassListFile",
                     "-XX:DumpLoadedClassList", "-XX:AOTCache", "-XX:AOTMode")
QUIET = ("-Xshare:auto", "-Xlog:cds=off", "-Xlog:cds+dynamic=off")
# From this JDK on, an AOT cache (-XX:AOTCacheOutput in one run) instead of a dynamic
# archive; -XX:AOTCache cannot be combined with -Xshare, and an unusable cache is
# dropped with messages on the [aot] and [cds] tag sets.
AOT_JAVA = 25
QUIET_AOT = ("-Xlog:aot*=off", "-Xlog:cds*=off")
# Options that change the module graph: an AOT cache made without them is refused.
MODULE_OPTIONS = ("--add-opens", "--add-exports", "--add-modules", "--add-reads",
                  "--limit-modules", "--patch-module", "--upgrade-module-path",
                  "--module-path", "-Djdk.module.")
LOCK_STALE_S = 120.0  # a lock older than this belongs to a creator that died
CLASSPATH_LOCK_STALE_S = 1800.0  # the same for a class-path archive (a longer dump)

_chosen: list[str] | None = None  # the options this process's first start used

# cds= value asking for an archive of the application's class path as well.
CLASSPATH = "classpath"
# Options that neither change which classes load nor how HotSpot may map an archive of
# them: left out of a class-path archive's key and of the run that dumps it.
NOT_IN_KEY = ("-D", "-Xlog", "-Xmx", "-Xms", "-Xss", "-verbose", "-agentlib:", "-agentpath:",
              "-javaagent:", "-XX:DumpLoadedClassList")
# From this JDK on a static archive also stores its classes linked (-XX:+AOTClassLinking,
# JEP 483: what an AOT cache holds, less the method profiles of a training run).
AOT_LINKING_JAVA = 24


def options_for_start(helper_jar: str, libjvm: str | None, user_options: Sequence[str],
                      enabled: bool | str, joins_by_default: bool,
                      classpath: str | None = None) -> list[str]:
    """The CDS options to put before ``user_options`` for this gateway's JVM start.
    ``enabled`` is False (none), True (py4jni's own classes) or CLASSPATH (the classes
    this application loads from ``classpath`` and the JDK too: see
    ``_classpath_options``).

    Decided once per process (a process holds one JVM): a later gateway gets the same
    options, or none when it asks for the default JVM (``joins_by_default``), so that
    it joins the running JVM as before (jni/jvm.c compares the options)."""
    global _chosen
    if _chosen is not None:
        return [] if joins_by_default else list(_chosen)
    _chosen = []
    if enabled and os.environ.get("PY4JNI_CDS", "1") != "0" and not any(
            o.startswith(USER_CDS_PREFIXES) for o in user_options):
        try:
            if enabled == CLASSPATH and classpath:
                _chosen = _classpath_options(helper_jar, libjvm, classpath, user_options)
            else:
                _chosen = _archive_options(helper_jar, libjvm, user_options)
        except OSError:  # an unreadable JDK or cache directory: start without CDS
            _chosen = []
    return list(_chosen)


def cache_dir() -> str:
    """Where archives are kept: $XDG_CACHE_HOME/py4jni, else ~/.cache/py4jni."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                             ".cache")
    return os.path.join(base, "py4jni")


def java_home(libjvm: str) -> str:
    """The JDK (or JRE) home of ``<home>/lib/server/libjvm.so``."""
    return os.path.dirname(os.path.dirname(os.path.dirname(libjvm)))


def release_text(home: str) -> bytes:
    """The ``release`` file of the JDK at ``home`` (b"" when unreadable)."""
    try:
        with open(os.path.join(home, "release"), "rb") as f:
            return f.read()
    except OSError:
        return b""


def java_version(home: str, release: bytes | None = None) -> int:
    """The feature version of the JDK at ``home`` from its ``release`` file (0: unknown)."""
    text = (release_text(home) if release is None else release).decode("utf-8", "replace")
    for line in text.splitlines():
        if line.startswith("JAVA_VERSION="):
            try:
                v = line.split("=", 1)[1].strip().strip('"')
                first = v.split(".")[0]
                return int(v.split(".")[1]) if first == "1" else int(first)
            except (ValueError, IndexError):
                return 0
    return 0


def _digest(data: bytes) -> int:
    """A 61-bit digest of ``data``: Python's hash of an int (the value modulo the
    Mersenne prime 2**61 - 1, not randomised per process as str hashes are). zlib and
    hashlib would cost a shared library load at every start."""
    return hash(int.from_bytes(b"\x01" + data, "little"))


def archive_key(helper_jar: str, libjvm: str, release: bytes | None = None) -> str:
    """16 hex digits naming the archive of this JVM build (libjvm, the JDK's base archive
    beside it, which HotSpot checks a dynamic archive against, the ``release`` file) and
    helper jar (path, size and mtime, which HotSpot checks too)."""
    if release is None:
        release = release_text(java_home(libjvm))
    ident = [os.path.realpath(libjvm), helper_jar]
    for path in (libjvm, os.path.join(os.path.dirname(libjvm), "classes.jsa"), helper_jar):
        try:
            st = os.stat(path)
            ident.append(f"{st.st_size}:{st.st_mtime_ns}")
        except FileNotFoundError:
            ident.append("-")
    return "%016x" % _digest("|".join(ident).encode() + release)


def find_archive(directory: str, key: str, ext: str | None = None) -> str | None:
    """The path of the archive for ``key`` in ``directory`` (of extension ``ext``,
    ".jsa" or ".aot"; None: either), or None. An archive whose size differs from its
    name is removed (it is then made again)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    prefix = f"py4jni-{key}."
    suffixes = (ext,) if ext else (".jsa", ".aot")
    for name in names:
        if not (name.startswith(prefix) and name.endswith(suffixes)):
            continue
        path = os.path.join(directory, name)
        try:
            size_text = name[len(prefix):].split(".")[0]
            if os.stat(path).st_size == int(size_text):
                return path
        except (OSError, ValueError):
            pass
        try:
            os.unlink(path)
        except OSError:
            pass
    return None


def _archive_options(helper_jar: str, libjvm: str | None,
                     user_options: Sequence[str] = ()) -> list[str]:
    """``-XX:SharedArchiveFile=...`` and the options silencing CDS when the archive is
    there; otherwise starts its creation in the background and returns []. On an AOT
    JDK with module options among ``user_options``: [] (the JDK's own archive), since
    HotSpot then rejects the AOT cache, made without them, and maps no archive at all."""
    from . import _py4jni  # deferred: the extension loads when a JVM is to start
    try:
        found = _py4jni.find_libjvm(libjvm)
    except (FileNotFoundError, OSError):
        return []  # the JVM start reports it
    home = java_home(found)
    java = os.path.join(home, "bin", "java")
    release = release_text(home)
    version = java_version(home, release)
    if version < MIN_JAVA or not os.access(java, os.X_OK):
        return []
    kind = "aot" if version >= AOT_JAVA else "jsa"
    if kind == "aot" and any(o.startswith(MODULE_OPTIONS) for o in user_options):
        return []
    key = archive_key(helper_jar, found, release)
    directory = cache_dir()
    path = find_archive(directory, key, "." + kind)
    if path:
        return ([f"-XX:AOTCache={path}", *QUIET_AOT] if kind == "aot"
                else [f"-XX:SharedArchiveFile={path}", *QUIET])
    _spawn_creator(directory, key, java, helper_jar, kind)
    return []


def classpath_key(helper_jar: str, libjvm: str, classpath: str, options: Sequence[str],
                  release: bytes | None = None) -> str:
    """``cp-`` and 16 hex digits naming the class-path archive of this JVM build (as
    ``archive_key``), class path (every entry's path, size and mtime: a rebuilt jar makes
    a new key) and the options that shape class loading (module options, GC...; not
    ``NOT_IN_KEY``)."""
    ident = [archive_key(helper_jar, libjvm, release)]
    for entry in classpath.split(os.pathsep):
        try:
            st = os.stat(entry)
            ident.append(f"{entry}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            ident.append(f"{entry}:-")
    ident += [o for o in options if not o.startswith(NOT_IN_KEY)]
    return "cp-%016x" % _digest("\0".join(ident).encode())


def _classpath_options(helper_jar: str, libjvm: str | None, classpath: str,
                       user_options: Sequence[str]) -> list[str]:
    """The options of a start with the class-path archive: ``-XX:SharedArchiveFile`` of
    a static archive of the JDK's and the class path's classes this application loaded
    before, when it exists. Otherwise this start records its classes
    (``-XX:DumpLoadedClassList``), and when the process exits a background
    ``java -Xshare:dump`` makes the archive from that list (JDK 24+: with
    ``-XX:+AOTClassLinking``, classes stored linked), for later starts."""
    from . import _py4jni  # deferred: the extension loads when a JVM is to start
    try:
        found = _py4jni.find_libjvm(libjvm)
    except (FileNotFoundError, OSError):
        return []
    home = java_home(found)
    java = os.path.join(home, "bin", "java")
    release = release_text(home)
    version = java_version(home, release)
    if version < MIN_JAVA or not os.access(java, os.X_OK):
        return []
    full_cp = f"{helper_jar}{os.pathsep}{classpath}"  # jni/jvm.c's -Djava.class.path
    key = classpath_key(helper_jar, found, full_cp, user_options, release)
    directory = cache_dir()
    path = find_archive(directory, key, ".jsa")
    if path:
        quiet = QUIET_AOT if version >= AOT_JAVA else ()
        return [f"-XX:SharedArchiveFile={path}", *QUIET, *quiet]
    os.makedirs(directory, exist_ok=True)
    base = os.path.join(directory, f"py4jni-{key}")
    if os.path.exists(base + ".failed") or not sys.executable:
        return []
    _drop_orphan_lists(directory, key)
    classlist = f"{base}.{os.getpid()}.classlist"
    dump = [o for o in user_options if not o.startswith(NOT_IN_KEY)]
    if version >= AOT_LINKING_JAVA:
        dump.append("-XX:+AOTClassLinking")
    import atexit
    atexit.register(_spawn_classpath_creator, base, java, classlist, full_cp, dump)
    return [f"-XX:DumpLoadedClassList={classlist}"]


def _drop_orphan_lists(directory: str, key: str) -> None:
    """Removes the class lists of ``key`` left by recording processes that ended
    without handing them to a creator (killed, ``os._exit``)."""
    prefix = f"py4jni-{key}."
    for name in os.listdir(directory):
        if not (name.startswith(prefix) and name.endswith(".classlist")):
            continue
        try:
            os.kill(int(name[len(prefix):].split(".")[0]), 0)
        except ProcessLookupError:
            _unlink(os.path.join(directory, name))
        except (ValueError, OSError):
            pass


def _spawn_classpath_creator(base: str, java: str, classlist: str, classpath: str,
                             options: Sequence[str]) -> None:
    """At exit of the recording process: starts ``python _cds.py create-classpath``
    detached, unless another creator holds the lock or nothing was recorded (e.g. the
    JVM did not start); then the list is dropped."""
    try:
        recorded = os.path.getsize(classlist) > 0
    except OSError:
        recorded = False
    if not recorded or not os.path.exists("/bin/sh") or \
            not _take_lock(base, CLASSPATH_LOCK_STALE_S):
        _unlink(classlist)
        return
    argv = [sys.executable, "-I", os.path.abspath(__file__), "create-classpath", base, java,
            classlist, classpath, *options]
    _detach(argv, base + ".lock")


def create_classpath(base: str, java: str, classlist: str, classpath: str,
                     *options: str) -> int:
    """Makes ``<base>.<size>.<crc32>.jsa``, a static archive of the classes named in
    ``classlist`` (``java -Xshare:dump`` on ``classpath`` with ``options``); on failure
    leaves ``<base>.failed`` (with java's output). Removes the list and ``<base>.lock``."""
    os.nice(10)  # a background job: the foreground's sessions go first
    tmp = f"{base}.{os.getpid()}.tmp"

    def whole_lines() -> None:  # a JVM ended mid-line leaves a partial line
        with open(classlist, "rb+") as f:
            data = f.read()
            if data and not data.endswith(b"\n"):
                f.truncate(data.rfind(b"\n") + 1)
    return _write_archive(base, tmp, ".jsa",
                          [java, "-Xshare:dump", f"-XX:SharedClassListFile={classlist}",
                           f"-XX:SharedArchiveFile={tmp}", "-cp", classpath, *options],
                          1800, (classlist,), whole_lines)


def _write_archive(base: str, tmp: str, ext: str, command: Sequence[str], timeout: float,
                   leftovers: Sequence[str] = (), prepare: Callable[[], None] | None = None
                   ) -> int:
    """An archive writer's run: ``prepare()``, then ``command`` (a java writing its
    archive to ``tmp``); the file is renamed ``<base>.<size>.<crc32><ext>`` when java
    succeeded and wrote something. Otherwise (or when ``prepare``, java or a file
    operation fails) leaves ``<base>.failed`` with the reason and java's output, so that
    later starts do not try again. In every case removes ``tmp``, ``leftovers`` and
    ``<base>.lock``. Returns 0 when the archive was made, else 1."""
    import subprocess
    import zlib
    try:
        if prepare is not None:
            prepare()
        r = subprocess.run(list(command), stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=timeout)
        crc = size = 0
        with open(tmp, "rb") as f:
            while chunk := f.read(1 << 22):
                crc = zlib.crc32(chunk, crc)
                size += len(chunk)
        if r.returncode != 0 or not size:
            raise OSError(f"java exited with {r.returncode}: {r.stdout[-4000:]!r} "
                          f"{r.stderr[-4000:]!r}")
        os.replace(tmp, f"{base}.{size}.{crc:08x}{ext}")
        return 0
    except (OSError, subprocess.SubprocessError) as exc:
        with open(base + ".failed", "w") as f:
            f.write(f"{exc}\n")
        return 1
    finally:
        for leftover in (tmp, *leftovers, base + ".lock"):
            _unlink(leftover)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _take_lock(base: str, stale_s: float) -> bool:
    """Creates ``<base>.lock`` (one creator per archive); False when another process
    holds it (a lock older than ``stale_s`` is taken over) or it cannot be made."""
    lock = base + ".lock"
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        try:
            if os.stat(lock).st_mtime > _now() - stale_s:
                return False
            os.unlink(lock)
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except OSError:
            return False
    except OSError:
        return False
    os.close(fd)
    return True


def _detach(argv: list[str], lock: str) -> None:
    """Runs ``argv`` in the background through ``sh -c '... &'`` (no child of ours is
    left to reap); removes ``lock`` when it cannot start."""
    script = 'exec "$@" </dev/null >/dev/null 2>&1 &'
    try:
        pid = os.posix_spawn("/bin/sh", ["sh", "-c", script, "sh", *argv], os.environ)
        os.waitpid(pid, 0)
    except OSError:
        _unlink(lock)


def _spawn_creator(directory: str, key: str, java: str, helper_jar: str,
                   kind: str = "jsa") -> None:
    """Starts ``python _cds.py create ...`` detached (through ``sh -c '... &'``, so no
    child of ours is left to reap), unless another creator holds the lock or an
    earlier attempt for this key failed."""
    if not sys.executable or not os.path.exists("/bin/sh"):
        return  # e.g. Python embedded in another program: nothing to run the creator
    os.makedirs(directory, exist_ok=True)
    base = os.path.join(directory, f"py4jni-{key}")
    if os.path.exists(base + ".failed") or not _take_lock(base, LOCK_STALE_S):
        return
    argv = [sys.executable, "-I", os.path.abspath(__file__), "create", base, java, helper_jar,
            kind]
    _detach(argv, base + ".lock")


def _now() -> float:
    import time
    return time.time()


def create(base: str, java: str, helper_jar: str, kind: str = "jsa") -> int:
    """Makes ``<base>.<size>.<crc32>.<kind>`` with ``java -XX:ArchiveClassesAtExit``
    (kind "jsa") or ``-XX:AOTCacheOutput`` (kind "aot", JDK 25+) running
    org.py4jni.CdsWarmup on the helper jar; on failure leaves ``<base>.failed`` (with
    java's output) so that later starts do not try again. Removes ``<base>.lock``."""
    tmp = f"{base}.{os.getpid()}.tmp"
    write = ([f"-XX:AOTCacheOutput={tmp}"] if kind == "aot"
             else [f"-XX:ArchiveClassesAtExit={tmp}", *QUIET])
    return _write_archive(base, tmp, "." + kind,
                          [java, *write, "-cp", helper_jar, "org.py4jni.CdsWarmup"], 300,
                          (tmp + ".config",))  # .config: the AOT cache's own


if __name__ == "__main__" and len(sys.argv) in (5, 6) and sys.argv[1] == "create":
    sys.exit(create(*sys.argv[2:]))
if __name__ == "__main__" and len(sys.argv) >= 6 and sys.argv[1] == "create-classpath":
    sys.exit(create_classpath(*sys.argv[2:]))
