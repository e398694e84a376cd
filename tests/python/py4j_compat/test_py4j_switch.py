"""The py4j switch: a program written for py4j (its source says ``py4j``) runs on
py4jni through ``python -m py4jni run`` or ``PY4JNI_AS_PY4J=1``."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT, fixtures_jar

PROGRAM = textwrap.dedent('''
    import sys
    import py4j
    from py4j.java_gateway import JavaGateway, GatewayParameters, java_import
    from py4j.protocol import Py4JJavaError
    import py4j.java_gateway

    assert py4j.java_gateway.__name__ == "py4jni.java_gateway", py4j.java_gateway.__name__
    gateway = JavaGateway()  # py4j: a GatewayServer on 25333; here: per the switch
    assert gateway.jvm.java.lang.Math.max(3, int(sys.argv[1])) == int(sys.argv[1])
    java_import(gateway.jvm, "java.util.*")
    lst = gateway.jvm.ArrayList()
    lst.add("x")
    try:
        gateway.jvm.java.lang.Integer.parseInt("nope")
    except Py4JJavaError as e:
        kind = e.java_exception.getClass().getSimpleName()
    entry = gateway.entry_point.hello("py4j") if len(sys.argv) < 3 else "-"
    print("|".join(map(str, ["mode", gateway._mode, "entry", entry, "size", lst.size(),
                             "error", kind])))
    gateway.shutdown()
''')


def env_for(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    for key in ("PY4JNI_AS_PY4J", "PY4JNI_MODE", "PY4JNI_CLASSPATH", "PY4JNI_ENTRY_POINT"):
        env.pop(key, None)
    env.update(extra)
    return env


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "py4j_program.py"
    path.write_text(PROGRAM)
    return str(path)


def test_python_m_py4jni_run_inproc(program):
    out = subprocess.run(
        [sys.executable, "-m", "py4jni", "run", "--inproc", "--classpath", fixtures_jar(),
         "--entry-point", "org.py4jni.fixtures.EntryPoint", program, "7"],
        capture_output=True, text=True, timeout=120, env=env_for())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().split("|") == [
        "mode", "inproc", "entry", "hello py4j", "size", "1", "error",
        "NumberFormatException"], out.stdout


def test_env_switch_through_the_pth_hook(program, tmp_path):
    # site processes the installed py4jni-as-py4j.pth at start-up; here the same line
    # is processed with site.addsitedir on a directory holding that file.
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    with open(os.path.join(ROOT, "python-binding", "py4jni-as-py4j.pth")) as src:
        (site_dir / "py4jni-as-py4j.pth").write_text(src.read())
    code = (f"import site, sys, runpy; site.addsitedir({str(site_dir)!r}); "
            f"sys.argv = [{program!r}, '9']; runpy.run_path({program!r}, run_name='__main__')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env_for(
                             PY4JNI_AS_PY4J="1", PY4JNI_CLASSPATH=fixtures_jar(),
                             PY4JNI_ENTRY_POINT="org.py4jni.fixtures.EntryPoint"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().split("|")[:4] == ["mode", "inproc", "entry", "hello py4j"], \
        out.stdout


def test_pth_hook_does_nothing_when_unset(tmp_path):
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    with open(os.path.join(ROOT, "python-binding", "py4jni-as-py4j.pth")) as src:
        (site_dir / "py4jni-as-py4j.pth").write_text(src.read())
    code = (f"import site, sys; site.addsitedir({str(site_dir)!r}); "
            "print('py4jni' in sys.modules, any(type(f).__name__ == '_Finder' "
            "for f in sys.meta_path))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env=env_for())
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


def test_run_socket_mode_uses_py4js_server(program):
    # --socket: the program's JavaGateway() means py4j's own behaviour (a GatewayServer,
    # which its shutdown() stops: a server of its own); the server listens on an
    # ephemeral port, so the default port is pointed at it.
    from py4jni import launch_gateway
    py4j_server, proc = launch_gateway(classpath=fixtures_jar(), die_on_exit=True,
                                       return_proc=True)
    try:
        out = _run_socket_program(program, py4j_server)
    finally:
        proc.kill()
        proc.wait()
    assert out.returncode == 0, out.stderr
    words = out.stdout.strip().split("|")
    assert words[:2] == ["mode", "socket"] and words[-2:] == ["error", "NumberFormatException"]


def _run_socket_program(program: str, py4j_server: int) -> subprocess.CompletedProcess:
    code = textwrap.dedent(f'''
        import runpy, sys
        sys.argv = ["py4jni", "run", "--socket", {program!r}, "5", "noentry"]
        import py4jni.java_gateway as jg
        jg.GatewayParameters.__init__.__defaults__ = (
            jg.DEFAULT_ADDRESS, {py4j_server}) + jg.GatewayParameters.__init__.__defaults__[2:]
        from py4jni.__main__ import main
        main(sys.argv[1:])
    ''')
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env_for())


def test_clientserver_with_socket_parameters_never_embeds(inproc_gateway):
    # socket parameters mean py4j's pinned-thread mode (test_clientserver_socket.py),
    # never a silent in-process fallback: nothing listens here, so the call fails
    from conftest import free_port
    from py4jni.clientserver import (ClientServer, JavaClient, JavaParameters,
                                     PythonParameters)
    from py4jni.protocol import Py4JNetworkError
    cs = ClientServer(JavaParameters(port=free_port(), auth_token="secret"),
                      PythonParameters(port=free_port(), eager_load=False))
    try:
        assert isinstance(cs._gateway_client, JavaClient)
        with pytest.raises(Py4JNetworkError):
            cs.jvm.java.lang.System.currentTimeMillis()
    finally:
        cs.shutdown()
    assert not isinstance(inproc_gateway._gateway_client, JavaClient)


def test_launch_gateway_under_the_switch_embeds(tmp_path):
    # JavaGateway.launch_gateway: no child java; the gateway is in-process, its
    # java_process the embedded server, which (die_on_exit) ends when its stdin closes
    script = tmp_path / "launcher_program.py"
    script.write_text(textwrap.dedent(f'''
        import os
        from py4j.java_gateway import JavaGateway
        gw = JavaGateway.launch_gateway(classpath={fixtures_jar()!r}, die_on_exit=True)
        proc = gw.java_process
        print(gw._mode, type(proc).__name__, proc.pid, proc.poll(),
              gw.jvm.org.py4jni.fixtures.Strings.echo("ok"),
              gw.jvm.java.lang.ProcessHandle.current().pid() == os.getpid())
        gw.shutdown()
        print("after-shutdown", proc.poll())
        proc.stdin.close()
        print("after-stdin", proc.wait(timeout=5))
    '''))
    out = subprocess.run([sys.executable, "-m", "py4jni", "run", str(script)],
                         capture_output=True, text=True, timeout=120, env=env_for())
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["inproc", "EmbeddedGatewayServer", "None", "None", "ok",
                                  "True", "after-shutdown", "None", "after-stdin", "0"]


def test_module_launch_gateway_under_the_switch_serves_its_port_in_process(tmp_path):
    # py4j's launch_gateway(): the port it returns is served by the embedded JVM (a
    # gateway to it is in-process, with the token it returned), until the process it
    # returned is killed; nothing else listens on that port meanwhile
    script = tmp_path / "launcher_program.py"
    script.write_text(textwrap.dedent(f'''
        import os, socket
        from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway
        from py4j.protocol import Py4JAuthenticationError, Py4JError, Py4JNetworkError
        port, token, proc = launch_gateway(classpath={fixtures_jar()!r}, enable_auth=True,
                                           return_proc=True)
        gw = JavaGateway(gateway_parameters=GatewayParameters(port=port, auth_token=token))
        here = gw.jvm.java.lang.ProcessHandle.current().pid() == os.getpid()
        print(gw._mode, here, gw.jvm.org.py4jni.fixtures.Strings.echo("ok"), len(token) > 20)
        try:
            JavaGateway(gateway_parameters=GatewayParameters(port=port, auth_token="wrong"))
        except Py4JAuthenticationError as e:
            print("refused", e)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            print("listening")
        except OSError:
            print("not-listening")
        proc.kill()
        print("killed", proc.poll(), proc.wait(timeout=1))
        try:
            gw.jvm.java.lang.System.currentTimeMillis()
        except Py4JError as e:
            print("gateway-closed")
        try:
            JavaGateway(gateway_parameters=GatewayParameters(port=port, auth_token=token,
                                                             eager_load=True))
        except Py4JNetworkError as e:
            print("unserved", str(e) == f"An error occurred while trying to connect to the "
                                        f"Java server (127.0.0.1:{{port}})")
    '''))
    out = subprocess.run([sys.executable, "-m", "py4jni", "run", str(script)],
                         capture_output=True, text=True, timeout=120, env=env_for())
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "inproc True ok True", "refused Failed to authenticate with gateway server.",
        "not-listening", "killed -9 -9", "gateway-closed", "unserved True"], out.stdout


def test_python_m_py4jni_help_is_plain_text_on_stdout():
    r = subprocess.run([sys.executable, "-m", "py4jni", "--help"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.startswith("usage: python -m py4jni run ") and "``" not in r.stdout
    bad = subprocess.run([sys.executable, "-m", "py4jni", "walk"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("usage: python -m py4jni run ")
    assert bad.stdout == ""
