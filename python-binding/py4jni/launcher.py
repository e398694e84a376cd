"""py4j's ``launch_gateway``: py4j's own GatewayServer in a child ``java`` process.

``launch_gateway`` keeps py4j's signature and return values; the jar is py4j's
(from the ``py4j`` wheel, or ``jarpath=``), since the server is py4j's Java side. Under
the py4j switch in in-process mode (py4jni/_switch.py) no child starts: the embedded
JVM serves the port instead (``EmbeddedGatewayServer``), so that the gateway the
program then makes for that port is in-process.
"""
from __future__ import annotations

import os
import site
import sys

TYPE_CHECKING = False  # typing's constant without importing typing (~5 ms)
if TYPE_CHECKING:
    from typing import Any, Sequence

from .inproc_mode.transport import INPROC
from .protocol import Py4JAuthenticationError, Py4JError

__all__ = ["launch_gateway", "find_jar_path", "EmbeddedGatewayServer"]


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
                   javaopts: Sequence[str] = [],  # noqa: B006 - py4j's default, read only
                   die_on_exit: bool = False,
                   redirect_stdout: Any = None, redirect_stderr: Any = None,
                   daemonize_redirect: bool = True, java_path: str | None = "java",
                   create_new_process_group: bool = False, enable_auth: bool = False,
                   cwd: str | None = None, return_proc: bool = False,
                   use_shell: bool = False) -> Any:
    """Spawns ``java -cp <py4j jar>:<classpath> py4j.GatewayServer [...] PORT`` and reads
    the port it listens on (and its auth token when ``enable_auth``).

    Returns the port, ``(port, token)`` with auth, and the Popen object appended when
    ``return_proc``. Raises Py4JError when the jar is missing or the server dies first.

    Under the py4j switch in in-process mode no child starts: the embedded JVM, with
    py4j's jar (when found), ``classpath`` and ``javaopts``, serves the port, and the
    process returned is an ``EmbeddedGatewayServer``; the parameters about a child
    (``redirect_stdout``, ``redirect_stderr``, ``daemonize_redirect``, ``java_path``,
    ``create_new_process_group``, ``use_shell``) do not apply there, ``cwd`` only
    resolves relative class path entries (docs/deviations.md).
    """
    _switch = sys.modules.get(__package__ + "._switch")  # imported when installed
    switch = _switch.settings() if _switch is not None else None
    if switch is not None and switch.mode == "inproc":
        server = EmbeddedGatewayServer(port, jarpath, classpath, javaopts, die_on_exit,
                                       enable_auth, cwd, switch)
        embedded: Any = (server.port, server.token) if enable_auth else server.port
        if return_proc:
            embedded = (*embedded, server) if enable_auth else (server.port, server)
        return embedded

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


class EmbeddedGatewayServer:
    """What ``launch_gateway`` starts under the py4j switch in in-process mode, in place
    of a child ``java`` running py4j's GatewayServer: this process's JVM serves ``port``
    (registered with py4jni._switch, so that a gateway made for that port is in-process,
    over a client of its own). It has Popen's interface where it applies: ``args`` (the
    command py4j would have run), ``returncode``, ``poll()``, ``wait(timeout=None)``,
    ``terminate()``, ``kill()``, ``send_signal(sig)`` (the server ends: the port is no
    longer served and the gateways over it are shut down; the JVM stays) and ``stdin``
    (closing it ends a ``die_on_exit`` server, as py4j's ``--die-on-broken-pipe``);
    ``pid``, ``stdout`` and ``stderr`` are None (no child: the JVM writes to this
    process's own streams). As py4j's server, it ends when a gateway shuts it down,
    except one launched with ``die_on_exit``, which waits for its stdin to close."""

    def __init__(self, port: int, jarpath: str, classpath: str, javaopts: Sequence[str],
                 die_on_exit: bool, enable_auth: bool, cwd: str | None, switch: Any) -> None:
        import socket
        import threading
        import weakref

        from . import _switch  # deferred: importlib and typing, under the switch only
        jar = jarpath or find_jar_path()
        entries = [jar] if jar and os.path.exists(jar) else []  # as py4j's command line
        for entry in (classpath or "").split(os.pathsep):
            if entry:
                entries.append(os.path.join(cwd, entry) if cwd else entry)
        entries += [e for e in (switch.classpath or "").split(os.pathsep) if e]
        self._classpath = os.pathsep.join(entries) or None
        self._options = [str(o) for o in javaopts]
        self.args = ["java", "-classpath", os.pathsep.join([jarpath or jar, classpath]),
                     *self._options, "py4j.GatewayServer", str(port)]
        self.pid = None
        self.stdout = self.stderr = None
        self.stdin = _Stdin(self)
        self.returncode: int | None = None
        self.token = _new_token() if enable_auth else None
        self._dies_on_exit = die_on_exit
        self._ended = threading.Event()
        self._clients: weakref.WeakSet[Any] = weakref.WeakSet()
        self._anchor = self._new_client()  # starts the JVM (or joins it) now, as a launch
        self._entry = None  # the entry point (PY4JNI_ENTRY_POINT), one for all gateways
        if switch.entry_point:
            cls = self._anchor.resolve(None, switch.entry_point)
            if cls is None:
                raise Py4JError(f"entry point class {switch.entry_point} not found")
            self._entry = cls()
        # The port number stays this server's while it runs: bound, never listening
        # (a connection to it is refused, as to a port nothing serves).
        self._reserved = socket.socket()
        self._reserved.bind(("127.0.0.1", port))
        self.port = self._reserved.getsockname()[1]
        self._served = _switch.InProcessServer(
            name="py4j.GatewayServer (launch_gateway)", open=self._open,
            shutdown=self._shutdown_by_gateway)
        _switch.register_in_process_server(self.port, self._served)

    def _new_client(self) -> Any:
        client = INPROC.connect(None, self._classpath, self._options, None,
                                              False, False, True)
        self._clients.add(client)
        return client

    def _open(self, parameters: Any) -> tuple[Any, Any]:
        """The InProcessServer's ``open``: a client for one gateway, and the entry point
        on it. A wrong or missing token raises as py4j's server refuses it."""
        if self.token is not None and getattr(parameters, "auth_token", None) != self.token:
            raise Py4JAuthenticationError("Failed to authenticate with gateway server.")
        client = self._new_client()
        entry = self._entry
        if entry is not None:  # the same Java object, as a JavaObject of this client
            entry = client.resolve(None, "java.util.Objects").requireNonNull(entry)
        return client, entry

    def _shutdown_by_gateway(self) -> None:
        """py4j's shutdown command: the server stops; the process ends unless it waits
        for its stdin (``die_on_exit``)."""
        self._stop()
        if not self._dies_on_exit:
            self._end(0)

    def _stop(self) -> None:
        """Stops serving: the port is released, the gateways over it are shut down."""
        from . import _switch  # deferred: importlib and typing, under the switch only
        if _switch.unregister_in_process_server(self.port, self._served):
            self._reserved.close()
            for client in list(self._clients):
                client.shutdown()

    def _end(self, returncode: int) -> None:
        if self.returncode is None:
            self.returncode = returncode
            self._ended.set()

    def poll(self) -> int | None:
        """None while the server runs, then its return code."""
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Waits for the server to end; subprocess.TimeoutExpired after ``timeout``."""
        if not self._ended.wait(timeout):
            import subprocess
            raise subprocess.TimeoutExpired(self.args, timeout)  # type: ignore[arg-type]
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        """Ends the server as ``sig`` would end its process (return code ``-sig``)."""
        if self.returncode is None:
            self._stop()
            self._end(-int(sig))

    def terminate(self) -> None:
        """Ends the server (SIGTERM's return code)."""
        import signal
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        """Ends the server (SIGKILL's return code)."""
        import signal
        self.send_signal(signal.SIGKILL)

    def __repr__(self) -> str:
        state = "running" if self.returncode is None else f"returncode: {self.returncode}"
        return f"<EmbeddedGatewayServer port {self.port}, {state}>"


class _Stdin:
    """An EmbeddedGatewayServer's stdin: closing it ends a ``die_on_exit`` server, as
    py4j's ``--die-on-broken-pipe`` server exits on EOF (other servers do not read
    it); what is written is dropped."""

    def __init__(self, server: EmbeddedGatewayServer) -> None:
        self._server = server
        self.closed = False

    def write(self, data: bytes) -> int:
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self._server._dies_on_exit:
                self._server._stop()
                self._server._end(0)


def _new_token() -> str:
    """A token as py4j's GatewayServer makes one (32 random bytes, base64)."""
    import base64
    return base64.b64encode(os.urandom(32)).decode("ascii")
