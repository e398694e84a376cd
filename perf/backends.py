"""The backends the suite compares, and how each one starts.

  py4jni         py4jni in-process: JavaGateway() embeds the JVM (worker process of its own)
  py4jni-socket  py4jni's socket mode, client of a py4j GatewayServer
  py4j           py4j's own Python client, client of a py4j GatewayServer
  jpype          JPype1, the JVM embedded in its worker process

The three py4j-API backends run the same scenario code (perf/scenarios.py, `py4j`
expressions); only the package they import differs. Nothing here imports a bridge at
module level: the coordinator must stay free of any JVM.
"""
from dataclasses import dataclass
import glob
import importlib
import importlib.util
import os
import sys
from types import SimpleNamespace

PERF_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(PERF_DIR)
# Where the root CMake build puts an importable in-tree py4jni (sources + .so + jar).
IN_TREE_PY4JNI = os.path.join(REPO_DIR, "build", "python")

# JVM options of the embedded JVMs the suite starts itself (JPype; the floor adds the
# same). -Xrs: the JVM leaves SIGINT to Python (docs/guide.md, "Ctrl-C").
EMBEDDED_JVM_OPTIONS = ["-Xrs"]


@dataclass(frozen=True)
class Backend:
    name: str
    flavour: str  # which expression of a scenario it runs: "py4j" or "jpype"
    package: str  # import name
    dist: str  # distribution name on PyPI (for versions)
    mode: str  # "inproc" or "socket"

    @property
    def needs_server(self):
        return self.mode == "socket"


BACKENDS = {
    b.name: b for b in (
        Backend("py4jni", "py4j", "py4jni", "py4jni", "inproc"),
        Backend("py4jni-socket", "py4j", "py4jni", "py4jni", "socket"),
        Backend("py4j", "py4j", "py4j", "py4j", "socket"),
        Backend("jpype", "jpype", "jpype", "JPype1", "inproc"),
    )
}
BACKEND_NAMES = list(BACKENDS)


class NotInstalled(Exception):
    """The backend's package cannot be imported (message: why)."""


def extra_pythonpath(package):
    """A directory to add to sys.path so that `package` imports, or None: py4jni may be
    importable only from the in-tree CMake build (build/python) before `pip install .`."""
    if package != "py4jni":
        return None
    try:
        if importlib.util.find_spec(package) is not None:
            return None
    except (ImportError, ValueError):
        pass
    if os.path.isfile(os.path.join(IN_TREE_PY4JNI, "py4jni", "__init__.py")):
        return IN_TREE_PY4JNI
    return None


def import_package(package):
    """Imports and returns the package; raises NotInstalled with the reason."""
    extra = extra_pythonpath(package)
    if extra and extra not in sys.path:
        sys.path.insert(0, extra)
    try:
        return importlib.import_module(package)
    except Exception as e:  # ImportError, or a broken build failing at import
        where = f" (also tried {extra})" if extra else ""
        raise NotInstalled(f"{type(e).__name__}: {e}{where}") from e


def package_version(backend_or_dist):
    """Installed version of a distribution without importing it, or None."""
    from importlib import metadata
    try:
        return metadata.version(backend_or_dist)
    except metadata.PackageNotFoundError:
        return None


def package_importable(package):
    """True when the package can be found (no import is run)."""
    if extra_pythonpath(package):
        return True
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


# Where each name of py4j's API lives, per package. py4j spreads them over modules;
# py4jni exports them from the package (submodules are tried too).
_PY4J_API_NAMES = ("JavaGateway", "GatewayParameters", "CallbackServerParameters",
                   "java_import", "launch_gateway", "Py4JJavaError", "ListConverter",
                   "to_java_array")
_PY4J_API_MODULES = ("", ".java_gateway", ".protocol", ".java_collections")


def load_py4j_api(package):
    """py4j's API names as the package provides them (None where it lacks one)."""
    pkg = import_package(package)
    mods = []
    for suffix in _PY4J_API_MODULES:
        try:
            mods.append(importlib.import_module(package + suffix) if suffix else pkg)
        except ImportError:
            pass
    api = {}
    for name in _PY4J_API_NAMES:
        api[name] = next((getattr(m, name) for m in mods if hasattr(m, name)), None)
    if api["JavaGateway"] is None:
        raise NotInstalled(f"{package} has no JavaGateway")
    api["package"] = pkg
    return SimpleNamespace(**api)


def find_py4j_jar():
    """py4j's jar (it holds py4j.GatewayServer), or None. $PY4J_JAR wins; else py4j's own
    lookup; else the usual install places."""
    env = os.environ.get("PY4J_JAR")
    if env and os.path.isfile(env):
        return env
    try:
        from py4j.java_gateway import find_jar_path  # pure Python, starts no JVM
        path = find_jar_path()
        if path and os.path.isfile(path):
            return path
    except Exception:
        pass
    for root in {sys.prefix, sys.base_prefix, os.path.expanduser("~/.local"), "/usr/local", "/usr"}:
        hits = sorted(glob.glob(os.path.join(root, "share", "py4j", "py4j*.jar")))
        if hits:
            return hits[-1]
    return None


def java_executable():
    """The `java` the suite uses for GatewayServers: $JAVA_HOME/bin/java, else PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return os.path.join(home, "bin", "java")
    import shutil
    return shutil.which("java")


# ---- cold start: the source of a fresh `python -c` process per backend ------------------

_COLD_TAIL = """
__t1 = __time.perf_counter_ns()
__end = __time.monotonic_ns()
__warm = []
for __i in range(10):
    __a = __time.perf_counter_ns()
    for __j in range(100):
        {call}
    __warm.append((__time.perf_counter_ns() - __a) / 100)
__warm = __warm[3:]
import json as __json
print("P4JCOLD " + __json.dumps({{"end_ns": __end, "first_ns": __t1 - __t0,
      "warm_ns": sorted(__warm)[len(__warm) // 2], "start_ns": __ts, "import_ns": __ti,
      "ready_ns": __tr}}), flush=True)
{close}
import os as __os
__os._exit(0)
"""


# py4jni's in-process cold start asks the JVM to log its own start-up phases; the
# coordinator reads "Create VM, <secs> secs" from the child's stdout (COLD-full breakdown).
COLD_JVM_LOG = "-Xlog:startuptime"


def cold_full_source(backend, jar):
    """Source for `python -c`: start the bridge from nothing, make the first call (M1's
    expression; for JPype through JClass, its quickest first lookup: a first JPackage
    lookup scans packages for ~0.3 s), print when it returned (monotonic clock,
    comparable across processes on Linux), then the first call's own time and a warm
    median of the same call. Time stamps on the way (monotonic ns): the script's first
    line (python start), the package imported, the bridge up (JVM and helper, or the
    socket connection)."""
    b = BACKENDS[backend]
    stamp = "__ts = __time.monotonic_ns()\n"
    if b.flavour == "jpype":
        head = (
            "import time as __time\n" + stamp +
            "import jpype\n"
            "__ti = __time.monotonic_ns()\n"
            f"jpype.startJVM({', '.join(map(repr, EMBEDDED_JVM_OPTIONS))}, interrupt=False)\n"
            "__tr = __time.monotonic_ns()\n"
            "__t0 = __time.perf_counter_ns()\n"
            "System = jpype.JClass('java.lang.System')\n"
            "System.currentTimeMillis()\n")
        return head + _COLD_TAIL.format(call="System.currentTimeMillis()", close="")
    if b.mode == "inproc":
        head = (
            "import time as __time\n" + stamp +
            f"from {b.package} import JavaGateway\n"
            "__ti = __time.monotonic_ns()\n"
            f"gateway = JavaGateway(jvm_options=[{COLD_JVM_LOG!r}])\n"
            "__tr = __time.monotonic_ns()\n"
            "__t0 = __time.perf_counter_ns()\n"
            "gateway.jvm.java.lang.System.currentTimeMillis()\n")
        return head + _COLD_TAIL.format(call="gateway.jvm.java.lang.System.currentTimeMillis()",
                                        close="")
    # socket: spawn java via launch_gateway, read its port, connect, first call
    mod = "py4j.java_gateway" if b.package == "py4j" else b.package
    head = (
        "import time as __time\n" + stamp +
        f"from {mod} import JavaGateway, GatewayParameters, launch_gateway\n"
        "__ti = __time.monotonic_ns()\n"
        f"__port = launch_gateway(jarpath={jar!r}, die_on_exit=True)\n"
        "gateway = JavaGateway(gateway_parameters=GatewayParameters(port=__port))\n"
        "__tr = __time.monotonic_ns()\n"
        "__t0 = __time.perf_counter_ns()\n"
        "gateway.jvm.java.lang.System.currentTimeMillis()\n")
    return head + _COLD_TAIL.format(call="gateway.jvm.java.lang.System.currentTimeMillis()",
                                    close="gateway.shutdown()")


def cold_handshake_source(backend, port):
    """Source for `python -c`: with the package already imported and a GatewayServer up,
    time gateway creation + the first call (socket backends only)."""
    b = BACKENDS[backend]
    mod = "py4j.java_gateway" if b.package == "py4j" else b.package
    return (
        "import time as __time, json as __json, os as __os\n"
        f"from {mod} import JavaGateway, GatewayParameters\n"
        "__t0 = __time.perf_counter_ns()\n"
        f"gateway = JavaGateway(gateway_parameters=GatewayParameters(port={port}))\n"
        "gateway.jvm.java.lang.System.currentTimeMillis()\n"
        "__t1 = __time.perf_counter_ns()\n"
        "print('P4JCOLD ' + __json.dumps({'handshake_ns': __t1 - __t0}), flush=True)\n"
        "gateway.close()\n"
        "__os._exit(0)\n")
