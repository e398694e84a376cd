"""PyFlink with its JVM in this process.

``py4jni.pyflink.enable()`` (this module under its public name) before the first
``TableEnvironment`` / ``StreamExecutionEnvironment`` makes PyFlink's
``launch_gateway`` embed Flink's JVM here instead of starting
``org.apache.flink.client.python.PythonGatewayServer`` in a child ``java`` and
connecting to its py4j server. Every driver call (Table API, SQL, configuration,
``get_gateway().jvm``) is then a JNI call; jobs, Flink's Python workers and Flink's own
sockets are unchanged.

What PyFlink's launcher (``pyflink.pyflink_gateway_server``, local mode) gives the JVM,
computed with its own helpers (``gateway_launch``):

- environment: ``FLINK_CONF_DIR``, ``FLINK_LIB_DIR``, ``FLINK_OPT_DIR``,
  ``FLINK_PLUGINS_DIR``, ``FLINK_BIN_DIR`` (``prepare_environment_variables``);
- class path: Flink's ``lib/*.jar``, ``opt/flink-python*.jar``, the Hadoop/YARN/HBase
  configuration directories, Flink's test jars under ``FLINK_TESTING``;
- JVM options: ``$JVM_ARGS``, ``-XX:+IgnoreUnrecognizedVMOptions``, ``env.java.opts.all`` of
  ``config.yaml`` (or ``$FLINK_ENV_JAVA_OPTS``), the log settings (``log.file``, log4j
  and logback configuration) as system properties.

The main class's set-up, in-process: ``PythonGatewayServer.main`` builds Flink's shaded
py4j ``GatewayServer`` whose entry point is a map, registers it with
``PythonEnvUtils`` (Java looks the map up there for ``PythonFunctionFactory``, which
``CREATE FUNCTION ... LANGUAGE PYTHON`` calls), opens its socket and waits for the
Python side's watchdog. Here the same server object is built and registered but never
started (no socket); the gateway's ``entry_point`` is its map and
``java_gateway_server`` is the server, so PyFlink's own ``get_gateway`` runs unchanged:
it re-points the server's (never used) callback client at the in-process callback
marker's address, imports Flink's view, installs its exception handler
(``install_exception_handler`` replaces py4jni's ``get_return_value`` through the
import alias) and puts ``PythonFunctionFactory`` and the ``Watchdog`` in the map as
Python proxies that Java calls directly in-process.

A cluster type other than ``local`` in ``$SUBMIT_ARGS`` (``remote``, ``yarn``: the
launcher runs ``bin/flink run``) is not embedded: PyFlink's own launcher starts it and
the gateway connects in socket mode (py4jni._switch's launcher rule, which says so in one
line on stderr).
"""
from __future__ import annotations

import os
import shlex
from typing import Any

from .. import java_gateway
from ..protocol import Py4JError
from .adapter import Adapter, InProcessCallbacks, Launch, replace_name

__all__ = ["enable", "enabled", "gateway_launch", "ADAPTER", "MAIN_CLASS"]

MAIN_CLASS = "org.apache.flink.client.python.PythonGatewayServer"
_SHADED_PY4J = "org.apache.flink.api.python.shaded.py4j"
# What pyflink_gateway_server puts before the configured options (Flink 2.x), less
# its --add-opens=jdk.proxy2/jdk.proxy2=ALL-UNNAMED: that module is made at run time,
# so HotSpot ignores the option at start and prints a warning (stock's goes to a pipe
# PyFlink never reads).
_LAUNCHER_OPTIONS = ("-XX:+IgnoreUnrecognizedVMOptions",)
_ENVIRONMENT = ("FLINK_CONF_DIR", "FLINK_LIB_DIR", "FLINK_OPT_DIR", "FLINK_PLUGINS_DIR",
                "FLINK_BIN_DIR")


class NotLocal(Exception):
    """$SUBMIT_ARGS names a cluster type whose launch is not a local JVM."""


def _split_properties(options: list[str]) -> tuple[list[str], dict[str, str]]:
    """JVM options without their ``-Dkey=value`` entries, and those as a dict."""
    plain: list[str] = []
    props: dict[str, str] = {}
    for opt in options:
        if opt.startswith("-D") and "=" in opt:
            key, value = opt[2:].split("=", 1)
            props[key] = value
        else:
            plain.append(opt)
    return plain, props


def gateway_launch() -> Launch:
    """What ``pyflink_gateway_server.launch_gateway_server_process`` would run for
    PyFlink's gateway, as a Launch. Raises NotLocal for a non-local cluster type."""
    from pyflink import pyflink_gateway_server as launcher
    env = dict(os.environ)
    launcher.prepare_environment_variables(env)
    args = ["-c", MAIN_CLASS, *shlex.split(os.environ.get("SUBMIT_ARGS", "local"))]
    program = launcher.construct_program_args(args)
    if program.cluster_type != "local":
        raise NotLocal(program.cluster_type)
    classpath = os.pathsep.join([launcher.construct_flink_classpath(env),
                                 launcher.construct_hadoop_classpath(env)])
    if "FLINK_TESTING" in env:
        classpath = os.pathsep.join([classpath, launcher.construct_test_classpath(env)])
    options = [*env.get("JVM_ARGS", "").split(), *_LAUNCHER_OPTIONS,
               *launcher.get_jvm_opts(env), *launcher.construct_log_settings(env)]
    plain, props = _split_properties([o for o in options if o])
    return Launch(classpath=[p for p in classpath.split(os.pathsep) if p],
                  jvm_options=plain, system_properties=props,
                  environment={k: env[k] for k in _ENVIRONMENT if k in env},
                  main_class=program.main_class)


def _register_server(gateway: Any) -> Any:
    """PythonGatewayServer.main's set-up without its socket: Flink's shaded py4j
    GatewayServer (entry point: a ConcurrentHashMap; callback client as Flink makes
    it), built but not started, registered as PythonEnvUtils' gateway server. Returns
    the server."""
    jvm = gateway.jvm
    py4j = jvm.org.apache.flink.api.python.shaded.py4j
    entry = jvm.java.util.concurrent.ConcurrentHashMap()
    j_gateway = py4j.Gateway(entry, py4j.CallbackClient(0))
    builder = getattr(py4j, "GatewayServer$GatewayServerBuilder")()
    server = builder.gateway(j_gateway).javaPort(0).build()
    loader = jvm.java.lang.ClassLoader.getSystemClassLoader()
    env_utils = jvm.java.lang.Class.forName("org.apache.flink.client.python.PythonEnvUtils",
                                            True, loader)
    field = env_utils.getDeclaredField("gatewayServer")
    field.setAccessible(True)  # package-private in Flink; PythonGatewayServer sets it
    field.set(None, server)
    return server


class _PyFlink(Adapter):
    package = "pyflink"
    public = "py4jni.pyflink"
    hint = ("Start PyFlink first (then use pyflink.java_gateway.get_gateway()), or start "
            "the other gateway with classpath=py4jni.pyflink.gateway_launch().classpath")

    def check(self) -> None:
        try:
            import pyflink.java_gateway as pjg
        except ImportError as exc:
            raise Py4JError(f"py4jni.pyflink: pyflink is not installed ({exc})") from None
        if getattr(pjg, "_gateway", None) is not None:
            raise Py4JError("py4jni.pyflink.enable() must run before PyFlink's first "
                            "gateway (this process already has PyFlink's py4j gateway)")

    def patch(self) -> None:
        """PyFlink's launch_gateway (get_gateway calls it by its module's name)
        becomes the in-process one."""
        import pyflink.java_gateway as pjg
        self.stock_launch = pjg.launch_gateway
        replace_name(("pyflink.java_gateway",), "launch_gateway", _launch_gateway)


ADAPTER = _PyFlink()


def _launch_gateway() -> Any:
    """PyFlink's ``launch_gateway``, in-process: Flink's JVM embedded by py4jni."""
    with ADAPTER.lock:
        if ADAPTER.gateway is not None:
            return ADAPTER.gateway
        try:
            launch = gateway_launch()
        except NotLocal:
            # Flink's own launcher starts it; the gateway PyFlink then makes by port is
            # the switch's launcher rule: socket mode, said in one line
            return ADAPTER.stock_launch()
        gateway = ADAPTER.embed(launch, java_gateway.JavaGateway, auto_convert=True)
        view: Any = gateway  # PyFlink's attributes, not the class's
        callbacks = InProcessCallbacks()
        view.get_callback_server = lambda: callbacks
        view.java_gateway_server = _register_server(gateway)
        view.entry_point = view.java_gateway_server.getGateway().getEntryPoint()
        view.java_process = None
        ADAPTER.gateway = gateway
        return gateway


def enabled() -> bool:
    """True once enable() ran in this process."""
    return ADAPTER.is_enabled


def enable() -> None:
    """Makes PyFlink start its JVM in this process (call before the first table or
    stream environment; calling again does nothing). Raises Py4JError when pyflink is
    not installed or already has its py4j gateway."""
    ADAPTER.enable()
