"""py4j's public methods of GatewayClient and JavaClient, on every py4jni client.

``gateway._gateway_client`` is a ``_py4jni.Client`` (C); its methods ``close``,
``shutdown_gateway``, ``garbage_collect_object``, ``send_command``,
``get_thread_connection`` and ``set_thread_connection`` call the functions of this
module with the client first. None of them is on a call's path.

Socket mode (a GatewayServer, or a ClientServer's JavaServer in pinned-thread mode)
keeps py4j's meaning: ``send_command`` sends py4j's command text on the C client's
connection (in pinned-thread mode the calling thread's own, so Java's callbacks that
arrive meanwhile run on this thread) and returns the answer without its ``!``.
In-process there is no wire protocol; docs/deviations.md lists what each
method does there.
"""
from __future__ import annotations

import threading
import weakref
from typing import Any

from . import _py4jni, _transports
from . import protocol as proto
from ._base import GatewayProperty, _log
from .java_gateway import GatewayConnection, GatewayConnectionGuard
from .protocol import Py4JError, Py4JNetworkError

#: py4j's sentinel that stops a ClientServer's FinalizerWorker (py4jni.clientserver).
_SHUTDOWN_FINALIZER_WORKER = "__shutdown__"
_UNNAMED_IDS = (proto.ENTRY_POINT_OBJECT_ID, proto.GATEWAY_SERVER_OBJECT_ID)


def _speaks_py4j(client: Any) -> bool:
    """True for a socket client (py4j's wire protocol, objects named by id)."""
    return _transports.of(client).names_objects


def _pinned(client: Any) -> bool:
    return bool(client.caps & _py4jni.CAP_PINNED)


def send_command(client: Any, command: str, retry: bool = True, binary: bool = False) -> Any:
    """py4j's ``send_command``: sends raw py4j command text and returns the answer
    without its ``!`` (``proto.ERROR`` when the exchange failed, as py4j; a connection
    that cannot be opened raises Py4JNetworkError). With
    ``binary``, the command goes out on a connection of its own and the result is
    ``(answer, guard)``: the guard reads the bytes that follow and closes the connection
    on exit. In-process: Py4JError (no wire protocol)."""
    if not _speaks_py4j(client):
        raise Py4JError("py4jni: in-process there is no py4j wire protocol, so "
                        "send_command has no command text to send; use JavaObject, "
                        "JavaClass and the gateway's methods (docs/deviations.md: "
                        "'Deviations from py4j')")
    if client.closed:
        raise Py4JNetworkError("Gateway is not connected.")
    if binary:
        return _send_binary(client, command)
    send = client._raw_command
    connection = get_thread_connection(client) if _pinned(client) else None
    if connection is not None and getattr(connection, "initiated_from_client", False) \
            and connection.socket is not None:
        send = connection.send_command  # the thread's own py4j connection, as py4j
    try:
        answer = send(command)
        if answer.startswith(proto.RETURN_MESSAGE):
            answer = answer[1:]
        if not answer.strip():
            raise Py4JNetworkError("Answer from Java side is empty", when=proto.EMPTY_RESPONSE)
        return answer
    except Py4JNetworkError as pne:
        if pne.when is None:  # no connection could be opened: raised, as py4j
            raise
        # py4j resends once when sending failed or the answer was empty; a C connection
        # that failed is already closed, so a resend goes out on a new one
        if retry and pne.when in (proto.EMPTY_RESPONSE, proto.ERROR_ON_SEND):
            return send_command(client, command, False)
        _log().exception("Exception while sending command.")
        return proto.ERROR


def _send_binary(client: Any, command: str) -> tuple[str, Any]:
    """``send_command(command, binary=True)``: a connection of its own (a
    ClientServerConnection in pinned-thread mode, whose Java callbacks run here)."""
    connection: Any
    if _pinned(client):
        # deferred: py4j's clientserver module, for pinned-thread clients only
        from .clientserver import ClientServerConnection
        prop = client.gateway_property or GatewayProperty(False, None)
        connection = ClientServerConnection(client.java_parameters, client.python_parameters,
                                            prop, client)
        connection.connect_to_java_server()
    else:
        connection = GatewayConnection(client.gateway_parameters, client.gateway_property)
        connection.start()
    try:
        answer = connection.send_command(command)
    except BaseException:
        connection.close()
        raise
    return answer, GatewayConnectionGuard(client, connection)


def garbage_collect_object(client: Any, target_id: str, enqueue: bool = True) -> None:
    """py4j's ``garbage_collect_object``: tells the Java side that Python no longer
    references object ``target_id`` (py4j's memory command; errors are logged, as py4j).
    A JavaClient with a ``finalizer_deque`` queues it there when ``enqueue`` (py4j's
    FinalizerWorker sends it); py4jni's ClientServer has none and releases at once.
    In-process: nothing for py4j's fixed ids (``"t"``, ``"GATEWAY_SERVER"``), which py4j
    never releases either; other ids raise Py4JError (in-process objects are released
    when their JavaObject is collected or detached)."""
    finalizer_deque = getattr(client, "finalizer_deque", None)
    if enqueue and finalizer_deque is not None and _pinned(client):
        finalizer_deque.appendleft((client, target_id))
        return
    if target_id in _UNNAMED_IDS:
        return
    if not _speaks_py4j(client):
        raise Py4JError(f"py4jni: no Java object {target_id!r} can be released by id "
                        "in-process (drop the JavaObject, or gateway.detach(it))")
    if client.closed or not getattr(client, "is_connected", True):
        return
    try:
        client._raw_command(proto.MEMORY_COMMAND_NAME + proto.MEMORY_DEL_SUBCOMMAND_NAME +
                            target_id + "\n" + proto.END_COMMAND_PART)
    except Exception:  # noqa: BLE001 - py4j logs and goes on
        _log().debug("Exception while garbage collecting an object", exc_info=True)


def shutdown_gateway(client: Any) -> None:
    """py4j's ``shutdown_gateway``: asks the server (a GatewayServer, or a ClientServer's
    Java side) to shut down and closes the client; a JavaClient's FinalizerWorker is
    told to stop. In-process: the client shuts down (as ``gateway.shutdown()``; the JVM
    stays up)."""
    try:
        if _speaks_py4j(client):
            if client.closed:
                raise Py4JNetworkError("Gateway is not connected.")
            try:
                _py4jni.shutdown_server(client)
            except Py4JNetworkError:  # py4j ignores what happens to the connection
                _log().debug("Error while shutting down gateway.", exc_info=True)
        else:
            client.shutdown()
        client.is_connected = False
    finally:
        finalizer_deque = getattr(client, "finalizer_deque", None)
        if finalizer_deque is not None and _pinned(client):
            finalizer_deque.appendleft(_SHUTDOWN_FINALIZER_WORKER)


def close(client: Any) -> None:
    """py4j's ``close``: closes the connections nobody is using (the idle ones; in
    pinned-thread mode the calling thread's too); later calls open new ones, as py4j.
    In-process: what ``gateway.close()`` does to the client (it shuts down)."""
    if _speaks_py4j(client):
        connection = get_thread_connection(client) if _pinned(client) else None
        if connection is not None and getattr(connection, "initiated_from_client", False):
            connection.close()
        client._close_idle()
        return
    client.shutdown()
    client.is_connected = False


def _thread_local(client: Any) -> Any:
    """The client's ``thread_connection`` (py4j's JavaClient attribute), made once."""
    local = getattr(client, "thread_connection", None)
    if local is None:  # JavaClient() sets it; a client made otherwise gets one here
        local = client.thread_connection = threading.local()
    return local


def get_thread_connection(client: Any) -> Any:
    """py4j's ``JavaClient.get_thread_connection``: the ClientServerConnection set for
    this thread (``set_thread_connection``; a PythonServer's serving thread has its
    own), or None. The C client's own connections are not Python objects: a thread that
    only made calls gets None. Other clients: None."""
    ref = getattr(_thread_local(client), "connection", None) if _pinned(client) else None
    return ref() if ref is not None else None


def set_thread_connection(client: Any, connection: Any) -> None:
    """py4j's ``JavaClient.set_thread_connection``: associates ``connection`` (a
    ClientServerConnection, held weakly) with this thread; a user-made one
    (``connect_to_java_server()``) then carries this thread's ``send_command``.
    Other clients raise Py4JError (no thread connections outside pinned-thread mode)."""
    if not _pinned(client):
        raise Py4JError("py4jni: set_thread_connection is py4j's pinned-thread mode "
                        "(a ClientServer over a socket); this client has no thread "
                        "connections")
    _thread_local(client).connection = weakref.ref(connection)


def set_class_loader(client: Any, loader: Any) -> None:
    """py4jni's own, in-process: the calls through ``client`` run with ``loader`` (a
    ``java.lang.ClassLoader`` JavaObject; None: the thread's own) as the context class
    loader of their Java thread, and the names looked up through it resolve in it, as
    py4j resolves them in its server thread's. The loader is set when a thread calls
    through this client after another (a compare per call, a Java call per switch);
    Java code that changes it during a call is not undone by the next call. A Python
    callback on a Java thread gives that thread back its own when it returns. Two Java
    calls now; socket mode raises ``Py4JError`` (the server's threads are Java's)."""
    if _speaks_py4j(client):
        raise Py4JError("py4jni: set_class_loader is for in-process gateways; a py4j "
                        "server's threads take the context class loader Java gives them")
    context = (None if loader is None
               else client.resolve(None, "org.py4jni.CallContext").of(loader))
    client._set_context(context)


def idle_connections(client: Any) -> "IdleConnections":
    """py4j's ``GatewayClient.deque`` (the client's ``deque`` attribute): the live view of
    the client's idle connections, made once per client."""
    view = getattr(client, "_idle_view", None)
    if view is None:
        view = IdleConnections(client)
        client._idle_view = view
    return view


_STATE_GONE, _STATE_IDLE, _STATE_HELD = 0, 1, 2


class IdleConnection:
    """One of a socket client's connections as py4j's ``deque`` holds it (py4j's
    ``GatewayConnection``, or ``ClientServerConnection`` in pinned-thread mode). The
    connection is the C client's; this object names it. ``socket`` is a new
    ``socket.socket`` over a duplicate of its descriptor at each read (None once the
    connection is closed): close it when done, or drop it (under TLS it is the TCP socket
    below the session). ``close(reset=False)`` closes the connection. A connection taken
    out of the deque (``pop``, ``popleft``, ``remove``) is the program's until it is given
    back (``append``, ``appendleft``) or closed; one dropped meanwhile is closed, as py4j
    closes a collected connection's socket."""

    def __init__(self, client: Any, conn_id: int) -> None:
        self._client = client
        self._id = conn_id
        params = getattr(client, "gateway_parameters", None)
        self.gateway_parameters = params
        self.java_parameters = getattr(client, "java_parameters", None)
        self.python_parameters = getattr(client, "python_parameters", None)
        self.address = getattr(client, "address", None)
        self.port = getattr(client, "port", None)
        self.auto_close = getattr(client, "auto_close", True)
        self.gateway_property = getattr(client, "gateway_property", None)
        self.java_client = client
        self.initiated_from_client = True

    def _ctl(self, op: int) -> int:
        return int(self._client._conn_ctl(self._id, op))

    @property
    def is_connected(self) -> bool:
        """True while the connection is open."""
        return self._ctl(_py4jni.CONN_STATE) != _STATE_GONE

    @property
    def socket(self) -> Any:
        """A socket object over a duplicate of the connection's descriptor, or None."""
        fd = self._ctl(_py4jni.CONN_DUP_FD)
        if fd < 0:
            return None
        import socket
        return socket.socket(fileno=fd)

    def close(self, reset: bool = False) -> None:
        """Closes the connection (a RST when ``reset``, as py4j's set_linger). In
        pinned-thread mode its socket is shut down and its thread's next call opens a new
        connection."""
        self._ctl(_py4jni.CONN_RESET if reset else _py4jni.CONN_CLOSE)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IdleConnection) and other._id == self._id and \
            other._client is self._client

    def __hash__(self) -> int:
        return hash((id(self._client), self._id))

    def __repr__(self) -> str:
        kind = "ClientServerConnection" if _pinned(self._client) else "GatewayConnection"
        return f"<py4jni {kind} {self._id} to {self.address}:{self.port}>"

    def __del__(self) -> None:
        try:
            if self._client._conn_ctl(self._id, _py4jni.CONN_STATE) == _STATE_HELD:
                self._client._conn_ctl(self._id, _py4jni.CONN_CLOSE)
        except Exception:  # noqa: BLE001 - interpreter exit
            pass


class IdleConnections:
    """py4j's ``GatewayClient.deque``: the client's idle connections, read live from the C
    client at each use (its pool; in pinned-thread mode the threads' connections no call
    is using). Left to right as py4j's deque: ``[-1]`` is the connection the next call
    takes. ``len``, iteration, indexing, ``in``, ``count``, ``index``, ``copy`` read it;
    ``pop``, ``popleft``, ``remove``, ``clear`` take connections out of the pool (the
    program's until given back with ``append``/``appendleft``, or closed); pinned-thread
    connections belong to their threads and are never taken (Py4JError)."""

    maxlen = None

    def __init__(self, client: Any) -> None:
        self._client_ref = weakref.ref(client)
        self._known: "weakref.WeakValueDictionary[int, IdleConnection]" = \
            weakref.WeakValueDictionary()
        self._lock = threading.Lock()

    def _client(self) -> Any:
        client = self._client_ref()
        if client is None:
            raise Py4JError("py4jni: the client of this deque is gone")
        return client

    def _ids(self) -> list[int]:
        client = self._client_ref()
        return list(client._idle_ids()) if client is not None else []

    def _conn(self, conn_id: int) -> IdleConnection:
        with self._lock:
            conn = self._known.get(conn_id)
            if conn is None:
                conn = IdleConnection(self._client(), conn_id)
                self._known[conn_id] = conn
            return conn

    def __len__(self) -> int:
        return len(self._ids())

    def __bool__(self) -> bool:
        return bool(self._ids())

    def __iter__(self) -> Any:
        return iter([self._conn(i) for i in self._ids()])

    def __reversed__(self) -> Any:
        return iter([self._conn(i) for i in reversed(self._ids())])

    def __getitem__(self, index: int) -> IdleConnection:
        ids = self._ids()
        try:
            return self._conn(ids[index])
        except IndexError:
            raise IndexError("deque index out of range") from None

    def __delitem__(self, index: int) -> None:
        self._take(self[index])

    def __contains__(self, conn: object) -> bool:
        return isinstance(conn, IdleConnection) and conn._client is self._client_ref() and \
            conn._id in self._ids()

    def count(self, conn: object) -> int:
        return 1 if conn in self else 0

    def index(self, conn: object, *args: int) -> int:
        ids = self._ids()
        if isinstance(conn, IdleConnection) and conn._client is self._client_ref():
            try:
                return ids.index(conn._id, *args)
            except ValueError:
                pass
        raise ValueError(f"{conn!r} is not in deque")

    def copy(self) -> Any:
        """A ``collections.deque`` of the connections idle now."""
        from collections import deque
        return deque(self)

    def __repr__(self) -> str:
        return f"deque({list(self)!r})"

    def _take(self, conn: IdleConnection) -> None:
        if conn._ctl(_py4jni.CONN_TAKE) == 0:
            return
        if _pinned(self._client()) and conn._ctl(_py4jni.CONN_STATE) == _STATE_IDLE:
            raise Py4JError("py4jni: a pinned-thread connection belongs to its thread and "
                            "is not taken out of the deque; close() it instead")
        raise ValueError(f"{conn!r} is not in deque")

    def _pop(self, end: int) -> IdleConnection:
        while True:
            ids = self._ids()
            if not ids:
                raise IndexError("pop from an empty deque")
            conn = self._conn(ids[end])
            try:
                self._take(conn)
                return conn
            except ValueError:  # another thread took it meanwhile
                continue

    def pop(self) -> IdleConnection:
        """Takes the connection the next call would use out of the pool."""
        return self._pop(-1)

    def popleft(self) -> IdleConnection:
        """Takes the connection used last out of the pool."""
        return self._pop(0)

    def remove(self, conn: IdleConnection) -> None:
        """Takes ``conn`` out of the pool (ValueError when it is not in it)."""
        if not isinstance(conn, IdleConnection) or conn._client is not self._client_ref():
            raise ValueError(f"{conn!r} is not in deque")
        self._take(conn)

    def clear(self) -> None:
        """Takes every idle connection out of the pool (each closes once dropped)."""
        while True:
            try:
                self.pop()
            except IndexError:
                return

    def _give_back(self, conn: Any, op: int) -> None:
        if not isinstance(conn, IdleConnection) or conn._client is not self._client_ref():
            raise Py4JError("py4jni: only a connection taken out of this deque can be "
                            "given back (the C client opens its own connections)")
        if conn._ctl(op) < 0:
            raise Py4JError(f"py4jni: {conn!r} was not taken out of the deque (or is closed)")

    def append(self, conn: IdleConnection) -> None:
        """Gives a connection taken out of the pool back: the next call uses it."""
        self._give_back(conn, _py4jni.CONN_PUT)

    def appendleft(self, conn: IdleConnection) -> None:
        """Gives a connection taken out of the pool back: used after the others."""
        self._give_back(conn, _py4jni.CONN_PUT_LAST)

    def extend(self, conns: Any) -> None:
        for conn in conns:
            self.append(conn)

    def extendleft(self, conns: Any) -> None:
        for conn in conns:
            self.appendleft(conn)
