"""The py4j switch's entry points: ``python -m py4jni run`` and the
``py4jni-as-py4j.pth`` hook (``PY4JNI_AS_PY4J=1``).

Both install the switch's py4j part (py4jni._switch: the import alias, the gateway
settings, the launcher rule) and the framework adapters' import hooks
(py4jni.frameworks.watch: importing pyspark or pyflink in in-process mode embeds its
JVM). The py4j-compatible modules read only py4jni._switch, never this module.
"""
from __future__ import annotations

import os
import sys
from typing import Sequence

from . import _launch, _switch, frameworks


def install() -> None:
    """Installs the switch, the launch take-over (py4jni/_launch.py) and the framework
    hooks in this process (idempotent)."""
    _switch.install()
    _launch.install()
    frameworks.watch()


def install_from_env() -> None:
    """Called by the .pth hook at interpreter start when PY4JNI_AS_PY4J=1."""
    try:
        install()
    except Exception as exc:  # noqa: BLE001 - never break interpreter start-up
        print(f"py4jni: PY4JNI_AS_PY4J=1 but the switch failed: {exc}", file=sys.stderr)


def run(argv: Sequence[str]) -> int:
    """``python -m py4jni run``: parses the options, sets the environment (children
    inherit it) and runs the script as ``__main__`` with the switch installed."""
    import argparse
    import runpy
    parser = argparse.ArgumentParser(
        prog="python -m py4jni run",
        description="Run a program written for py4j on py4jni (py4j imports resolve to "
                    "py4jni).",
        epilog="In-process, a java command the program starts whose program starts a py4j "
               "server runs in this process's JVM; PY4JNI_LAUNCH=child runs every such "
               "launch as written, PY4JNI_LAUNCH=inproc takes over every java command with a "
               "main class (docs/frameworks.md).")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--inproc", dest="mode", action="store_const", const="inproc",
                      help="embed the JVM in this process (default)")
    mode.add_argument("--socket", dest="mode", action="store_const", const="socket",
                      help="talk to a py4j GatewayServer, as py4j does")
    parser.add_argument("--classpath", help="classpath of the embedded JVM")
    parser.add_argument("--entry-point", help="class whose no-argument instance is the "
                        "gateway's entry_point (in-process)")
    parser.add_argument("script", help="the Python program")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the program's arguments")
    opts = parser.parse_args(argv)
    os.environ[_switch.ENV_SWITCH] = "1"
    os.environ["PY4JNI_MODE"] = opts.mode or os.environ.get("PY4JNI_MODE") or "inproc"
    if opts.classpath:
        os.environ["PY4JNI_CLASSPATH"] = opts.classpath
    if opts.entry_point:
        os.environ["PY4JNI_ENTRY_POINT"] = opts.entry_point
    install()
    sys.argv = [opts.script, *opts.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(opts.script)))
    runpy.run_path(opts.script, run_name="__main__")
    return 0
