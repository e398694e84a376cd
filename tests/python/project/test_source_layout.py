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


FRAMEWORK_MODULES = {"frameworks", "pyspark", "pyflink", "_run"}


def _package_imports(path: Path) -> set[str]:
    """The py4jni modules (first component below py4jni) a module imports, at any depth."""
    import ast
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level == 1 and mod:
                found.add(mod.split(".")[0])
            elif node.level == 1:
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif mod.startswith("py4jni."):
                found.add(mod.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names
                         if a.name.startswith("py4jni."))
    return found


def test_the_py4j_layer_imports_no_framework():
    # py4jni/frameworks/ (and its public names py4jni.pyspark / py4jni.pyflink, and the
    # switch's entry points py4jni/_run.py) sit above the py4j-compatible modules
    package = ROOT / "python-binding/py4jni"
    for path in sorted(package.glob("*.py")):
        if path.stem in FRAMEWORK_MODULES or path.stem == "__main__":
            continue
        assert not _package_imports(path) & FRAMEWORK_MODULES, path.name


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
