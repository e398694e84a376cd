"""How the launch take-over reads a ``java`` command line (py4jni/_java_command.py) and
what its program holds (py4jni/_class_path.py), without a JVM."""
from __future__ import annotations

import os
import zipfile

from py4jni import _class_path, _java_command
from py4jni._java_command import JavaCommand, NotTaken


def _java(tmp_path) -> str:
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    return str(java)


def test_class_path_options_main_class_and_arguments(tmp_path):
    java = _java(tmp_path)
    cmd = _java_command.parse([java, "-Xmx1g", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
                               "-classpath", "a.jar:lib/*", "-Dk=v", "com.x.Main", "-cp", "y"],
                              {}, str(tmp_path))
    assert isinstance(cmd, JavaCommand)
    assert cmd.main_class == "com.x.Main" and cmd.args == ["-cp", "y"]
    assert cmd.jvm_options == ["-Xmx1g", "--add-opens=java.base/java.lang=ALL-UNNAMED", "-Dk=v"]
    assert cmd.classpath == [str(tmp_path / "a.jar")]  # lib/ has no jars: nothing listed


def test_wildcards_argfiles_and_jdk_java_options(tmp_path):
    java = _java(tmp_path)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "x.jar").write_bytes(b"")
    (tmp_path / "args").write_text("--class-path lib/* # a comment\n-Dfrom=file\n")
    cmd = _java_command.parse([java, "@args", "Main"], {"JDK_JAVA_OPTIONS": "-Dfrom=env"},
                              str(tmp_path))
    assert isinstance(cmd, JavaCommand)
    assert cmd.classpath == [str(tmp_path / "lib" / "x.jar")]
    assert cmd.jvm_options == ["-Dfrom=env", "-Dfrom=file"]


def test_jar_takes_main_class_from_its_manifest(tmp_path):
    java = _java(tmp_path)
    jar = tmp_path / "app.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nMain-Class: com.x.\n App\n")
    cmd = _java_command.parse([java, "-jar", str(jar), "arg"], {}, str(tmp_path))
    assert isinstance(cmd, JavaCommand)
    assert cmd.main_class == "com.x.App" and cmd.args == ["arg"] and cmd.jar == str(jar)


def test_commands_that_run_no_program_of_a_class_path(tmp_path):
    java = _java(tmp_path)
    for argv in (["javac", "A.java"], [java, "-version"], [java, "-m", "mod/x.Main"],
                 [java, "Hello.java"], [java, "-cp", "x"]):
        assert isinstance(_java_command.parse(argv, {}, str(tmp_path)), NotTaken), argv


def _class_file(name: str, refs: list[str]) -> bytes:
    """A class file whose constant pool names `name` and `refs` (enough for the walk)."""
    import struct
    pool = b""
    entries = 1
    for n in [name, *refs]:
        raw = n.encode()
        pool += b"\x01" + struct.pack(">H", len(raw)) + raw + b"\x07" + struct.pack(">H", entries)
        entries += 2
    return b"\xca\xfe\xba\xbe\x00\x00\x00\x3d" + struct.pack(">H", entries) + pool


def test_the_walk_finds_a_shaded_gateway_server_through_the_manifest_class_path(tmp_path):
    shaded = "org/shade/py4j/GatewayServer"
    lib = tmp_path / "lib.jar"
    with zipfile.ZipFile(lib, "w") as z:
        z.writestr(shaded + ".class", _class_file(shaded, []))
        z.writestr("app/Helper.class", _class_file("app/Helper", [shaded]))
    app = tmp_path / "app.jar"
    with zipfile.ZipFile(app, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nClass-Path: lib.jar\n")
        z.writestr("app/Main.class", _class_file("app/Main", ["java/lang/Object", "app/Helper"]))
        z.writestr("app/Tool.class", _class_file("app/Tool", ["java/lang/Object"]))
    cp = _class_path.ClassPath([str(app)])
    assert _class_path.reaches_gateway_server(cp, "app.Main") == shaded
    assert _class_path.reaches_gateway_server(cp, "app.Tool") is None
    assert cp.gateway_servers() == ["org.shade.py4j.GatewayServer"]
    assert _class_path.is_gateway_server("py4j/GatewayServer")
    assert not _class_path.is_gateway_server("x/py4jx/GatewayServer")
