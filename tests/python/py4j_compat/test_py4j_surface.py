"""py4j's public surface: every public module-level name of py4j's modules exists in the
same-named py4jni module, and every public callable (function, class constructor,
method) takes py4j's parameters: names, order, kinds and defaults by
``inspect.signature`` (tests/python/py4j_compat/py4j_signatures.py), for py4j 0.10.9.9 (this venv)
and 0.10.9.7 (PyFlink's venv, in a child process), and on live objects of both
transports. Deliberate differences are the tables below, each a row of
docs/deviations.md."""
from __future__ import annotations

import importlib
import os
import types

import pytest

from py4j_signatures import MODULES, differences, parameters, show

# Names py4j exposes only as side effects of its own imports of Python 2/3 helpers
# that py4jni does not import in that module: (module, name) -> reason.
DEVIATIONS: dict[tuple[str, str], str] = {
    (module, feature): "a __future__ feature, not an API"
    for module in MODULES if module not in ("signals", "version")
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


# Where py4jni's parameters differ from py4j's on purpose: py4j's parameters, unchanged,
# then py4jni's own, each optional (a default, or *args / **kwargs), so that every py4j
# call means the same. "module.qualname" -> (py4jni's extra parameters, reason); each one
# is named in docs/deviations.md's table.
_INPROC = ("mode", "classpath", "jvm_options", "libjvm", "check_jni", "keep_signals",
           "entry_point", "cds", "interrupt_java")
EXTENSIONS: dict[str, tuple[tuple[str, ...], str]] = {
    **{f"{m}.JavaGateway": (_INPROC, "py4jni's in-process options, keyword-only")
       for m in ("java_gateway", "clientserver")},
    "clientserver.ClientServer": (("inproc_options",), "the same options, for ClientServer"),
    **{f"{m}.launch_gateway": (("gateway_kwargs",), "options of the gateway it returns")
       for m in ("java_gateway.JavaGateway", "clientserver.JavaGateway",
                 "clientserver.ClientServer")},
    **{f"{m}.GatewayClient": (("read_timeout", "auth_token"),
                              "keyword-only: a socket client's settings without "
                              "GatewayParameters") for m in ("java_gateway", "clientserver")},
    **{f"{m}.GatewayClient.garbage_collect_object": (("enqueue",),
                                                     "one client type is GatewayClient and "
                                                     "JavaClient, whose method has enqueue")
       for m in ("java_gateway", "clientserver")},
    "java_collections.JavaList.index": (("start", "stop"), "Python list's index(value, start, "
                                        "stop)"),
    "java_collections.JavaList.sort": (("key", "reverse"), "Python list's sort(key, reverse)"),
}


def undeclared(found: dict[str, dict]) -> list[str]:
    """The differences of py4j_signatures.differences() that EXTENSIONS does not allow,
    as readable lines."""
    wrong = []
    for name, diff in sorted(found.items()):
        expected, got = diff["py4j"], diff["py4jni"]
        extra = EXTENSIONS.get(name, ((), ""))[0]
        allowed = (got is not None and name in EXTENSIONS and got[:len(expected)] == expected
                   and tuple(n for n, _, _ in got[len(expected):]) == extra
                   and all(d is not None or k in ("VAR_POSITIONAL", "VAR_KEYWORD")
                           for _, k, d in got[len(expected):]))
        if not allowed:
            what = "missing" if diff.get("missing") else show(got)
            wrong.append(f"{name}: py4j {show(expected)}, py4jni {what}")
    return wrong


def test_every_public_callable_takes_py4js_parameters() -> None:
    import py4j.version
    assert py4j.version.__version__ == "0.10.9.9"  # this venv's py4j (tests/requirements.txt)
    found = differences()
    assert undeclared(found) == []
    stale = sorted(set(EXTENSIONS) - set(found))
    assert not stale, f"EXTENSIONS rows that are no difference: {stale}"


def test_every_public_callable_takes_py4j_0_10_9_7s_parameters() -> None:
    """py4j 0.10.9.7 (PyFlink's pin), in PyFlink's venv: a child process of that
    interpreter importing this build."""
    import json
    import subprocess

    from conftest import pyflink_python
    python = pyflink_python()
    if python is None:
        pytest.skip("PyFlink's venv is not there (tests/setup_env.sh makes .venv-pyflink "
                    "unless P4J_NO_PYFLINK=1)")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "py4j_signatures.py")
    out = subprocess.run([python, script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["version"] == "0.10.9.7"
    assert undeclared(answer["differences"]) == []


def test_extensions_are_rows_of_the_deviation_table() -> None:
    from conftest import ROOT
    with open(f"{ROOT}/docs/deviations.md") as f:
        table = f.read().split("## The table", 1)[1]
    for name in EXTENSIONS:
        qualname = name.split(".", 1)[1]
        assert f"`{qualname}(" in table, f"{qualname} is missing from docs/deviations.md"


# py4j's classes of the objects a live gateway hands out: their bound methods must take
# py4j's parameters in both transports (instances may differ from their class).
def _live_objects(gateway) -> list[tuple[str, str, object]]:
    jvm = gateway.jvm
    lst = jvm.java.util.ArrayList()
    sb = jvm.java.lang.StringBuilder()
    client_class = "GatewayClient"
    objects = [("java_gateway", "JavaGateway", gateway),
               ("java_gateway", client_class, gateway._gateway_client),
               ("java_gateway", "JVMView", jvm), ("java_gateway", "JavaPackage", jvm.java),
               ("java_gateway", "JVMView", gateway.new_jvm_view("surface")),
               ("java_gateway", "JavaClass", jvm.java.util.ArrayList),
               ("java_gateway", "JavaObject", sb), ("java_gateway", "JavaMember", sb.append),
               ("java_collections", "JavaList", lst),
               ("java_collections", "JavaIterator", lst.iterator()),
               ("java_collections", "JavaMap", jvm.java.util.HashMap()),
               ("java_collections", "JavaSet", jvm.java.util.HashSet()),
               ("java_collections", "JavaArray", gateway.new_array(jvm.int, 2))]
    server = gateway.get_callback_server()
    if server is not None:
        objects.append(("java_gateway", "CallbackServer", server))
    return objects


def test_live_objects_take_py4js_parameters(gateway) -> None:
    from py4j_signatures import public_callables
    wrong = []
    for module, cls, obj in _live_objects(gateway):
        theirs = importlib.import_module("py4j." + module)
        for qualname, (fn, method) in public_callables(theirs).items():
            if not qualname.startswith(cls + ".") or not method:
                continue
            member = qualname.split(".", 1)[1]
            got = parameters(getattr(obj, member, None), False)
            expected = parameters(fn, True)
            if got != expected:
                wrong.append({f"{module}.{qualname}": {"py4j": expected, "py4jni": got}})
    flat = {k: v for d in wrong for k, v in d.items()}
    assert undeclared(flat) == []


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
