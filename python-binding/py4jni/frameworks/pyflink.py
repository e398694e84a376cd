"""PyFlink with its JVM in this process.

``py4jni.pyflink.enable()`` (this module under its public name) before the first
``TableEnvironment`` / ``StreamExecutionEnvironment`` makes PyFlink's
``launch_gateway`` embed Flink's JVM here instead of starting
``org.apache.flink.client.python.PythonGatewayServer`` in a child ``java`` and
connecting to its py4j server. Every driver call (Table API, SQL, configuration,
``get_gateway().jvm``) is then a JNI call; jobs, Flink's Python workers and Flink's own
sockets are unchanged.

On py4jni's launch take-over (py4jni/_launch.py): PyFlink's own ``launch_gateway``
runs, and the ``java`` command its launcher (``pyflink.pyflink_gateway_server``, local
mode) builds (``$JVM_ARGS``, ``env.java.opts.all`` of ``config.yaml``, Flink's log
settings, ``-cp`` of Flink's ``lib/*.jar``, ``opt/flink-python*.jar`` and the Hadoop
configuration directories, the ``FLINK_*`` environment) is taken over: the JVM starts
here with that class path, options and environment, and ``PythonGatewayServer.main``
runs on a thread of its own as in its child: it builds Flink's shaded py4j
``GatewayServer`` (its entry point a map), registers it with ``PythonEnvUtils`` (Java
looks the map up there for ``PythonFunctionFactory``, which ``CREATE FUNCTION ...
LANGUAGE PYTHON`` calls), starts it (its port registered with py4jni instead of
listening), writes the port to PyFlink's connection file and waits for the Python
side's watchdog. PyFlink's ``JavaGateway`` for that port is in-process over that server
(``entry_point`` the map, ``java_gateway_server`` the server), so PyFlink's own
``get_gateway`` runs unchanged: it re-points the server's (never used) callback client
at the in-process callback marker's address, imports Flink's view, installs its
exception handler (``install_exception_handler`` replaces py4jni's ``get_return_value``
through the import alias) and puts ``PythonFunctionFactory`` and the ``Watchdog`` in the
map as Python proxies that Java calls directly in-process (the watchdog's pings
included). What this adapter adds is only what is PyFlink's (``_launch_gateway``):
the callback marker, Flink's stderr on this process's, its launcher's preexec_fn and
one option left out. ``gateway_launch()`` still computes the launch the same way, for a
gateway that must share the JVM (``hint``).

A cluster type other than ``local`` in ``$SUBMIT_ARGS`` (``remote``, ``yarn``: the
launcher runs ``bin/flink run``) is not embedded: PyFlink's own launcher starts it and
the gateway connects in socket mode (py4jni._switch's launcher rule, which says so in one
line on stderr); a ``bin/flink`` command is no java command to take over.
"""
from __future__ import annotations

import os
import shlex
from typing import Any

from ..protocol import Py4JError
from .adapter import Adapter, InProcessCallbacks, Launch, replace_name

__all__ = ["enable", "enabled", "gateway_launch", "ADAPTER", "MAIN_CLASS"]

MAIN_CLASS = "org.apache.flink.client.python.PythonGatewayServer"
_SHADED_PY4J = "org.apache.flink.api.python.shaded.py4j"
# What pyflink_gateway_server puts before the configured options (Flink 2.x), less
# its --add-opens=jdk.proxy2/jdk.proxy2=ALL-UNNAMED (_DROPPED_OPTIONS): that module is
# made at run time, so HotSpot ignores the option at start and prints a warning (stock's
# goes to a pipe PyFlink never reads).
_LAUNCHER_OPTIONS = ("-XX:+IgnoreUnrecognizedVMOptions",)
_DROPPED_OPTIONS = ("--add-opens=jdk.proxy2/jdk.proxy2=ALL-UNNAMED",)
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
    """PyFlink's ``launch_gateway``, in-process: PyFlink's own launcher, whose ``java``
    command (``PythonGatewayServer``) the launch take-over runs in this process's JVM
    (py4jni/_launch.py); the gateway PyFlink then makes for the port in the connection
    file is in-process over that server. What stays PyFlink's here: its JVM's stderr
    is this process's (stock sends it to a pipe PyFlink never reads, which fills), its
    launcher's ``preexec_fn`` (SIGINT ignored in the child) has no child to run in, the
    ``--add-opens`` of a module the JVM makes at run time is left out (HotSpot warns
    at start), and the callback server PyFlink asks for is the in-process marker."""
    from .. import _launch  # deferred: for a PyFlink launch only
    with ADAPTER.lock:
        if ADAPTER.gateway is not None:
            return ADAPTER.gateway
        # py4jni's default archive only: one of Flink's class path would be a dump of
        # thousands of classes, in a JVM of its own, after the first run
        with _launch.adapted(preexec_fn_ok=True, stderr_inherit=True,
                             drop_options=_DROPPED_OPTIONS, classpath_cds=False):
            gateway = ADAPTER.stock_launch()
        if gateway._mode == "inproc":
            view: Any = gateway  # PyFlink's attributes, not the class's
            callbacks = InProcessCallbacks()
            view.get_callback_server = lambda: callbacks
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
