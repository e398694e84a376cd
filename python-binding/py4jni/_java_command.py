"""A ``java`` command line read as the ``java`` launcher reads it (JDK 11-26), for the
launch take-over (py4jni/_launch.py): the launcher's options and class path, the JVM's
options, the main class (or ``-jar``'s Main-Class) and its arguments.

``parse`` returns a ``JavaCommand``, or a ``NotTaken`` saying why the command is not
one a taken-over launch can run (not ``java``; ``-version``, ``--module``, a source
file...): those run as written.
"""
from __future__ import annotations

import os
import shlex
from typing import Mapping, NamedTuple, Sequence

#: The launcher's own options with no program to run.
_INFO_ONLY = frozenset(("-version", "--version", "-showversion", "--show-version", "-help",
                        "-h", "-?", "--help", "--help-extra", "-X", "--list-modules",
                        "--dry-run", "--validate-modules", "--print-module-resolution"))
#: Options of module launches and of the source launcher: not taken over.
_MODULE = frozenset(("-m", "--module", "-p", "--module-path", "--describe-module", "-d",
                     "--source"))
#: JVM options that take their value as the next word (given to the JVM as ``opt=value``).
_JVM_WITH_VALUE = frozenset(("--add-opens", "--add-exports", "--add-modules", "--add-reads",
                             "--limit-modules", "--patch-module", "--upgrade-module-path",
                             "--enable-native-access", "--illegal-access"))
#: Launcher options that change nothing in a JVM already made.
_IGNORED = ("-server", "-client", "-d64", "-d32", "-splash:")


class NotTaken(NamedTuple):
    """Why a command is run as written."""

    reason: str


class JavaCommand(NamedTuple):
    """A ``java`` launch, read as the launcher reads it."""

    java: str                    #: the java executable (absolute path)
    libjvm: str | None           #: that JDK's libjvm.so, when found beside it
    classpath: list[str]         #: absolute entries, wildcards expanded
    main_class: str              #: binary name
    args: list[str]              #: the program's arguments
    jvm_options: list[str]       #: as JNI_CreateJavaVM takes them (-D, -X, -XX, --add-*...)
    jar: str | None              #: ``-jar``'s file
    #: the py4j GatewayServer classes its program reaches (binary names; set by the
    #: launch take-over's rule)
    gateway_servers: list[str] = []


def _which(name: str, env: Mapping[str, str] | None, cwd: str) -> str | None:
    if os.sep in name:
        path = name if os.path.isabs(name) else os.path.join(cwd, name)
        return path if os.access(path, os.X_OK) else None
    search = (env if env is not None else os.environ).get("PATH", os.defpath)
    for d in search.split(os.pathsep):
        path = os.path.join(d or ".", name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.abspath(path)
    return None


def _libjvm(java: str) -> str | None:
    home = os.path.dirname(os.path.dirname(os.path.realpath(java)))
    for sub in ("lib/server/libjvm.so", "jre/lib/amd64/server/libjvm.so",
                "lib/client/libjvm.so"):
        path = os.path.join(home, sub)
        if os.path.isfile(path):
            return path
    return None


def _expand_classpath(value: str, cwd: str) -> list[str]:
    """The launcher's class path: relative entries against ``cwd``, ``dir/*`` as the jars
    of ``dir`` (in directory order, as the launcher lists them), empty entries as
    ``.``."""
    out: list[str] = []
    for entry in value.split(os.pathsep):
        entry = entry or "."
        path = entry if os.path.isabs(entry) else os.path.join(cwd, entry)
        if os.path.basename(path) == "*":
            folder = os.path.dirname(path)
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            out += [os.path.join(folder, n) for n in names
                    if n.lower().endswith(".jar")]
        else:
            out.append(os.path.normpath(path))
    return out


def _argfile_words(path: str) -> list[str]:
    with open(path, encoding="utf-8") as fh:
        return shlex.split(fh.read(), comments=True)


def manifest_main_class(jar: str) -> str | None:
    """``Main-Class`` of a jar's manifest, or None."""
    import zipfile
    try:
        with zipfile.ZipFile(jar) as z:
            text = z.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith(" ") and lines:
            lines[-1] += line[1:]
        else:
            lines.append(line)
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip().lower() == "main-class":
            return value.strip() or None
    return None


def parse(argv: Sequence[str], env: Mapping[str, str] | None = None,
          cwd: str | None = None) -> JavaCommand | NotTaken:
    """Reads ``argv`` (``argv[0]`` the program) as the ``java`` launcher would, with the
    launch's environment (``JDK_JAVA_OPTIONS``, ``CLASSPATH``, ``PATH``) and directory."""
    cwd = cwd or os.getcwd()
    if not argv or os.path.basename(str(argv[0])) != "java":
        return NotTaken("not a java command")
    java = _which(str(argv[0]), env, cwd)
    if java is None:
        return NotTaken(f"{argv[0]} not found")
    environ = env if env is not None else os.environ
    words = shlex.split(environ.get("JDK_JAVA_OPTIONS", "")) + [str(a) for a in argv[1:]]
    classpath: str | None = None
    options: list[str] = []
    jar = None
    main = None
    rest: list[str] = []
    argfiles = True
    i = 0
    while i < len(words):
        w = words[i]
        i += 1
        if argfiles and w.startswith("@") and not w.startswith("@@"):
            try:
                words[i:i] = _argfile_words(w[1:] if os.path.isabs(w[1:])
                                            else os.path.join(cwd, w[1:]))
            except OSError:
                return NotTaken(f"argument file {w[1:]} cannot be read")
            continue
        if w.startswith("@@"):
            w = w[1:]
        if w in ("-cp", "-classpath", "--class-path"):
            if i >= len(words):
                return NotTaken(f"{w} needs a value")
            classpath, i = words[i], i + 1
        elif w.startswith("--class-path="):
            classpath = w.split("=", 1)[1]
        elif w == "-jar":
            if i >= len(words):
                return NotTaken("-jar needs a file")
            jar = words[i] if os.path.isabs(words[i]) else os.path.join(cwd, words[i])
            rest = words[i + 1:]
            break
        elif w == "--disable-@files":
            argfiles = False
        elif w in _INFO_ONLY:
            return NotTaken(f"{w} runs no program")
        elif w in _MODULE or w.startswith(("--module=", "--module-path=", "--source=")):
            return NotTaken(f"{w.split('=')[0]}: module and source launches run as written")
        elif w in _JVM_WITH_VALUE:
            if i >= len(words):
                return NotTaken(f"{w} needs a value")
            options.append(f"{w}={words[i]}")
            i += 1
        elif w.startswith(_IGNORED):
            continue
        elif w.startswith("-"):
            options.append(w)
        else:
            main = w
            rest = words[i:]
            break
    if jar is not None:
        main = manifest_main_class(jar)
        if main is None:
            return NotTaken(f"{jar} has no Main-Class")
        entries = [os.path.normpath(jar)]
    else:
        if main is None:
            return NotTaken("no main class")
        if main.endswith(".java"):
            return NotTaken("a source-file launch runs as written")
        entries = _expand_classpath(classpath if classpath is not None
                                    else environ.get("CLASSPATH", "."), cwd)
    return JavaCommand(java=java, libjvm=_libjvm(java), classpath=entries,
                       main_class=main.replace("/", "."), args=rest,
                       jvm_options=options, jar=jar)
