"""Starting py4j's own GatewayServer in a child ``java`` process (socket mode).

``launch_gateway`` keeps py4j's signature and return values; the jar is py4j's
(from the ``py4j`` wheel, or ``jarpath=``), since the server is py4j's Java side.
"""
from __future__ import annotations

import os
import site
import sys

TYPE_CHECKING = False  # typing's constant without importing typing (~5 ms)
if TYPE_CHECKING:
    from typing import Any, Sequence

from .protocol import Py4JError

__all__ = ["launch_gateway", "find_jar_path"]


def find_jar_path() -> str:
    """Path of py4j's jar (``share/py4j/py4j*.jar`` under the usual prefixes), or ""."""
    prefixes = [sys.prefix, sys.exec_prefix, getattr(site, "USER_BASE", None) or "",
                "/usr/local", "/usr"]
    import glob
    for prefix in prefixes:
        found = sorted(glob.glob(os.path.join(prefix, "share", "py4j", "py4j*.jar")))
        if found:
            return found[-1]
    return ""


def _drain(stream: Any, sink: Any) -> None:
    """Copies lines of a child's output to a file, queue or deque until EOF."""
    for raw in iter(stream.readline, b""):
        if sink is None:
            continue
        line = raw.decode("utf-8", "replace")
        if hasattr(sink, "put"):
            sink.put(line)
        elif hasattr(sink, "appendleft"):
            sink.appendleft(line)
        else:
            sink.write(line)
    stream.close()


def launch_gateway(port: int = 0, jarpath: str = "", classpath: str = "",
                   javaopts: Sequence[str] = (), die_on_exit: bool = False,
                   redirect_stdout: Any = None, redirect_stderr: Any = None,
                   daemonize_redirect: bool = True, java_path: str | None = "java",
                   create_new_process_group: bool = False, enable_auth: bool = False,
                   cwd: str | None = None, return_proc: bool = False,
                   use_shell: bool = False) -> Any:
    """Spawns ``java -cp <py4j jar>:<classpath> py4j.GatewayServer [...] PORT`` and reads
    the port it listens on (and its auth token when ``enable_auth``).

    Returns the port, ``(port, token)`` with auth, and the Popen object appended when
    ``return_proc``. Raises Py4JError when the jar is missing or the server dies first.
    """
    import subprocess  # only launching needs it (keeps `import py4jni` light)
    import threading

    jarpath = jarpath or find_jar_path()
    if not jarpath or not os.path.exists(jarpath):
        raise Py4JError("py4j's jar not found (pip install py4j, or pass jarpath=): "
                        f"{jarpath or 'searched share/py4j under ' + sys.prefix}")
    if not java_path:
        home = os.environ.get("JAVA_HOME")
        java_path = os.path.join(home, "bin", "java") if home else "java"
    cp = os.pathsep.join(p for p in (jarpath, classpath) if p)
    command = [java_path, "-classpath", cp, *javaopts, "py4j.GatewayServer"]
    if die_on_exit:
        command.append("--die-on-broken-pipe")
    if enable_auth:
        command.append("--enable-auth")
    command.append(str(port))
    kwargs: dict[str, Any] = {}
    if create_new_process_group:
        kwargs["start_new_session"] = True
    try:
        proc = subprocess.Popen(
            " ".join(command) if use_shell else command, shell=use_shell,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=cwd, **kwargs)  # binary pipes, as py4j's (java_process.stdin takes bytes)
    except OSError as exc:
        raise Py4JError(f"cannot start {java_path}: {exc}") from exc
    assert proc.stdout is not None and proc.stderr is not None  # both are PIPEs
    first = proc.stdout.readline().decode("utf-8", "replace")
    if not first.strip().isdigit():
        proc.kill()
        err = proc.stderr.read().decode("utf-8", "replace")
        raise Py4JError(f"the GatewayServer did not start ({' '.join(command)}): "
                        f"{(first + err).strip()[:2000]}")
    the_port = int(first)
    token = proc.stdout.readline().decode("utf-8").rstrip("\r\n") if enable_auth else None
    for stream, sink in ((proc.stdout, redirect_stdout), (proc.stderr, redirect_stderr)):
        threading.Thread(target=_drain, args=(stream, sink), daemon=daemonize_redirect,
                         name="py4jni-gateway-output").start()
    output: Any = (the_port, token) if enable_auth else the_port
    if return_proc:
        output = (*output, proc) if isinstance(output, tuple) else (the_port, proc)
    return output
