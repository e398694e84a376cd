"""Source-level rules of the layout: C and Java agree on shared numbers, and
tests/ci/check_comment_paths.py catches a comment naming a missing file."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _java_constants(text: str, prefix: str) -> dict[str, int]:
    return {m[0]: int(m[1]) for m in
            re.findall(rf"static final int {prefix}(\w+) = (\d+);", text)}


def _c_enum(text: str, prefix: str) -> dict[str, int]:
    return {m[0]: int(m[1]) for m in re.findall(rf"\b{prefix}(\w+) = (\d+),", text)}


def test_static_member_kinds_agree_between_c_and_java():
    java = _java_constants((ROOT / "java/org/py4jni/Bridge.java").read_text(), "MEMBER_")
    c = _c_enum((ROOT / "bridge/inproc/inproc_internal.h").read_text(), "P4JJ_STATIC_")
    assert java == c
    assert set(c) == {"NONE", "FIELD", "METHOD", "CLASS"}


# What each C folder may include (docs/architecture.md, "The layers"): the seam below all,
# jni/ on the seam, each transport on the seam (the in-process one on jni/ too), the
# extension on all of them; the extension's files outside its transports' folders name
# no transport's header but transport.c.
C_FOLDER_MAY_INCLUDE = {
    "bridge": {"bridge"},
    "jni": {"jni", "bridge"},
    "bridge/socket": {"bridge/socket", "bridge"},
    "bridge/inproc": {"bridge/inproc", "jni", "bridge"},
    "python-binding/src": {"python-binding/src", "jni", "bridge"},
    "python-binding/src/inproc": {"python-binding/src", "bridge/inproc", "jni", "bridge"},
    "python-binding/src/socket": {"python-binding/src", "bridge/socket", "jni", "bridge"},
}


def _c_folder(rel: str) -> str:
    """The folder of C_FOLDER_MAY_INCLUDE that holds `rel` (its include/ counted in)."""
    parts = Path(rel).parent.parts
    if parts and parts[-1] == "include":
        parts = parts[:-1]
    return "/".join(parts)


def test_c_includes_point_down():
    files = subprocess.run(["git", "ls-files", "bridge", "jni", "python-binding/src"],
                           cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    headers = {Path(f).name: f for f in files if f.endswith(".h")}
    assert len(headers) == sum(f.endswith(".h") for f in files), "a header name twice"
    wrong = []
    for rel in files:
        if not rel.endswith((".c", ".h")):
            continue
        folder = _c_folder(rel)
        allowed = set(C_FOLDER_MAY_INCLUDE[folder])
        if rel == "python-binding/src/transport.c":
            allowed |= {"bridge/inproc", "bridge/socket"}
        for name in re.findall(r'^#include "([^"]+)"', (ROOT / rel).read_text(), re.M):
            target = headers.get(name)
            if target and _c_folder(target) not in allowed:
                wrong.append(f"{rel} includes {target}")
    assert wrong == []


def _checker():
    spec = importlib.util.spec_from_file_location(
        "check_comment_paths", ROOT / "tests/ci/check_comment_paths.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_comment_path_check_flags_a_missing_file(tmp_path, capfd):
    here, gone, missing = "jni/" + "a.c", "jni/" + "gone.c", "py4jni/" + "missing.py"
    (tmp_path / "jni").mkdir()
    (tmp_path / here).write_text(f"/* see {here} and {gone} */\nint x;\n")
    (tmp_path / "b.py").write_text(f'"""Uses {here}."""\n# and {missing}\n')
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    assert _checker().main(tmp_path) == 1
    out = capfd.readouterr().out
    assert f"{here}: {gone}" in out and f"b.py: {missing}" in out
    assert f"{here}: {here}" not in out


def test_comment_paths_of_this_repository_exist():
    assert _checker().main(ROOT) == 0


# The py4jni package's layers, from the ground up (docs/architecture.md, "The Python
# package"): a module imports modules of its own layer or below, never above, counting
# the imports inside functions. A subpackage's modules are named with their package.
PY_LAYERS = (
    ("extension", {"_py4jni"}),
    ("foundations", {"compat", "version", "protocol", "signals", "finalizer", "_base",
                     "_hooks", "_switch", "_cds", "_class_path", "_java_command",
                     "_os_signals"}),
    ("transports", {"_transports", "inproc_mode", "inproc_mode.transport",
                    "inproc_mode.callbacks", "socket_mode", "socket_mode.transport",
                    "socket_mode.callbacks"}),
    ("py4j's modules", {"java_collections", "launcher", "java_gateway", "clientserver",
                        "_consumers", "_client_api", ""}),
    ("programs and frameworks", {"_launch", "_run", "__main__", "_as_py4j", "pyspark",
                                 "pyflink", "frameworks", "frameworks.adapter",
                                 "frameworks.pyspark", "frameworks.pyflink",
                                 "frameworks.spark_dataplane", "frameworks.spark_env"}),
)


def _package_modules() -> dict[str, Path]:
    """Every module of the py4jni package by its name below py4jni ("" the package)."""
    package = ROOT / "python-binding/py4jni"
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _package_imports(name: str, path: Path, known: set[str]) -> list[tuple[str, int, bool]]:
    """(module imported, line, inside a function) for each py4jni module `name` imports;
    imports under ``if TYPE_CHECKING:`` are for type checkers and are left out."""
    import ast
    here = name.split(".") if name else []
    package = here if path.name == "__init__.py" else here[:-1]
    found: list[tuple[str, int, bool]] = []

    def target(base: list[str], names: list[str]) -> list[str]:
        whole = ".".join(base)
        return [".".join(base + [n]) if ".".join(base + [n]) in known else whole
                for n in names]

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            names = ([a.name for a in child.names]
                     if isinstance(child, (ast.Import, ast.ImportFrom)) else [])
            if isinstance(child, ast.ImportFrom) and child.level:
                base = package[:len(package) - (child.level - 1)]
                base += child.module.split(".") if child.module else []
                targets = target(base, names)
            elif isinstance(child, ast.ImportFrom) and (child.module or "").startswith("py4jni"):
                targets = target(child.module.split(".")[1:], names)
            elif isinstance(child, ast.Import):
                targets = [".".join(n.split(".")[1:]) for n in names
                           if n == "py4jni" or n.startswith("py4jni.")]
            else:
                targets = []
            found.extend((t, child.lineno, inner) for t in targets if t != name)
            visit(child, inner)

    visit(ast.parse(path.read_text()), False)
    return found


def test_every_package_module_has_a_layer():
    layered = set().union(*(names for _, names in PY_LAYERS))
    assert set(_package_modules()) | {"_py4jni"} == layered


def _layer_problems(modules: dict[str, Path]) -> list[str]:
    """What breaks the package's rules: an import of a higher layer; an import inside a
    function whose comment does not say "deferred" (on its line, or on a comment or
    import line of its group just above); a circle of imports."""
    layer = {m: i for i, (_, names) in enumerate(PY_LAYERS) for m in names}
    edges: dict[str, set[str]] = {m: set() for m in modules}
    problems = []
    for name, path in modules.items():
        lines = path.read_text().splitlines()
        for target, line, in_function in _package_imports(name, path, set(modules) | {"_py4jni"}):
            edges[name].add(target)
            if layer[target] > layer[name]:
                problems.append(f"py4jni.{name}:{line} imports py4jni.{target} "
                                f"({PY_LAYERS[layer[target]][0]}, above "
                                f"{PY_LAYERS[layer[name]][0]})")
            # the import's line, or the comments and imports of its group just above it
            group, at = [lines[line - 1]], line - 2
            while at >= 0 and lines[at].strip().startswith(("#", "from ", "import ")):
                group.append(lines[at])
                at -= 1
            if in_function and not any("deferred" in text for text in group):
                problems.append(f"py4jni.{name}:{line} defers an import without saying why")
    placed: set[str] = {"_py4jni"}  # every module placed after all that it imports
    while len(placed) < len(modules) + 1:
        ready = {m for m in modules if m not in placed and edges[m] <= placed}
        if not ready:
            problems.append(f"a circle of imports: no order for {sorted(set(modules) - placed)}")
            break
        placed |= ready
    return problems


def test_package_imports_point_down_and_deferred_ones_say_why():
    # One way, counting imports inside functions; an import inside a function is for
    # start-up time (a module loaded only when needed), and its comment says so.
    assert _layer_problems(_package_modules()) == []


def test_the_layer_check_sees_upward_unexplained_and_circular_imports(tmp_path):
    (tmp_path / "socket_mode").mkdir()
    fake = {"_base": "from . import protocol\ndef f():\n    from . import java_gateway\n",
            "protocol": "import py4jni._base\n",
            "java_gateway": "from . import _base\n",
            "socket_mode.callbacks": ("from .. import _base\ndef f():\n"
                                      "    # deferred: socket mode only\n"
                                      "    from ..protocol import Py4JError\n")}
    modules = {}
    for name, text in fake.items():
        modules[name] = tmp_path / (name.replace(".", "/") + ".py")
        modules[name].write_text(text)
    assert _layer_problems(modules) == [
        "py4jni._base:3 imports py4jni.java_gateway (py4j's modules, above foundations)",
        "py4jni._base:3 defers an import without saying why",
        "a circle of imports: no order for ['_base', 'java_gateway', 'protocol', 'socket_mode."
        "callbacks']"]



def test_importing_the_py4j_modules_and_the_switch_loads_no_adapter():
    code = ("import sys, py4jni, py4jni.clientserver, py4jni.java_gateway, py4jni._switch\n"
            "print(sorted(m for m in sys.modules if m.startswith('py4jni.frameworks') or "
            "m in ('py4jni.pyspark', 'py4jni.pyflink', 'py4jni._run')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_public_adapter_names_are_the_adapter_modules():
    # py4jni.pyspark / py4jni.pyflink: one module, two names (monkeypatching either works)
    import py4jni.frameworks.pyflink
    import py4jni.frameworks.pyspark
    import py4jni.pyflink
    import py4jni.pyspark
    from py4jni import frameworks
    assert py4jni.pyspark is py4jni.frameworks.pyspark
    assert py4jni.pyflink is py4jni.frameworks.pyflink
    assert frameworks.adapter_module("pyspark") is py4jni.pyspark
    assert frameworks.adapter_module("pyflink") is py4jni.pyflink
    assert frameworks.adapter_module("numpy") is None


# A reference to a ticket number, or to a brief kept outside the repository, means
# nothing to a reader of the sources: comments say why. The committed benchmark reports are records of their runs and are left as run.
_TICKET = re.compile(r"\bissues?\s+#?\d|\bsemantics page\b", re.I)


def test_no_source_line_cites_a_ticket():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    found = []
    for rel in files:
        if rel.startswith("perf/results/"):
            continue
        try:
            text = (ROOT / rel).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        found += [f"{rel}:{n}: {line.strip()}" for n, line in
                  enumerate(text.splitlines(), 1) if _TICKET.search(line)]
    assert not found, "\n".join(found)
