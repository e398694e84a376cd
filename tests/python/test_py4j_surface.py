"""py4j's public surface: every public module-level name of py4j 0.10.9.9's modules
exists in the same-named py4jni module (deviations are listed, with their reason, in
docs/deviations.md)."""
from __future__ import annotations

import importlib
import types

import pytest

MODULES = ["java_gateway", "protocol", "java_collections", "clientserver", "finalizer",
           "signals", "compat"]

# Names py4j exposes only as side effects of its own imports of Python 2/3 helpers
# that py4jni does not import in that module: (module, name) -> reason.
DEVIATIONS: dict[tuple[str, str], str] = {
    (module, feature): "a __future__ feature, not an API"
    for module in MODULES if module not in ("signals",)
    for feature in ("unicode_literals", "absolute_import")
}


def test_deviations_are_documented() -> None:
    from conftest import ROOT
    with open(f"{ROOT}/docs/deviations.md") as f:
        table = f.read().split("## The table", 1)[1]
    for (_, name), _reason in DEVIATIONS.items():
        assert f"`{name}`" in table, f"{name} is missing from docs/deviations.md's table"


def public_names(module: types.ModuleType) -> set[str]:
    return {n for n, v in vars(module).items()
            if not n.startswith("_") and not isinstance(v, types.ModuleType)}


@pytest.mark.parametrize("name", MODULES)
def test_every_public_py4j_name_exists(name: str) -> None:
    py4j_mod = importlib.import_module("py4j." + name)
    ours = importlib.import_module("py4jni." + name)
    missing = sorted(n for n in public_names(py4j_mod)
                     if not hasattr(ours, n) and (name, n) not in DEVIATIONS)
    assert not missing, f"py4jni.{name} lacks py4j's {missing}"


@pytest.mark.parametrize("name", MODULES)
def test_constants_have_py4j_values(name: str) -> None:
    py4j_mod = importlib.import_module("py4j." + name)
    ours = importlib.import_module("py4jni." + name)
    differ = [n for n in public_names(py4j_mod)
              if n.isupper() and isinstance(getattr(py4j_mod, n), (str, int, float, frozenset))
              and getattr(ours, n, None) != getattr(py4j_mod, n)]
    assert not differ, differ


def test_protocol_encoding_matches_py4j() -> None:
    import py4j.protocol as theirs

    import py4jni.protocol as ours
    for text in ["a\\b\nc\r", "", "x\\n", "plain"]:
        assert ours.escape_new_line(text) == theirs.escape_new_line(text)
        escaped = theirs.escape_new_line(text)
        assert ours.unescape_new_line(escaped) == theirs.unescape_new_line(escaped)
    for value in [None, True, False, 1, -2**31, 2**40, 1.5, float("inf"), float("nan"),
                  b"ab", bytearray(b"x"), "s\n"]:
        assert ours.get_command_part(value) == theirs.get_command_part(value), value
    assert ours.decode_bytearray(ours.encode_bytearray(b"\x00\xff")) == bytearray(b"\x00\xff")
    assert ours.is_error("xs")[0] and not ours.is_error("ys")[0]
    assert ours.is_fatal_error("z") and not ours.is_fatal_error("x")
    for args in [("a", "b"), ("a", None)]:
        assert ours.compute_exception_message(*args) == theirs.compute_exception_message(*args)
    for answer in ["xsno\\nway", "xn", "yi1", "x"]:
        assert ours.get_error_message(answer) == theirs.get_error_message(answer), answer


def test_get_return_value_decodes_py4j_answers() -> None:
    from py4jni.protocol import Py4JError, get_return_value
    assert get_return_value("yi42", None) == 42
    assert get_return_value("ysa\\nb", None) == "a\nb"
    assert get_return_value("ybtrue", None) is True
    assert get_return_value("yv", None) is None
    assert get_return_value("ydNaN", None) != get_return_value("ydNaN", None)
    with pytest.raises(Py4JError, match="calling o1.f. Trace:\nboom"):
        get_return_value("xsboom", None, "o1", "f")


def test_signals_connect_send_disconnect() -> None:
    from py4jni.signals import Signal
    sig, seen = Signal(), []

    def receiver(signal, sender, **params):
        seen.append((sender, params))
        return "ok"

    sender = object()
    sig.connect(receiver, sender=sender)
    sig.connect(receiver, sender=sender)  # registered once
    assert sig.send(object(), x=1) == []  # another sender: not ours
    assert sig.send(sender, x=2) == [(receiver, "ok")]
    assert seen == [(sender, {"x": 2})]
    assert sig.disconnect(receiver, sender=sender)
    assert sig.send(sender) == []


def test_finalizer_keeps_and_clears() -> None:
    import weakref

    from py4jni.finalizer import ThreadSafeFinalizer, clear_finalizers

    class Thing:
        pass

    thing = Thing()
    ThreadSafeFinalizer.add_finalizer("k", weakref.ref(thing))
    clear_finalizers()
    assert "k" in ThreadSafeFinalizer.finalizers  # alive: kept
    del thing
    clear_finalizers()
    assert "k" not in ThreadSafeFinalizer.finalizers


# Public methods of py4j's client classes that a py4jni client lacks on purpose:
# (class, name) -> reason (each one in docs/deviations.md). None today.
CLIENT_DEVIATIONS: dict[tuple[str, str], str] = {}


def public_methods(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n))}


@pytest.mark.parametrize("module, name", [("java_gateway", "GatewayClient"),
                                          ("clientserver", "JavaClient")])
def test_every_public_client_method_exists(module: str, name: str) -> None:
    """gateway._gateway_client is a py4jni Client in both transports: it has every
    public method of py4j's GatewayClient and JavaClient."""
    from py4jni import _py4jni
    theirs = getattr(importlib.import_module("py4j." + module), name)
    missing = sorted(n for n in public_methods(theirs)
                     if not hasattr(_py4jni.Client, n) and (name, n) not in CLIENT_DEVIATIONS)
    assert not missing, f"py4jni's client lacks py4j's {name}.{missing}"
    for (_, method), _reason in CLIENT_DEVIATIONS.items():
        assert method in public_methods(theirs)


def test_client_method_signatures_match_py4j() -> None:
    """The parameters py4j's client methods take are accepted by name (stub signatures,
    checked against the C type by stubtest)."""
    import inspect

    from py4j.clientserver import JavaClient
    from py4jni import _client_api
    for n in public_methods(JavaClient):
        ours = getattr(_client_api, n, None)
        if ours is None:
            continue
        theirs = list(inspect.signature(getattr(JavaClient, n)).parameters)[1:]
        assert list(inspect.signature(ours).parameters)[1:] == theirs, n


# py4j's classes whose public members py4jni's same-named classes have, with py4j's
# parameters: (module, class).
CLASSES = [("java_gateway", "JavaGateway"), ("clientserver", "ClientServer"),
           ("java_gateway", "GatewayClient"), ("clientserver", "JavaClient"),
           ("java_gateway", "CallbackServer"), ("clientserver", "PythonServer"),
           ("java_gateway", "GatewayConnection"), ("clientserver", "ClientServerConnection"),
           ("java_gateway", "JavaObject"), ("java_gateway", "JavaMember"),
           ("java_gateway", "JavaClass"), ("java_gateway", "JVMView"),
           ("java_gateway", "JavaPackage")]


def class_members(cls: type) -> set[str]:
    """Public names a py4j class defines or inherits from py4j's own classes."""
    names: set[str] = set()
    for base in cls.__mro__:
        if base.__module__.startswith("py4j."):
            names |= {n for n in vars(base) if not n.startswith("_")}
    return names


def parameters(fn: object) -> list[str] | None:
    import inspect
    try:
        return [p for p in inspect.signature(fn).parameters  # type: ignore[arg-type]
                if p not in ("self", "cls")]
    except (TypeError, ValueError):
        return None  # a C method: its stub's signature is checked by stubtest


@pytest.mark.parametrize("module, name", CLASSES)
def test_every_public_member_of_py4js_classes_exists(module: str, name: str) -> None:
    theirs = getattr(importlib.import_module("py4j." + module), name)
    ours = getattr(importlib.import_module("py4jni." + module), name)
    missing = sorted(n for n in class_members(theirs) if not hasattr(ours, n))
    assert not missing, f"py4jni's {name} lacks py4j's {missing}"
    differ = []
    for member in sorted(class_members(theirs)):
        theirs_fn, ours_fn = getattr(theirs, member), getattr(ours, member)
        if not callable(theirs_fn) or isinstance(theirs_fn, type):
            continue
        expected, got = parameters(theirs_fn), parameters(ours_fn)
        if expected is not None and got is not None and got[:len(expected)] != expected:
            differ.append((member, expected, got))
    assert not differ, f"{name}: parameters differ from py4j's: {differ}"


def test_gateway_instance_attributes_are_py4js(gateway) -> None:
    """The instance attributes py4j's JavaGateway, its client and its callback server
    set exist on py4jni's (socket mode: both on the same GatewayServer)."""
    if gateway._mode == "inproc":
        pytest.skip("py4j's client needs a socket")
    from py4j.java_gateway import CallbackServerParameters as Py4jCallbackParameters
    from py4j.java_gateway import GatewayParameters as Py4jParameters
    from py4j.java_gateway import JavaGateway as Py4jGateway
    theirs = Py4jGateway(gateway_parameters=Py4jParameters(port=gateway.gateway_parameters.port),
                         callback_server_parameters=Py4jCallbackParameters(port=0))
    gateway.start_callback_server()  # running already, or started now
    try:
        pairs = [(theirs, gateway), (theirs.get_callback_server(), gateway.get_callback_server()),
                 (theirs.jvm.java.lang.StringBuilder(), gateway.jvm.java.lang.StringBuilder())]
        for t, o in pairs:
            missing = sorted(n for n in vars(t) if not n.startswith("__") and not hasattr(o, n))
            assert not missing, f"{type(o).__name__} lacks py4j's {missing}"
        missing = sorted(n for n in vars(theirs._gateway_client)
                         if not n.startswith("__") and not hasattr(gateway._gateway_client, n))
        assert not missing, missing
    finally:
        theirs.shutdown_callback_server()
        theirs.close()
