"""What a ``java`` command's program holds, read from its class path before any JVM
exists (py4jni/_launch.py decides from it): whether a py4j GatewayServer class (py4j's
own ``py4j/GatewayServer`` or a shaded copy such as Flink's
``org/apache/flink/api/python/shaded/py4j/GatewayServer``) is on the class path and
reachable from the main class's code.

The class path is read as the JVM's class loader reads it: directories and jars in
order, a jar's manifest ``Class-Path`` after it. A jar's names come from its zip
central directory (read directly: a few milliseconds for thousands of entries); a class
file is read only when the walk reaches it. The walk follows the class references of
each class file's constant pool (``CONSTANT_Class``: superclasses, interfaces, every
class a method uses or names), breadth first from the main class, over at most
``WALK_LIMIT`` classes of the class path (JDK classes are not on it and end a branch).
"""
from __future__ import annotations

import os
import re
import struct
import zlib
from typing import Iterable
from urllib.parse import unquote

#: Class files the walk reads at most (reached first: the main class's own references).
WALK_LIMIT = 4000
_GATEWAY_SERVER = re.compile(rb"(?:^|/)py4j/GatewayServer\.class$")


def is_gateway_server(internal_name: str) -> bool:
    """True for py4j's GatewayServer class, shaded or not (an internal name)."""
    return internal_name == "py4j/GatewayServer" or internal_name.endswith("/py4j/GatewayServer")


class _Jar:
    """A jar's central directory: entry name -> the offset of its central header."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.entries: dict[bytes, int] = {}
        self.manifest_class_path: list[str] = []
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - 65557))
            tail = fh.read()
            at = tail.rfind(b"PK\x05\x06")
            if at < 0:
                raise OSError(f"{path}: not a zip file")
            count, cd_size, cd_offset = struct.unpack("<HII", tail[at + 10:at + 20])
            if count == 0xFFFF or cd_offset == 0xFFFFFFFF:
                raise OSError(f"{path}: a zip64 jar (not read)")
            fh.seek(cd_offset)
            self.cd = cd = fh.read(cd_size)
        p = 0
        entries = self.entries
        unpack = struct.unpack_from
        for _ in range(count):
            nl, el, cl = unpack("<HHH", cd, p + 28)
            entries[cd[p + 46:p + 46 + nl]] = p
            p += 46 + nl + el + cl
        manifest = self.read(b"META-INF/MANIFEST.MF")
        if manifest:
            self.manifest_class_path = _manifest_class_path(manifest, path)

    def read(self, name: bytes) -> bytes | None:
        """The entry's bytes (stored or deflated), or None."""
        at = self.entries.get(name)
        if at is None:
            return None
        method, = struct.unpack_from("<H", self.cd, at + 10)
        csize, = struct.unpack_from("<I", self.cd, at + 20)
        offset, = struct.unpack_from("<I", self.cd, at + 42)
        with open(self.path, "rb") as fh:
            fh.seek(offset)
            header = fh.read(30)
            nl, el = struct.unpack("<HH", header[26:30])
            fh.seek(offset + 30 + nl + el)
            data = fh.read(csize)
        if method == 0:
            return data
        if method == 8:
            return zlib.decompress(data, -15)
        return None


def _manifest_class_path(manifest: bytes, jar: str) -> list[str]:
    lines: list[str] = []
    for line in manifest.decode("utf-8", "replace").splitlines():
        if line.startswith(" ") and lines:
            lines[-1] += line[1:]
        else:
            lines.append(line)
    base = os.path.dirname(jar)
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip().lower() == "class-path":
            return [os.path.normpath(os.path.join(base, unquote(u)))
                    for u in value.split() if not u.startswith(("http:", "https:"))]
    return []


class ClassPath:
    """A class path as the system class loader reads it (manifest Class-Path included)."""

    def __init__(self, entries: Iterable[str]) -> None:
        self.dirs_and_jars: list[str | _Jar] = []
        seen: set[str] = set()
        pending = list(entries)
        pending.reverse()
        while pending:
            entry = pending.pop()
            if entry in seen:
                continue
            seen.add(entry)
            if os.path.isdir(entry):
                self.dirs_and_jars.append(entry)
            elif os.path.isfile(entry):
                try:
                    jar = _Jar(entry)
                except OSError:
                    continue
                self.dirs_and_jars.append(jar)
                pending.extend(reversed(jar.manifest_class_path))

    def class_file(self, internal_name: str) -> bytes | None:
        """The class file of the first entry that has it, or None."""
        name = internal_name + ".class"
        raw = name.encode()
        for entry in self.dirs_and_jars:
            if isinstance(entry, str):
                path = os.path.join(entry, name)
                if os.path.isfile(path):
                    with open(path, "rb") as fh:
                        return fh.read()
            elif raw in entry.entries:
                return entry.read(raw)
        return None

    def gateway_servers(self) -> list[str]:
        """Binary names of the py4j GatewayServer classes on the class path."""
        found: list[str] = []
        for entry in self.dirs_and_jars:
            if isinstance(entry, str):
                for root, _dirs, files in os.walk(entry):
                    if "GatewayServer.class" in files and os.path.basename(root) == "py4j":
                        rel = os.path.relpath(os.path.join(root, "GatewayServer"), entry)
                        found.append(rel.replace(os.sep, "."))
            else:
                found += [n[:-6].decode().replace("/", ".") for n in entry.entries
                          if _GATEWAY_SERVER.search(n)]
        return list(dict.fromkeys(found))


def class_references(class_file: bytes) -> list[str]:
    """The internal names of the classes a class file's constant pool names (array
    types as their element class)."""
    count, = struct.unpack_from(">H", class_file, 8)
    utf8: dict[int, bytes] = {}
    classes: list[int] = []
    p = 10
    i = 1
    unpack = struct.unpack_from
    while i < count:
        tag = class_file[p]
        if tag == 1:
            n, = unpack(">H", class_file, p + 1)
            utf8[i] = class_file[p + 3:p + 3 + n]
            p += 3 + n
        elif tag == 7:
            classes.append(unpack(">H", class_file, p + 1)[0])
            p += 3
        elif tag in (5, 6):
            p += 9
            i += 1
        elif tag in (3, 4, 9, 10, 11, 12, 17, 18):
            p += 5
        elif tag in (8, 16, 19, 20):
            p += 3
        elif tag == 15:
            p += 4
        else:
            raise ValueError(f"constant pool tag {tag}")
        i += 1
    names = []
    for index in classes:
        name = utf8.get(index, b"").decode("utf-8", "replace")
        if name.startswith("["):
            name = name.lstrip("[")
            if not name.startswith("L"):
                continue
            name = name[1:-1]
        names.append(name)
    return names


def reaches_gateway_server(cp: ClassPath, main_class: str,
                           limit: int = WALK_LIMIT) -> str | None:
    """The internal name of a py4j GatewayServer class of the class path that the main
    class's code reaches (breadth first, at most ``limit`` class files), or None."""
    start = main_class.replace(".", "/")
    queue = [start]
    seen = {start}
    read = 0
    while queue and read < limit:
        name = queue.pop(0)
        data = cp.class_file(name)
        if data is None:
            continue
        read += 1
        if is_gateway_server(name):
            return name
        try:
            refs = class_references(data)
        except (ValueError, struct.error, IndexError):
            continue
        for ref in refs:
            if ref not in seen and not ref.startswith(("java/", "javax/", "jdk/", "sun/")):
                seen.add(ref)
                queue.append(ref)
    return None
