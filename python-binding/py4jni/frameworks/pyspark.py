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

This module is also ``py4jni.pyspark`` (one module, two names); the embedding, the
import alias and the converters are the shared part of py4jni/frameworks/adapter.py.

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
from typing import Any

from .. import _cds, clientserver, java_gateway
from ..protocol import Py4JError
from .adapter import (Adapter, InProcessCallbacks, Launch, replace_name,
                      system_property_options)

__all__ = ["enable", "enabled", "spark_home", "driver_classpath", "driver_jvm_options",
           "driver_launch", "JAVA_MODULE_OPTIONS", "ADAPTER"]

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
    # SparkSubmit's own parsing reads these after the JVM starts (_submit_environment)
    after_start = ("--packages", "--exclude-packages", "--repositories", "--py-files",
                   "--files", "--archives")
    it = iter(words[:-1])
    for word in it:
        key, eq, value = word.partition("=")
        if key not in as_prop and key not in after_start and key != "--conf":
            raise Py4JError(f"py4jni.pyspark: spark-submit option {key} in PYSPARK_SUBMIT_ARGS "
                            "is not supported in-process (supported: --conf, "
                            + ", ".join([*as_prop, *after_start]) + ")")
        if not eq:
            following = next(it, None)
            if following is None:
                raise Py4JError(f"py4jni.pyspark: {key} in PYSPARK_SUBMIT_ARGS needs a value")
            value = following
        if key == "--conf":
            k, _, v = value.partition("=")
            props[k] = v
        elif key in as_prop:
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
    """The driver JVM's class path as spark-submit's launcher builds it: extra classpath,
    conf directory, Spark's jars (``spark.jars`` and packages go to the driver's class
    loader, as SparkSubmit puts them). Raises Py4JError when no Spark jars are found."""
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
    cp += jars  # spark.jars and packages: the driver's class loader (_submit_environment)
    return cp


def driver_launch(props: dict[str, str]) -> Launch:
    """What ``spark-submit pyspark-shell`` gives the driver JVM: its classpath, heap,
    module and extra options, every Spark property as a system property (as SparkSubmit
    sets them), ``SPARK_HOME`` and ``PYSPARK_PYTHON`` (default: this interpreter, for
    the Python workers Spark starts)."""
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
    home = spark_home()
    env = {"SPARK_HOME": os.environ.get("SPARK_HOME") or home,
           "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON") or sys.executable}
    sysprops = {k: v for k, v in sorted(props.items()) if k.startswith("spark.")}
    sysprops["SPARK_SUBMIT"] = "true"  # SparkSubmit sets it for the programs it runs
    return Launch(classpath=driver_classpath(props), jvm_options=opts,
                  system_properties=sysprops,
                  environment=env, main_class="org.apache.spark.deploy.SparkSubmit")


def driver_jvm_options(props: dict[str, str]) -> list[str]:
    """The driver JVM's options: heap, module options, extra options, and every Spark
    property as a system property (as SparkSubmit sets them)."""
    launch = driver_launch(props)
    return [*launch.jvm_options, *system_property_options(launch.system_properties)]


def _quiet_logging(gateway: Any) -> None:
    """Log level WARN, as spark-submit sets it for shells (Spark's Logging with
    isInterpreter=true: prints 'Setting default log level to "WARN"')."""
    try:
        submit = java_gateway.get_field(
            getattr(gateway.jvm.org.apache.spark.deploy, "SparkSubmit$"), "MODULE$")
        submit.initializeLogIfNecessary(True, False)
    except Py4JError:  # another Spark version: keep its defaults
        pass


def _launcher_arguments(conf: Any) -> list[str]:
    """spark-submit's arguments as PySpark's launcher passes them: each conf entry as
    ``--conf k=v``, then ``$PYSPARK_SUBMIT_ARGS`` (default ``pyspark-shell``)."""
    words = [w for k, v in (conf.getAll() if conf is not None else ())
             for w in ("--conf", f"{k}={v}")]
    submit_args = os.environ.get("PYSPARK_SUBMIT_ARGS", "pyspark-shell")
    if os.environ.get("SPARK_TESTING"):
        submit_args = " ".join(["--conf spark.ui.enabled=false", submit_args])
    return words + shlex.split(submit_args)


# What SparkSubmit's preparation acts on beyond the properties the adapter already sets
# (without any of them it only builds an empty class loader: 1-3 s of a start saved).
_SUBMIT_FILES = ("spark.jars", "spark.jars.packages", "spark.submit.pyFiles", "spark.files",
                 "spark.archives")
_SUBMIT_FILE_OPTIONS = ("--jars", "--packages", "--py-files", "--files", "--archives")


def _needs_submit(props: dict[str, str], conf: Any) -> bool:
    """True when the launcher's arguments name jars, packages or files for SparkSubmit."""
    words = _launcher_arguments(conf)
    return any(props.get(key) for key in _SUBMIT_FILES) or any(
        word.partition("=")[0] in _SUBMIT_FILE_OPTIONS for word in words)


def _submit_environment(gateway: Any, conf: Any, props: dict[str, str]) -> None:
    """What SparkSubmit does before it runs PySpark's gateway server, by Spark's own code
    in this JVM: its argument parsing and ``prepareSubmitEnvironment`` on the launcher's
    arguments (Ivy resolves ``spark.jars.packages``/``--packages`` with
    ``spark.jars.repositories``, ``spark.jars.ivySettings``, ``spark.jars.ivy``; remote
    ``spark.jars`` are downloaded), then the driver's class loader: a
    ``MutableURLClassLoader`` (child-first under ``spark.driver.userClassPathFirst``)
    over the jars, the context class loader of every call through this gateway, and the
    resulting Spark conf as system properties. A session naming no jars, packages or
    files gets the empty loader only (the rest would change nothing)."""
    jvm = gateway.jvm
    util = jvm.org.apache.spark.util
    jars, spark_conf = "", None
    if _needs_submit(props, conf):
        submit = jvm.org.apache.spark.deploy.SparkSubmit()
        words = _launcher_arguments(conf)
        args = gateway.new_array(jvm.java.lang.String, len(words))
        for i, word in enumerate(words):
            args[i] = word
        prepared = submit.prepareSubmitEnvironment(
            submit.parseArguments(args),
            getattr(submit, "prepareSubmitEnvironment$default$2")())
        jars, spark_conf = prepared._2().mkString("\n"), prepared._3()
    system = jvm.java.lang.ClassLoader.getSystemClassLoader()
    no_urls = gateway.new_array(jvm.java.net.URL, 0)
    child_first = props.get("spark.driver.userClassPathFirst", "false").lower() == "true"
    loader = (util.ChildFirstURLClassLoader(no_urls, system) if child_first
              else util.MutableURLClassLoader(no_urls, system))
    for jar in jars.split("\n") if jars else ():
        util.DependencyUtils.addJarToClasspath(jar, loader)
    for entry in spark_conf.getAll() if spark_conf is not None else ():
        # as SparkSubmit's JavaMainApplication sets them
        jvm.java.lang.System.setProperty(entry._1(), entry._2())
    gateway._gateway_client.set_class_loader(loader)


class _PySpark(Adapter):
    package = "pyspark"
    public = "py4jni.pyspark"
    hint = ("Start Spark first (then use SparkContext._gateway), or start the other "
            "gateway with classpath=py4jni.pyspark.driver_classpath()")

    def check(self) -> None:
        try:
            import pyspark  # noqa: F401
            from pyspark.core.context import SparkContext
        except ImportError as exc:
            raise Py4JError(f"py4jni.pyspark: pyspark is not installed ({exc})") from None
        if SparkContext._gateway is not None:
            raise Py4JError("py4jni.pyspark.enable() must run before the first SparkContext "
                            "(this process already has PySpark's py4j gateway)")

    def patch(self) -> None:
        """PySpark's launch_gateway (where it is defined and where it was imported)
        becomes the in-process one; its Arrow collect reads the batches in memory
        (py4jni/frameworks/spark_dataplane.py)."""
        replace_name(("pyspark.java_gateway", "pyspark.context", "pyspark.core.context"),
                     "launch_gateway", _launch_gateway)
        # toPandas()/toArrow() with Arrow: the batches cross in memory, not by socket
        from . import spark_dataplane  # deferred: until PySpark's launch is replaced
        spark_dataplane.install(lambda: ADAPTER.gateway)


ADAPTER = _PySpark()


def _launch_gateway(conf: Any = None, popen_kwargs: Any = None) -> Any:
    """PySpark's ``launch_gateway``, in-process: the driver JVM embedded by py4jni."""
    with ADAPTER.lock:
        if ADAPTER.gateway is not None:
            return ADAPTER.gateway
        home = spark_home()
        os.environ.setdefault("SPARK_HOME", home)  # kept in this process too
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        from . import spark_env  # deferred: for a PySpark launch only
        try:  # spark-submit's environment (spark-env.sh's included) until the JVM has it
            restore_env = spark_env.for_jvm_start(home)
        except OSError as exc:
            raise Py4JError(f"py4jni.pyspark: {exc}") from None
        try:
            props = _driver_props(conf)
            launch = driver_launch(props)
            # the token is PySpark's secret for its accumulator server (read from
            # gateway_parameters); the gateway itself is in-process, whatever the params
            gateway = ADAPTER.embed(
                launch, clientserver.ClientServer,
                java_parameters=clientserver.JavaParameters(
                    auth_token=secrets.token_hex(16), auto_convert=True),
                python_parameters=clientserver.PythonParameters(port=0, eager_load=False),
                cds=_cds.CLASSPATH)
            gateway.jvm.java.lang.System.getenv()  # the JVM's copy of the environment
        finally:
            restore_env()
        pyspark_view: Any = gateway  # PySpark's attributes, not the class's
        pyspark_view.proc = None
        pyspark_view._callback_server = InProcessCallbacks()
        for name in _JAVA_IMPORTS:
            java_gateway.java_import(gateway.jvm, name)
        _quiet_logging(gateway)
        _submit_environment(gateway, conf, props)
        ADAPTER.gateway = gateway
        return gateway


def enabled() -> bool:
    """True once enable() ran in this process."""
    return ADAPTER.is_enabled


def enable() -> None:
    """Makes PySpark start its driver JVM in this process (call before the first
    SparkContext or SparkSession; calling again does nothing). Raises Py4JError when
    pyspark is not installed or a SparkContext already runs on a py4j gateway."""
    ADAPTER.enable()
