"""PySpark's driver with the JVM in this process.

``py4jni.pyspark.enable()`` before the first SparkContext/SparkSession makes PySpark's
``launch_gateway`` embed the driver JVM here (py4jni, JNI) instead of starting
``spark-submit`` and a py4j GatewayServer in a child process. Every driver call
(DataFrame, SQL, configuration, ``sc._jvm``) is then a JNI call instead of a socket
round trip; jobs, Python workers (started by Spark itself) and Spark's own sockets are
unchanged.

What ``spark-submit pyspark-shell`` gives the driver, done here (Spark 4.x):

- environment: spark-submit's (its scripts run by ``py4jni.frameworks.spark_env``:
  ``load-spark-env.sh``, ``spark-env.sh``, ``SPARK_SCALA_VERSION``...) while the JVM
  starts and takes its copy; this process's own environment is then restored;
- classpath: ``spark.driver.extraClassPath`` and ``.defaultExtraClassPath``,
  ``$SPARK_CONF_DIR`` (or ``$SPARK_HOME/conf``) when it exists, every jar of
  ``$SPARK_HOME/jars`` (pip's ``pyspark/jars``), ``--jars``;
- JVM options: ``-Xmx`` from ``spark.driver.memory`` (else ``SPARK_DRIVER_MEMORY``,
  ``SPARK_MEM``; default 1g), the launcher's Java 17+ module options
  (``JAVA_MODULE_OPTIONS``), ``SPARK_SUBMIT_OPTS``, ``spark.driver.defaultJavaOptions`` and
  ``spark.driver.extraJavaOptions``, ``spark.driver.extraLibraryPath`` in front of
  ``java.library.path``;
- system properties: every conf entry plus SparkSubmit's defaults (``spark.master``
  ``local[*]``, ``spark.app.name`` ``pyspark-shell``, client deploy mode,
  ``spark.ui.showConsoleProgress``), as ``-D`` options, and ``SPARK_SUBMIT=true``;
- class-data sharing of the class path (``cds="classpath"``, py4jni/_cds.py): the first
  session records the classes it loads, later ones map them from an archive;
- log level WARN, as Spark's shells set it;
- ``PYSPARK_PYTHON`` defaults to this interpreter (Python workers import this
  pyspark), ``SPARK_HOME`` is exported for the JVM.

PySpark imports py4j directly. ``enable()`` makes ``py4j`` and ``py4j.<module>``
imports resolve to the same-named py4jni modules from then on (the import alias of the
py4j switch, ``py4jni._switch``), and rebinds the py4j names of pyspark modules imported
before, so ``isinstance(x, JavaObject)``, ``except Py4JJavaError`` and
``isinstance(gw, ClientServer)`` (pinned-thread mode) see py4jni's objects. PySpark's
exception handler (``install_exception_handler`` replaces
``py4j.java_gateway.get_return_value``) then replaces py4jni's error hook, through
which every Java exception passes, and converts Java exceptions to
``AnalysisException`` and friends; its input converters (dates, timestamps, intervals,
numpy; ``register_input_converter``, which builds ``JavaClass(fqn, gateway_client)``)
are py4jni's (converters registered with py4j before enable() are carried over). The
alias is process-wide: stock py4j gateways cannot be used in the same process
afterwards. Under the py4j switch in in-process mode (``PY4JNI_AS_PY4J=1``,
``python -m py4jni run``) importing pyspark calls ``enable()``.

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
from types import ModuleType
from typing import Any

from . import _cds, _switch, clientserver, java_gateway, protocol
from .protocol import Py4JError

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
            following = next(it, None)
            if following is None:
                raise Py4JError(f"py4jni.pyspark: {key} in PYSPARK_SUBMIT_ARGS needs a value")
            value = following
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
    for name in ("SPARK_DRIVER_MEMORY", "SPARK_MEM"):  # the launcher's order
        if name in os.environ:
            props.setdefault("spark.driver.memory", os.environ[name])
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
    cp = [p for key in ("spark.driver.extraClassPath", "spark.driver.defaultExtraClassPath")
          for p in props.get(key, "").split(os.pathsep) if p]
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
    opts += shlex.split(os.environ.get("SPARK_SUBMIT_OPTS", ""))  # the launcher reads it
    opts += shlex.split(props.get("spark.driver.defaultJavaOptions", ""))
    opts += shlex.split(props.get("spark.driver.extraJavaOptions", ""))
    libs = props.get("spark.driver.extraLibraryPath")
    if libs:  # spark-submit puts it on LD_LIBRARY_PATH, too late in a running process
        default = os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) + _JAVA_LIBRARY_PATH
        opts.append("-Djava.library.path=" + os.pathsep.join(
            p for p in [*libs.split(os.pathsep), *default] if p))
    opts += [f"-D{k}={v}" for k, v in sorted(props.items()) if k.startswith("spark.")]
    opts.append("-DSPARK_SUBMIT=true")  # SparkSubmit sets it for the programs it runs
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
        home = spark_home()
        os.environ.setdefault("SPARK_HOME", home)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        from .frameworks import spark_env
        try:  # spark-submit's environment (spark-env.sh's included) until the JVM has it
            restore_env = spark_env.for_jvm_start(home)
        except OSError as exc:
            raise Py4JError(f"py4jni.pyspark: {exc}") from None
        try:
            props = _driver_props(conf)
            # the token is PySpark's secret for its accumulator server (read from
            # gateway_parameters); the gateway itself is in-process, whatever the params
            gateway = clientserver.ClientServer(
                java_parameters=clientserver.JavaParameters(
                    auth_token=secrets.token_hex(16), auto_convert=True),
                python_parameters=clientserver.PythonParameters(port=0, eager_load=False),
                classpath=driver_classpath(props), jvm_options=driver_jvm_options(props),
                mode="inproc", cds=_cds.CLASSPATH)
            gateway.jvm.java.lang.System.getenv()  # the JVM's copy of the environment
        except Py4JError as exc:
            if "already running with" in str(exc):
                raise Py4JError(
                    "py4jni.pyspark: this process's JVM was already started by another "
                    "py4jni gateway with a different classpath or options than Spark's "
                    "driver needs; a process holds one JVM. Start Spark first (then use "
                    "SparkContext._gateway), or start the other gateway with "
                    "classpath=py4jni.pyspark.driver_classpath()") from None
            raise
        finally:
            restore_env()
        pyspark_view: Any = gateway  # PySpark's attributes, not the class's
        pyspark_view.proc = None
        pyspark_view._callback_server = _InProcessCallbacks()
        for name in _JAVA_IMPORTS:
            java_gateway.java_import(gateway.jvm, name)
        _quiet_logging(gateway)
        _state["gateway"] = gateway
        return gateway


# ---------------------------------------------------------------- py4j's names

def _from_py4j(value: Any) -> bool:
    """True for a module, class or function of py4j itself (not of py4jni)."""
    owner = value.__name__ if isinstance(value, ModuleType) else \
        getattr(value, "__module__", None)
    return isinstance(owner, str) and (owner == "py4j" or owner.startswith("py4j."))


def _carry_converters(real_protocol: ModuleType | None) -> None:
    """Converters registered with py4j's ``register_input_converter`` /
    ``register_output_converter`` before enable() (pyspark.sql.types registers its
    dates, timestamps, intervals and numpy converters at import) move to py4jni's
    registries, in their order; py4j's own converters are py4jni's same-named ones."""
    if real_protocol is None:
        return
    mine = protocol.INPUT_CONVERTER
    own = {type(c).__name__: c for c in mine}
    ordered: list[Any] = []
    for conv in getattr(real_protocol, "INPUT_CONVERTER", ()):
        conv = own.get(type(conv).__name__) if _from_py4j(type(conv)) else conv
        if conv is not None and conv not in ordered:
            ordered.append(conv)
    mine[:] = ordered + [c for c in mine if c not in ordered]  # in place: clients hold it
    for letter, conv in getattr(real_protocol, "OUTPUT_CONVERTER", {}).items():
        if not _from_py4j(conv):
            protocol.OUTPUT_CONVERTER[letter] = conv


def _adopt_py4j() -> None:
    """From now on ``py4j`` / ``py4j.*`` imports resolve to py4jni's modules (the py4j
    switch's import alias), so PySpark's ``install_exception_handler`` patches
    py4jni's ``get_return_value`` (the hook every Java error passes through),
    ``JavaClass(fqn, client)`` is py4jni's and ``register_input_converter`` fills
    py4jni's registry. pyspark modules imported before have their py4j names (classes,
    functions, modules) rebound to py4jni's same-named ones, and converters already
    registered with py4j move over."""
    import importlib
    real = {name: mod for name, mod in list(sys.modules.items())
            if (name == "py4j" or name.startswith("py4j.")) and isinstance(mod, ModuleType)
            and _from_py4j(mod)}
    _switch.alias()
    swap: dict[int, Any] = {}
    for name, mod in real.items():
        try:
            mine = importlib.import_module("py4jni" + name[len("py4j"):])
        except ImportError:  # e.g. py4j.tests: no py4jni counterpart
            continue
        swap[id(mod)] = mine
        for attr, value in list(vars(mod).items()):
            if attr.startswith("__") or not _from_py4j(value):
                continue
            new = getattr(mine, attr, None)
            if new is not None:
                swap.setdefault(id(value), new)
    _carry_converters(real.get("py4j.protocol"))
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
    setattr(pjg, "launch_gateway", _launch_gateway)  # noqa: B010 - pyspark is untyped
    for modname in ("pyspark.context", "pyspark.core.context"):
        mod = sys.modules.get(modname)
        if mod is not None and hasattr(mod, "launch_gateway"):
            setattr(mod, "launch_gateway", _launch_gateway)  # noqa: B010


def enabled() -> bool:
    """True once enable() ran in this process."""
    return bool(_state["enabled"])


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
        _adopt_py4j()
        _patch_pyspark()
        _state["enabled"] = True

