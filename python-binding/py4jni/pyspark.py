"""PySpark's driver with the JVM in this process.

``py4jni.pyspark.enable()`` before the first SparkContext/SparkSession makes PySpark's
``launch_gateway`` embed the driver JVM here (py4jni, JNI) instead of starting
``spark-submit`` and a py4j GatewayServer in a child process. Every driver call
(DataFrame, SQL, configuration, ``sc._jvm``) is then a JNI call instead of a socket
round trip; jobs, Python workers (started by Spark itself) and Spark's own sockets are
unchanged.

What ``spark-submit pyspark-shell`` gives the driver, done here (Spark 4.x):

- classpath: ``spark.driver.extraClassPath``, ``$SPARK_CONF_DIR`` (or
  ``$SPARK_HOME/conf``) when it exists, every jar of ``$SPARK_HOME/jars`` (pip's
  ``pyspark/jars``), ``--jars``;
- JVM options: ``-Xmx`` from ``spark.driver.memory`` (default 1g), the launcher's Java
  17+ module options (``JAVA_MODULE_OPTIONS``), ``spark.driver.defaultJavaOptions`` and
  ``spark.driver.extraJavaOptions``, ``spark.driver.extraLibraryPath`` in front of
  ``java.library.path``;
- system properties: every conf entry plus SparkSubmit's defaults (``spark.master``
  ``local[*]``, ``spark.app.name`` ``pyspark-shell``, client deploy mode,
  ``spark.ui.showConsoleProgress``), as ``-D`` options;
- log level WARN, as Spark's shells set it;
- ``PYSPARK_PYTHON`` defaults to this interpreter (Python workers import this
  pyspark), ``SPARK_HOME`` is exported for the JVM.

PySpark imports py4j directly. ``enable()`` rebinds the names PySpark uses from
``py4j.java_gateway``, ``py4j.protocol``, ``py4j.java_collections`` and
``py4j.clientserver`` to py4jni's (in py4j's modules and in pyspark modules already
imported), so ``isinstance(x, JavaObject)``, ``except Py4JJavaError`` and
``isinstance(gw, ClientServer)`` (pinned-thread mode) see py4jni's objects. py4j's
pure-Python helpers PySpark also reads (``register_input_converter``,
``INPUT_CONVERTER``, ``smart_decode``) stay py4j's and are honoured: pyspark's input
converters (dates, timestamps, numpy) run for arguments the core does not convert, and
PySpark's exception handler (``install_exception_handler`` patches
``py4j.java_gateway.get_return_value``) converts Java exceptions to
``AnalysisException`` and friends. The rebinding is process-wide: stock py4j gateways
cannot be used in the same process afterwards.

Threads: every Python thread calls Java on a Java thread of its own (attached on first
use), which is PySpark's pinned-thread mode; the gateway is always a ``ClientServer``
(``PYSPARK_PIN_THREAD`` has nothing to choose in-process).

Java calls Python in-process without a callback server (``foreachBatch``, streaming
listeners): the gateway carries a ``_callback_server`` marker so PySpark does not try
to start py4j's.
"""
from __future__ import annotations

import glob
import os
import re
import secrets
import shlex
import sys
import threading
from typing import Any

from . import _hooks, _py4jni, clientserver, java_collections, java_gateway, protocol
from .protocol import Py4JError, Py4JJavaError

__all__ = ["enable", "enabled", "spark_home", "driver_classpath", "driver_jvm_options",
           "JAVA_MODULE_OPTIONS"]

# Spark 4.3's launcher (org.apache.spark.launcher.JavaModuleOptions): what spark-submit
# gives every driver JVM. -XX:+IgnoreUnrecognizedVMOptions lets Java 17 skip the options
# of later Java versions.
JAVA_MODULE_OPTIONS = (
    "-XX:+IgnoreUnrecognizedVMOptions",
    "--add-modules=jdk.incubator.vector",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
    "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
    "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
    "--add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dio.netty.allocator.type=pooled",
    "-Dio.netty.handler.ssl.defaultEndpointVerificationAlgorithm=NONE",
    "--sun-misc-unsafe-memory-access=allow",
    "--enable-native-access=ALL-UNNAMED",
    "-Dderby.connection.requireAuthentication=false",
)

# HotSpot's java.library.path on Linux after LD_LIBRARY_PATH (kept when
# spark.driver.extraLibraryPath is prepended).
_JAVA_LIBRARY_PATH = ["/usr/java/packages/lib", "/usr/lib64", "/lib64", "/lib", "/usr/lib"]

# System properties SparkSubmit sets for a pyspark-shell driver when the conf does not.
SHELL_DEFAULTS = {
    "spark.master": "local[*]",
    "spark.app.name": "pyspark-shell",
    "spark.submit.deployMode": "client",
    "spark.submit.pyFiles": "",
    "spark.ui.showConsoleProgress": "true",
}

# The classes PySpark's own launch_gateway imports into gateway.jvm.
_JAVA_IMPORTS = (
    "org.apache.spark.SparkConf", "org.apache.spark.api.java.*",
    "org.apache.spark.api.python.*", "org.apache.spark.ml.python.*",
    "org.apache.spark.mllib.api.python.*", "org.apache.spark.resource.*",
    "org.apache.spark.sql.Encoders", "org.apache.spark.sql.OnSuccessCall",
    "org.apache.spark.sql.functions", "org.apache.spark.sql.classic.*",
    "org.apache.spark.sql.api.python.*", "org.apache.spark.sql.hive.*", "scala.Tuple2",
)

_state: dict[str, Any] = {"enabled": False, "gateway": None}
_lock = threading.Lock()


# ---------------------------------------------------------------- the driver's JVM

def spark_home() -> str:
    """``$SPARK_HOME``, else the installed pyspark package (pip's layout has ``jars/``)."""
    home = os.environ.get("SPARK_HOME")
    if home:
        return home
    from pyspark.find_spark_home import _find_spark_home
    return _find_spark_home()


def _conf_dir(home: str) -> str:
    return os.environ.get("SPARK_CONF_DIR") or os.path.join(home, "conf")


def _defaults_file(home: str) -> dict[str, str]:
    """``spark-defaults.conf`` of the conf directory (as spark-submit reads it)."""
    path = os.path.join(_conf_dir(home), "spark-defaults.conf")
    found: dict[str, str] = {}
    if not os.path.isfile(path):
        return found
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            entry = re.match(r"([^\s=:]+)[\s=:]+(.*)$", line)  # key, separator, value
            if entry:
                found[entry.group(1)] = entry.group(2).strip()
    return found


def _submit_args(props: dict[str, str]) -> None:
    """Applies ``$PYSPARK_SUBMIT_ARGS`` (spark-submit's options) to ``props``. Only the
    options that shape the driver in-process are accepted; the last word must be
    ``pyspark-shell`` as for PySpark's launcher."""
    words = shlex.split(os.environ.get("PYSPARK_SUBMIT_ARGS", "pyspark-shell"))
    if not words or words[-1] != "pyspark-shell":
        raise Py4JError("py4jni.pyspark: PYSPARK_SUBMIT_ARGS must end with 'pyspark-shell' "
                        f"(got {' '.join(words)!r})")
    as_prop = {"--master": "spark.master", "--name": "spark.app.name",
               "--driver-memory": "spark.driver.memory",
               "--driver-java-options": "spark.driver.extraJavaOptions",
               "--driver-class-path": "spark.driver.extraClassPath", "--jars": "spark.jars"}
    it = iter(words[:-1])
    for word in it:
        key, eq, value = word.partition("=")
        if key not in as_prop and key != "--conf":
            raise Py4JError(f"py4jni.pyspark: spark-submit option {key} in PYSPARK_SUBMIT_ARGS "
                            "is not supported in-process (supported: --conf, "
                            + ", ".join(as_prop) + ")")
        if not eq:
            value = next(it, None)
            if value is None:
                raise Py4JError(f"py4jni.pyspark: {key} in PYSPARK_SUBMIT_ARGS needs a value")
        if key == "--conf":
            k, _, v = value.partition("=")
            props[k] = v
        else:
            props[as_prop[key]] = value
    if os.environ.get("SPARK_TESTING"):  # as PySpark's launcher
        props.setdefault("spark.ui.enabled", "false")


def _driver_props(conf: Any) -> dict[str, str]:
    """The driver's Spark properties: defaults file, submit args, the conf, shell defaults."""
    props = _defaults_file(spark_home())
    _submit_args(props)
    if conf is not None:
        props.update(dict(conf.getAll()))
    for key, value in SHELL_DEFAULTS.items():
        props.setdefault(key, value)
    if "SPARK_DRIVER_MEMORY" in os.environ:
        props.setdefault("spark.driver.memory", os.environ["SPARK_DRIVER_MEMORY"])
    return props


def driver_classpath(props: dict[str, str] | None = None) -> list[str]:
    """The driver's classpath as spark-submit builds it: extra classpath, conf directory,
    Spark's jars, ``spark.jars``. Raises Py4JError when no Spark jars are found."""
    props = props or {}
    home = spark_home()
    jars = sorted(glob.glob(os.path.join(home, "jars", "*.jar")))
    if not jars:
        raise Py4JError(f"py4jni.pyspark: no Spark jars in {os.path.join(home, 'jars')} "
                        "(set SPARK_HOME or pip install pyspark)")
    cp = [p for p in props.get("spark.driver.extraClassPath", "").split(os.pathsep) if p]
    if os.path.isdir(_conf_dir(home)):
        cp.append(_conf_dir(home))
    cp += jars
    cp += [p for p in props.get("spark.jars", "").split(",") if p and "://" not in p]
    return cp


def driver_jvm_options(props: dict[str, str]) -> list[str]:
    """The driver JVM's options: heap, module options, extra options, and every Spark
    property as a system property (as SparkSubmit sets them)."""
    memory = props.get("spark.driver.memory", "1g").strip().lower().removesuffix("b")
    opts = [f"-Xmx{memory}", *JAVA_MODULE_OPTIONS]
    opts += shlex.split(props.get("spark.driver.defaultJavaOptions", ""))
    opts += shlex.split(props.get("spark.driver.extraJavaOptions", ""))
    libs = props.get("spark.driver.extraLibraryPath")
    if libs:  # spark-submit puts it on LD_LIBRARY_PATH, too late in a running process
        default = os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) + _JAVA_LIBRARY_PATH
        opts.append("-Djava.library.path=" + os.pathsep.join(
            p for p in [*libs.split(os.pathsep), *default] if p))
    opts += [f"-D{k}={v}" for k, v in sorted(props.items()) if k.startswith("spark.")]
    return opts


def _quiet_logging(gateway: Any) -> None:
    """Log level WARN, as spark-submit sets it for shells (Spark's Logging with
    isInterpreter=true: prints 'Setting default log level to "WARN"')."""
    try:
        submit = java_gateway.get_field(
            getattr(gateway.jvm.org.apache.spark.deploy, "SparkSubmit$"), "MODULE$")
        submit.initializeLogIfNecessary(True, False)
    except Py4JError:  # another Spark version: keep its defaults
        pass


class _InProcessCallbacks:
    """Stands where PySpark looks for py4j's callback server: in-process, Java calls
    Python proxies directly (py4jni.callbacks), so there is no server to start."""

    port = 0

    def shutdown(self) -> None:
        """Nothing to stop."""


def _launch_gateway(conf: Any = None, popen_kwargs: Any = None) -> Any:
    """PySpark's ``launch_gateway``, in-process: the driver JVM embedded by py4jni."""
    with _lock:
        if _state["gateway"] is not None:
            return _state["gateway"]
        props = _driver_props(conf)
        home = spark_home()
        os.environ.setdefault("SPARK_HOME", home)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        try:
            gateway = clientserver.ClientServer(
                java_parameters=clientserver.JavaParameters(
                    auth_token=secrets.token_hex(16), auto_convert=True),
                python_parameters=clientserver.PythonParameters(port=0, eager_load=False),
                classpath=driver_classpath(props), jvm_options=driver_jvm_options(props))
        except Py4JError as exc:
            if "already running with" in str(exc):
                raise Py4JError(
                    "py4jni.pyspark: this process's JVM was already started by another "
                    "py4jni gateway with a different classpath or options than Spark's "
                    "driver needs; a process holds one JVM. Start Spark first (then use "
                    "SparkContext._gateway), or start the other gateway with "
                    "classpath=py4jni.pyspark.driver_classpath()") from None
            raise
        gateway.proc = None
        gateway._callback_server = _InProcessCallbacks()
        for name in _JAVA_IMPORTS:
            java_gateway.java_import(gateway.jvm, name)
        _quiet_logging(gateway)
        _state["gateway"] = gateway
        return gateway


# ---------------------------------------------------------------- py4j's names

class _JavaClassMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _py4jni.JavaClass)


class JavaClass(metaclass=_JavaClassMeta):
    """py4j's ``JavaClass(fqn, gateway_client)`` constructor (PySpark's input converters
    use it): returns py4jni's JavaClass for ``fqn`` (one class resolution); isinstance
    checks see py4jni's JavaClass objects."""

    def __new__(cls, fqn: str, gateway_client: Any) -> Any:  # type: ignore[misc]
        found = gateway_client.resolve(None, fqn)
        if found is None:
            raise Py4JError(f"class {fqn} not found")
        return found


class _JavaErrorAnswer:
    """What py4jni hands a patched ``get_return_value``: the Java error to raise."""

    __slots__ = ("error",)

    def __init__(self, error: Py4JJavaError) -> None:
        self.error = error


_py4j_get_return_value: Any = None
_in_hook = threading.local()


def _get_return_value(answer: Any, gateway_client: Any = None, target_id: Any = None,
                      name: Any = None) -> Any:
    """py4j's ``get_return_value``: raises the Java error py4jni passes in; py4j's
    answer strings go to py4j's own function."""
    if isinstance(answer, _JavaErrorAnswer):
        raise answer.error
    return _py4j_get_return_value(answer, gateway_client, target_id, name)


class _HookedJavaError(Py4JJavaError):
    """The Py4JJavaError the C core raises once enabled: when something replaced
    ``py4j.java_gateway.get_return_value`` (PySpark's exception handler), that function
    sees the error first and what it raises (e.g. AnalysisException) is raised instead."""

    def __new__(cls, msg: str, java_exception: Any) -> Any:
        hook = getattr(sys.modules.get("py4j.java_gateway"), "get_return_value", None)
        if hook is not None and hook is not _get_return_value and \
                not getattr(_in_hook, "active", False):
            _in_hook.active = True  # Java errors inside the hook are raised as they are
            try:
                hook(_JavaErrorAnswer(Py4JJavaError(msg, java_exception)), None, None, None)
            finally:
                _in_hook.active = False
        return super().__new__(cls, msg, java_exception)


_HookedJavaError.__name__ = _HookedJavaError.__qualname__ = "Py4JJavaError"


def _input_converters(gateway: Any, obj: Any) -> Any:
    """py4j's INPUT_CONVERTER list (``register_input_converter``: PySpark's dates,
    timestamps, intervals, numpy values) for arguments the core does not convert.
    py4j's own collection converters are left out: py4jni's auto_convert does that."""
    for conv in getattr(sys.modules.get("py4j.protocol"), "INPUT_CONVERTER", ()):
        if type(conv).__module__.startswith("py4j.") or type(conv).__module__ == "py4j":
            continue
        if conv.can_convert(obj):
            return conv.convert(obj, gateway._gateway_client)
    return NotImplemented


def _replacements() -> dict[str, dict[str, Any]]:
    """py4jni's object for each py4j name PySpark uses, per py4j module."""
    gw, coll, cs = java_gateway, java_collections, clientserver
    return {
        "py4j.java_gateway": {
            "JavaObject": gw.JavaObject, "JavaClass": JavaClass, "JavaMember": gw.JavaMember,
            "JavaPackage": gw.JavaPackage, "JVMView": gw.JVMView,
            "JavaGateway": gw.JavaGateway, "GatewayParameters": gw.GatewayParameters,
            "CallbackServerParameters": gw.CallbackServerParameters,
            "java_import": gw.java_import, "is_instance_of": gw.is_instance_of,
            "get_field": gw.get_field, "set_field": gw.set_field,
            "get_method": gw.get_method, "get_java_class": gw.get_java_class,
            "Py4JError": protocol.Py4JError, "Py4JJavaError": Py4JJavaError,
            "get_return_value": _get_return_value,
        },
        "py4j.protocol": {
            "Py4JError": protocol.Py4JError, "Py4JJavaError": Py4JJavaError,
            "Py4JNetworkError": protocol.Py4JNetworkError,
            "Py4JAuthenticationError": protocol.Py4JAuthenticationError,
            "get_return_value": _get_return_value,
        },
        "py4j.java_collections": {
            "JavaArray": coll.JavaArray, "JavaList": coll.JavaList, "JavaMap": coll.JavaMap,
            "JavaSet": coll.JavaSet, "JavaIterator": coll.JavaIterator,
            "ListConverter": coll.ListConverter, "MapConverter": coll.MapConverter,
            "SetConverter": coll.SetConverter,
        },
        "py4j.clientserver": {
            "ClientServer": cs.ClientServer, "JavaParameters": cs.JavaParameters,
            "PythonParameters": cs.PythonParameters,
        },
    }


def _rebind_py4j() -> None:
    """Points py4j's names (in py4j's modules and in pyspark modules that imported them
    already) at py4jni's objects."""
    global _py4j_get_return_value
    import importlib
    swap: dict[int, Any] = {}
    for modname, names in _replacements().items():
        mod = importlib.import_module(modname)
        if mod.__name__.split(".")[0] == "py4jni":  # py4j is already aliased to py4jni
            continue
        if modname == "py4j.protocol":
            _py4j_get_return_value = mod.get_return_value
        for name, new in names.items():
            old = mod.__dict__.get(name)
            if old is not None and old is not new:
                swap[id(old)] = new
            setattr(mod, name, new)
    for modname, mod in list(sys.modules.items()):
        if not (modname == "pyspark" or modname.startswith("pyspark.")) or mod is None:
            continue
        namespace = getattr(mod, "__dict__", {})
        for name, value in list(namespace.items()):
            new = swap.get(id(value))
            if new is not None:
                namespace[name] = new


def _patch_pyspark() -> None:
    """PySpark's launch_gateway (where it is defined and where it was imported) becomes
    the in-process one."""
    import pyspark.java_gateway as pjg
    pjg.launch_gateway = _launch_gateway
    for modname in ("pyspark.context", "pyspark.core.context"):
        mod = sys.modules.get(modname)
        if mod is not None and hasattr(mod, "launch_gateway"):
            mod.launch_gateway = _launch_gateway


def enabled() -> bool:
    """True once enable() ran in this process."""
    return _state["enabled"]


def enable() -> None:
    """Makes PySpark start its driver JVM in this process (call before the first
    SparkContext or SparkSession; calling again does nothing). Raises Py4JError when
    pyspark is not installed or a SparkContext already runs on a py4j gateway."""
    with _lock:
        if _state["enabled"]:
            return
        try:
            import pyspark  # noqa: F401
            from pyspark.core.context import SparkContext
        except ImportError as exc:
            raise Py4JError(f"py4jni.pyspark: pyspark is not installed ({exc})") from None
        if SparkContext._gateway is not None:
            raise Py4JError("py4jni.pyspark.enable() must run before the first SparkContext "
                            "(this process already has PySpark's py4j gateway)")
        _rebind_py4j()
        _patch_pyspark()
        _py4jni._register(protocol.Py4JError, _HookedJavaError, protocol.Py4JNetworkError,
                          protocol.Py4JAuthenticationError)
        if _input_converters not in _hooks.ARG_CONVERTERS:
            _hooks.ARG_CONVERTERS.insert(0, _input_converters)
        _state["enabled"] = True

