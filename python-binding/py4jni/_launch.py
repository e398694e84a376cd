"""A program's own ``java`` launch, taken over: under the py4j switch in in-process mode
(py4jni/_switch.py), a ``java`` command that a program starts with
``subprocess.Popen`` (so ``run``, ``call``, ``check_output``...) or ``os.posix_spawn`` /
``os.posix_spawnp`` runs in this process's JVM instead of a child, when its program
starts a py4j GatewayServer.

*Which launches.* The command is read as the ``java`` launcher reads it
(py4jni/_java_command.py). It is taken over when a py4j GatewayServer class (py4j's own
or a shaded copy) is on its class path and reachable from its main class's code
(py4jni/_class_path.py: a walk of the class files' references, before any JVM
exists); any other command (a tool run by subprocess, a module or source launch, a
``cwd`` elsewhere, a ``preexec_fn``, another user or group, a later launch on another
JDK than the running JVM's) runs as written. ``PY4JNI_LAUNCH`` overrides it:
``child`` (every launch runs as written), ``inproc`` (every ``java`` command with a main
class is taken over), or a comma-separated list of ``inproc:<main class>`` and
``child:<main class>`` choices for those programs, the rule deciding the others.

*What runs.* The program's ``main(args)`` on a Java thread of its own
(``org.py4jni.Program``); its py4j GatewayServer registers with py4jni instead of
opening its port (``org.py4jni.Programs``), and a
``JavaGateway(GatewayParameters(port=P))`` / ``ClientServer(JavaParameters(port=P))``
for that port is an in-process gateway over that server's entry point
(py4jni/_switch.py ``register_in_process_server``). The first launch, before the JVM
exists, starts the JVM with the command's class path, options and environment; a later
one gets a class loader of its own over the platform loader (isolated as a process of
its own), and what cannot apply to a running JVM (-X and -XX options, agents, module
options, a system property already set otherwise) is said in one line on stderr.

*What the program holds.* The Popen object is subprocess's own, over a placeholder
child (``/bin/sh``, a few hundred kilobytes): its ``pid`` is the placeholder's (never
Python's), its exit status is the program's (so ``poll``/``wait``/``returncode`` and an
``os.waitpid`` after ``posix_spawn`` are Popen's and the kernel's own), and a signal
sent to it reaches the program: SIGTERM, SIGINT and SIGHUP end the program as the JVM
ends on them (shutdown hooks run, status 128 + signal), SIGKILL ends it without hooks
(status -9), as any other deadly signal. The child's pipes are the program's
System.in, System.out and System.err (``org.py4jni.ProgramStreams``).
"""
from __future__ import annotations

import os
import sys
import threading

from . import _switch
from ._base import helper_jar_path
from .protocol import Py4JAuthenticationError, Py4JError

TYPE_CHECKING = False  # typing's constant without importing typing
if TYPE_CHECKING:
    from typing import Any, Mapping, Sequence, TypeGuard

    from ._java_command import JavaCommand, NotTaken

ENV = "PY4JNI_LAUNCH"

# The placeholder: exits with the status written to its stdin; reports a trapped
# signal on its stdout (SIGHUP, SIGINT, SIGTERM, as the JVM handles them); EOF on its
# stdin (this process gone) ends it.
_PLACEHOLDER = ("trap 'g=1; echo 1' HUP; trap 'g=1; echo 2' INT; trap 'g=1; echo 15' TERM; "
                "while :; do g=; read -r s && exit \"$s\"; [ -n \"$g\" ] || exit 0; done")
_PLACEHOLDER_RS = "while :; do read -r s && exit \"$s\"; exit 0; done"  # java -Xrs

_lock = threading.RLock()
_scope = threading.local()  # .adapted: the framework adapter's launch under way here
_installed = False
_state: dict[str, Any] = {}  # gateway: the launcher's own gateway; started: our JVM options
_decisions: dict[tuple[Any, ...], str | None] = {}


def install() -> None:
    """Intercepts subprocess.Popen's child creation and os.posix_spawn[p] (idempotent);
    they decide per call, and only under the switch in in-process mode."""
    global _installed
    import subprocess
    with _lock:
        if _installed:
            return
        _installed = True
        original = subprocess.Popen._execute_child  # type: ignore[attr-defined]

        def _execute_child(self: Any, args: Any, executable: Any, preexec_fn: Any,
                           close_fds: Any, pass_fds: Any, cwd: Any, env: Any,
                           startupinfo: Any, creationflags: Any, shell: Any,
                           p2cread: int, p2cwrite: int, c2pread: int, c2pwrite: int,
                           errread: int, errwrite: int, *rest: Any) -> None:
            taken = _popen_command(args, executable, shell, env, cwd, preexec_fn, rest)
            if not _taken(taken):
                original(self, args, executable, preexec_fn, close_fds, pass_fds, cwd, env,
                         startupinfo, creationflags, shell, p2cread, p2cwrite, c2pread,
                         c2pwrite, errread, errwrite, *rest)
                return
            # rest: restore_signals, gid, gids, uid, umask, start_new_session[, process_group]
            start_new_session = bool(rest[5]) if len(rest) > 5 else False
            process_group = rest[6] if len(rest) > 6 else -1
            try:
                self.pid = _take_over(taken, env, [p2cread, c2pwrite, errwrite],
                                      start_new_session, process_group)
                self._child_created = True
            finally:
                self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)

        subprocess.Popen._execute_child = _execute_child  # type: ignore[attr-defined]
        for name in ("posix_spawn", "posix_spawnp"):
            real = getattr(os, name, None)
            if real is not None:
                setattr(os, name, _spawn_wrapper(real, name == "posix_spawnp"))


def _taken(command: JavaCommand | NotTaken) -> TypeGuard[JavaCommand]:
    """True for a JavaCommand (the launch is taken over), False for a NotTaken."""
    return hasattr(command, "main_class")


def _not_taken(reason: str) -> NotTaken:
    from ._java_command import NotTaken  # deferred: see _command
    return NotTaken(reason)


def _popen_command(args: Any, executable: Any, shell: Any, env: Any, cwd: Any,
                   preexec_fn: Any, rest: Sequence[Any]) -> JavaCommand | NotTaken:
    """Popen's command as a JavaCommand to take over, or why it runs as written
    (py4jni/_java_command.py and _class_path.py are imported at the first java
    command)."""
    scope = getattr(_scope, "adapted", None)
    switch = _switch.settings()
    if scope is None and (switch is None or switch.mode != "inproc"):
        return _not_taken("the switch is not in in-process mode")
    if shell:
        text = args if isinstance(args, str) else " ".join(map(str, args))
        if any(c in text for c in "|&;<>()$`\\\"'*?[]#~\n"):
            return _not_taken("a shell command line")
        argv = text.split()
    elif isinstance(args, (str, bytes, os.PathLike)):
        argv = [os.fsdecode(args)]
    else:
        argv = [os.fsdecode(a) for a in args]
    if executable is not None:
        argv = [os.fsdecode(executable), *argv[1:]]
    if not argv or os.path.basename(argv[0]) != "java":
        return _not_taken("not a java command")
    if preexec_fn is not None and not (scope is not None and scope.preexec_fn_ok):
        return _not_taken("a preexec_fn runs in a child")
    # rest: restore_signals, gid, gids, uid, umask, start_new_session[, process_group]
    if len(rest) >= 5 and (rest[1] is not None or rest[2] is not None or
                           rest[3] is not None or rest[4] not in (-1, None)):
        return _not_taken("another user, group or umask")
    return _command(argv, env, cwd)


def _command(argv: Sequence[str], env: Mapping[str, str] | None, cwd: Any) -> JavaCommand | NotTaken:
    """The JavaCommand of ``argv`` when the rule takes it over."""
    # deferred: the parsers load at the first launch, not at the switch's start-up
    from . import _class_path, _java_command
    if cwd is not None and os.path.realpath(os.fsdecode(cwd)) != os.path.realpath(os.getcwd()):
        return _not_taken("a launch in another directory runs as written")
    cmd = _java_command.parse(argv, env, None)
    if not _taken(cmd):
        return cmd
    choice = _choice(cmd.main_class)
    if choice == "child":
        return _not_taken(f"{ENV} says child")
    key = (tuple(cmd.classpath), cmd.main_class,
           tuple(_stamp(p) for p in cmd.classpath))
    with _lock:
        found = _decisions.get(key, "")
    if found == "":
        cp = _class_path.ClassPath(cmd.classpath)
        found = _class_path.reaches_gateway_server(cp, cmd.main_class)
        if found is None and choice == "inproc":
            found = ",".join(cp.gateway_servers())
        with _lock:
            _decisions[key] = found
    if found is None:
        return _not_taken("its program starts no py4j GatewayServer")
    scope = getattr(_scope, "adapted", None)
    if scope is not None:
        cmd = cmd._replace(jvm_options=[o for o in cmd.jvm_options
                                        if o not in scope.drop_options])
    return cmd._replace(gateway_servers=[n.replace("/", ".") for n in found.split(",") if n])


def _stamp(path: str) -> tuple[int, int]:
    try:
        st = os.stat(path)
        return st.st_mtime_ns, st.st_size
    except OSError:
        return 0, 0


def _choice(main_class: str) -> str | None:
    """``PY4JNI_LAUNCH``'s word for this main class: "inproc", "child" or None (the rule)."""
    value = os.environ.get(ENV, "auto").strip()
    if value in ("inproc", "child"):
        return value
    for item in value.split(","):
        how, _, name = item.strip().partition(":")
        if name == main_class and how in ("inproc", "child"):
            return how
    return None


# ------------------------------------------------------------------ the launch

def _launcher() -> Any:
    """The launcher's own gateway on the running JVM, or None when no JVM runs."""
    gateway = _state.get("gateway")
    if gateway is not None:
        return gateway
    # deferred: the extension and the gateway (~10 ms) load when a launch is taken over
    from . import _py4jni
    from .java_gateway import JavaGateway
    try:
        client = _py4jni.inproc_client(helper_jar_path(), join=True)
    except Py4JError:
        return None
    gateway = JavaGateway(gateway_client=client, mode="inproc")
    _state["gateway"] = gateway
    return gateway


def _start_jvm(cmd: JavaCommand, env: Mapping[str, str] | None, classpath_cds: bool) -> Any:
    """The first launch: the JVM with the command's class path, options and
    environment (the JVM takes its copy at start; this process keeps its own);
    ``classpath_cds``: an archive of the class path's classes too (py4jni/_cds.py)."""
    from . import _cds  # deferred: as in _gateway
    from .java_gateway import JavaGateway  # deferred: as in _gateway
    before = dict(os.environ)
    if env is not None:
        os.environ.clear()
        os.environ.update({os.fsdecode(k): os.fsdecode(v) for k, v in env.items()})
    try:
        # cds="classpath": the program's classes too, mapped from an archive made after
        # the first run (py4jni/_cds.py)
        gateway = JavaGateway(mode="inproc", classpath=cmd.classpath,
                              jvm_options=cmd.jvm_options, libjvm=cmd.libjvm,
                              cds=_cds.CLASSPATH if classpath_cds else True)
        if env is not None:
            _cls(gateway, "java.lang.System").getenv()  # the JVM's copy of the environment
    finally:
        if env is not None:
            os.environ.clear()
            os.environ.update(before)
    _state["gateway"] = gateway
    _state["started"] = (list(cmd.jvm_options), os.path.realpath(cmd.java))
    return gateway


def _not_applied(gateway: Any, cmd: JavaCommand) -> list[str]:
    """The command's options a running JVM cannot take; its new system properties are
    set (a property set otherwise is listed)."""
    started = _state.get("started", ([], None))[0]
    system = _cls(gateway, "java.lang.System")
    left: list[str] = []
    for option in cmd.jvm_options:
        if option.startswith("-D"):
            key, _, value = option[2:].partition("=")
            current = system.getProperty(key)
            if current is None:
                system.setProperty(key, value)
            elif current != value:
                left.append(option)
        elif option not in started:
            left.append(option)
    return left


def _same_jdk(gateway: Any, cmd: JavaCommand) -> bool:
    """True when the command's java is the running JVM's JDK."""
    home = str(_cls(gateway, "java.lang.System").getProperty("java.home"))
    java_home = os.path.dirname(os.path.dirname(os.path.realpath(cmd.java)))
    return java_home == os.path.realpath(home)


def _cls(gateway: Any, name: str) -> Any:
    """The JavaClass ``name``, resolved by its full name: a package walk
    (``gateway.jvm.org...``) would ask the class path for "org" first, and a miss opens
    every jar of a long class path."""
    return gateway._gateway_client.resolve(None, name)


def _stream(fd: int) -> str:
    return "inherit" if fd == -1 else f"fd:{fd}"


def _take_over(cmd: JavaCommand, env: Mapping[str, str] | None, fds: Sequence[int],
               start_new_session: bool, process_group: int) -> int:
    """Starts ``cmd`` in this process's JVM with the child's stdin, stdout and stderr
    fds (-1: this process's own) and returns the placeholder's pid at once, as a child's
    start returns: the JVM start (a first launch) and the program's start run on a
    thread of their own (``_Launch``) while the caller goes on, as a child would start
    beside it. A first launch with an environment of its own starts the JVM before
    returning (this process's environment is the JVM's while it starts)."""
    scope = getattr(_scope, "adapted", None)
    if scope is not None and scope.stderr_inherit:
        fds = [fds[0], fds[1], -1]
    classpath_cds = scope is None or scope.classpath_cds
    mine: dict[int, int] = {}  # the caller closes its fds on return: the launch's copies
    for fd in fds:
        if fd != -1 and fd not in mine:
            mine[fd] = os.dup(fd)
    streams = [("inherit" if fd == -1 else f"fd:{mine[fd]}") for fd in fds]
    if fds[2] != -1 and fds[2] == fds[1]:
        streams[2] = "stdout"
    pid, control, report = _placeholder("-Xrs" in cmd.jvm_options, start_new_session,
                                        process_group)
    launch = _Launch(cmd, env, streams, list(mine.values()), control, pid, classpath_cds)
    threading.Thread(target=launch.relay, args=(report,), name=f"py4jni-program-{pid}-signals",
                     daemon=True).start()
    with _lock:
        first_with_env = env is not None and _launcher() is None
    if first_with_env:
        launch.start()
        threading.Thread(target=launch.wait, name=f"py4jni-program-{pid}", daemon=True).start()
    else:
        threading.Thread(target=launch.run, name=f"py4jni-program-{pid}", daemon=True).start()
    return pid


class _Launch:
    """One taken-over launch: its start in the JVM, the wait for its end (whose status
    goes to the placeholder), and the placeholder's signals relayed to it."""

    def __init__(self, cmd: JavaCommand, env: Mapping[str, str] | None, streams: list[str],
                 fds: list[int], control: int, pid: int, classpath_cds: bool) -> None:
        self.cmd, self.env, self.streams, self.fds = cmd, env, streams, fds
        self.classpath_cds = classpath_cds
        self.control, self.pid = control, pid
        self.program: Any = None
        self.lock = threading.Lock()
        self.ended = threading.Event()
        self.pending: list[int] = []  # signals that came before the program started

    def run(self) -> None:
        """The launch thread: start, then wait."""
        if self.start():
            self.wait()

    def start(self) -> bool:
        """Starts the program; False (the failure said on its stderr, status 1 given to
        the placeholder) when it cannot start."""
        try:
            program = _start(self.cmd, self.env, self.streams, self.classpath_cds)
        except BaseException as exc:  # noqa: BLE001 - said as java says a failed start
            self.fail(exc)
            return False
        finally:
            for fd in self.fds:
                os.close(fd)
        with self.lock:
            self.program = program
            pending, self.pending = self.pending, []
        for sig in pending:
            self.deliver(sig)
        return True

    def fail(self, exc: BaseException) -> None:
        text = f"py4jni: {self.cmd.main_class} could not start in this process: {exc}\n"
        target = self.streams[2] if self.streams[2] != "stdout" else self.streams[1]
        try:
            if target.startswith("fd:"):
                os.write(int(target[3:]), text.encode())
            else:
                sys.stderr.write(text)
        except OSError:
            pass
        self.finish(1)

    def wait(self) -> None:
        """Waits for the program's end and gives its status to the placeholder."""
        try:
            status = self.program.waitFor()
        except BaseException:  # noqa: BLE001 - the JVM is going away with this process
            status = 1
        self.finish(status)

    def finish(self, status: int) -> None:
        self.ended.set()
        try:
            os.write(self.control, f"{status & 0xFF}\n".encode())
        except OSError:
            pass  # the placeholder is gone already
        finally:
            os.close(self.control)

    def deliver(self, sig: int) -> None:
        """A signal for the program: 9 kills it, others end it as the JVM's handler."""
        with self.lock:
            program = self.program
            if program is None:
                self.pending.append(sig)
                return
        if sig == 9:
            program.kill()
        else:
            program.signal(sig)

    def relay(self, report: int) -> None:
        """The placeholder's trapped signals go to the program; the placeholder dying
        otherwise (SIGKILL, or a signal it does not trap) kills the program."""
        with os.fdopen(report, "rb", buffering=0) as lines:
            buf = b""
            while True:
                chunk = lines.read(64)
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip().isdigit():
                        self.deliver(int(line))
        if not self.ended.is_set():
            self.deliver(9)


def _start(cmd: JavaCommand, env: Mapping[str, str] | None, streams: list[str],
           classpath_cds: bool) -> Any:
    """The program started in this process's JVM (started now for a first launch)."""
    from . import _py4jni  # deferred: as in _gateway
    with _lock:
        gateway = _launcher()
        first = gateway is None
        if first:
            try:
                gateway = _start_jvm(cmd, env, classpath_cds)
            except Py4JError as exc:
                if "already running" not in str(exc):
                    raise
                first = False  # another gateway started the JVM meanwhile
                gateway = _launcher()
        if not first and not _same_jdk(gateway, cmd):
            raise Py4JError(f"{cmd.java} is another JDK than this process's JVM")
        _py4jni.class_hooks_install()
        programs = _cls(gateway, "org.py4jni.Programs")
        programs.prepare()
        _listen(gateway)
        if first:
            if cmd.gateway_servers:
                programs.loadEdited(_string_array(gateway, cmd.gateway_servers))
            classpath = None
        else:
            left = _not_applied(gateway, cmd)
            if left:
                print(f"py4jni: {cmd.main_class} runs in this process's running JVM; not "
                      f"applied there: {' '.join(left)}", file=sys.stderr, flush=True)
            classpath = cmd.classpath
        program = programs.launch(cmd.main_class, _string_array(gateway, cmd.args),
                                  None if classpath is None
                                  else _string_array(gateway, classpath),
                                  *streams)
        _LAUNCHED[program.id()] = cmd.main_class
    return program


_LAUNCHED: dict[int, str] = {}  # program id -> main class (for messages)


def _string_array(gateway: Any, items: Sequence[str]) -> Any:
    array = gateway.new_array(_cls(gateway, "java.lang.String"), len(items))
    for i, item in enumerate(items):
        array[i] = item
    return array


def _placeholder(rs: bool, new_session: bool, group: int) -> tuple[int, int, int]:
    """Spawns the placeholder; returns (pid, its control pipe's write end, its report
    pipe's read end)."""
    import signal
    ctl_r, ctl_w = os.pipe()
    rep_r, rep_w = os.pipe()
    actions: list[tuple[Any, ...]] = [(os.POSIX_SPAWN_DUP2, ctl_r, 0),
                                      (os.POSIX_SPAWN_DUP2, rep_w, 1),
                                      (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
    try:
        for name in os.listdir("/proc/self/fd"):  # the JVM opens files without O_CLOEXEC
            fd = int(name)
            if fd > 2:
                actions.append((os.POSIX_SPAWN_CLOSE, fd))
    except OSError:
        pass
    kwargs: dict[str, Any] = {"file_actions": actions,
                              "setsigdef": (signal.SIGINT, signal.SIGTERM, signal.SIGHUP,
                                            signal.SIGPIPE)}
    if new_session:
        kwargs["setsid"] = True
    elif group is not None and group != -1:
        kwargs["setpgroup"] = group
    try:
        pid = _REAL_SPAWN(_SH, ["sh", "-c", _PLACEHOLDER_RS if rs else _PLACEHOLDER,
                                "py4jni-program"], {}, **kwargs)
    finally:
        os.close(ctl_r)
        os.close(rep_w)
    return pid, ctl_w, rep_r


_SH = "/bin/sh"
_REAL_SPAWN = os.posix_spawn


class adapted:
    """A framework adapter's launch (``with _launch.adapted(...): framework_launcher()``):
    the ``java`` commands this thread starts meanwhile are taken over by the rule even
    without the switch, and what the adapter says of its framework's launcher applies:
    ``preexec_fn_ok`` (its preexec_fn only concerns a child, e.g. ignoring SIGINT),
    ``stderr_inherit`` (the program's System.err is this process's stderr, not the pipe
    the launcher asked for), ``drop_options`` (JVM options left out), ``classpath_cds``
    (False: the first launch's JVM archives py4jni's classes only, not the class
    path's)."""

    def __init__(self, *, preexec_fn_ok: bool = False, stderr_inherit: bool = False,
                 drop_options: Sequence[str] = (), classpath_cds: bool = True) -> None:
        self.preexec_fn_ok = preexec_fn_ok
        self.stderr_inherit = stderr_inherit
        self.drop_options = tuple(drop_options)
        self.classpath_cds = classpath_cds

    def __enter__(self) -> "adapted":
        install()
        _scope.adapted = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _scope.adapted = None


# ------------------------------------------------------------- posix_spawn

def _spawn_wrapper(real: Any, search: bool) -> Any:
    def posix_spawn(path: Any, argv: Any, env: Any, **kwargs: Any) -> int:
        caller = sys._getframe(1).f_globals.get("__name__")
        if caller != "subprocess" and _switch.settings() is not None:
            argv_list = [os.fsdecode(a) for a in argv]
            exe = os.fsdecode(path)
            if search and os.sep not in exe:
                from ._java_command import _which  # deferred: see _command
                exe = _which(exe, None, os.getcwd()) or exe
            if argv_list and os.path.basename(exe) == "java" and \
                    _switch.settings().mode == "inproc":  # type: ignore[union-attr]
                cmd = _command([exe, *argv_list[1:]], env, None)
                if _taken(cmd):
                    return _spawn_taken(cmd, env, kwargs)
        return int(real(path, argv, env, **kwargs))
    posix_spawn.__doc__ = real.__doc__
    posix_spawn.__name__ = real.__name__
    return posix_spawn


def _spawn_taken(cmd: JavaCommand, env: Any, kwargs: dict[str, Any]) -> int:
    """os.posix_spawn of a taken-over command: its file actions give the program's
    stdin, stdout and stderr."""
    child: dict[int, int | None] = {0: 0, 1: 1, 2: 2}
    opened: list[int] = []
    try:
        for action in kwargs.get("file_actions") or ():
            kind = action[0]
            if kind == os.POSIX_SPAWN_DUP2:
                src, dst = action[1], action[2]
                child[dst] = child.get(src, src)
            elif kind == os.POSIX_SPAWN_OPEN:
                fd = os.open(action[2], action[3], action[4])
                opened.append(fd)
                child[action[1]] = fd
            elif kind == os.POSIX_SPAWN_CLOSE:
                child[action[1]] = None
        fds = []
        for k in (0, 1, 2):
            got = child.get(k)
            if got is None:
                got = os.open(os.devnull, os.O_RDWR)
                opened.append(got)
            fds.append(-1 if got == k else got)
        group = kwargs.get("setpgroup")
        return _take_over(cmd, env, fds, bool(kwargs.get("setsid")),
                          int(group) if group is not None else -1)
    finally:
        for fd in opened:
            os.close(fd)


# ------------------------------------------------------- the served ports

class _Listener:
    """org.py4jni.Programs.Listener: a taken-over program's py4j server serves a port
    (or stops): the switch's registry of in-process servers follows."""

    class Java:
        implements = ["org.py4jni.Programs$Listener"]

    def __init__(self) -> None:
        self.served_ports: dict[int, Any] = {}

    def served(self, port: int, server: Any, program: Any) -> None:
        name = _LAUNCHED.get(program.id(), "a taken-over program")
        entry = _switch.InProcessServer(name=name,
                                        open=lambda params: _open(server, program, params),
                                        shutdown=lambda: server.shutdown(),
                                        gateway_server=lambda client: _on(client, server))
        self.served_ports[port] = entry
        try:
            _switch.register_in_process_server(port, entry)
        except ValueError:
            pass  # py4jni serves it otherwise (launch_gateway's server): that one stays

    def unserved(self, port: int) -> None:
        entry = self.served_ports.pop(port, None)
        if entry is not None:
            _switch.unregister_in_process_server(port, entry)


def _listen(gateway: Any) -> None:
    if "listener" not in _state:
        listener = _Listener()
        _cls(gateway, "org.py4jni.Programs").listen(listener)
        _state["listener"] = listener


def _open(server: Any, program: Any, params: Any) -> tuple[Any, Any]:
    """A gateway's client over a taken-over program's server, and its entry point. A
    token that is not the server's raises as py4j's server refuses it."""
    from . import _py4jni  # deferred: as in _gateway
    gateway = _state["gateway"]
    token = _cls(gateway, "org.py4jni.Programs").authToken(server)
    if token is not None and getattr(params, "auth_token", None) != token:
        raise Py4JAuthenticationError("Failed to authenticate with gateway server.")
    client = _py4jni.inproc_client(helper_jar_path(), join=True)
    client._set_context(_on(client, program.context()))
    entry = server.getGateway().getEntryPoint()
    return client, (None if entry is None else _on(client, entry))


def _on(client: Any, java_object: Any) -> Any:
    """The same Java object, as a JavaObject of ``client``."""
    objects: Any = client.resolve(None, "java.util.Objects")
    return objects.requireNonNull(java_object)
