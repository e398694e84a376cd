#!/usr/bin/env python3
"""Checks that every repository file path named in a comment exists.

Scans the comments of the tracked C, Java, Python, shell and CMake files (C and Java
block and line comments; Python, shell and CMake ``#`` comments and Python docstrings),
and the whole text of the documentation pages (README.md, docs/, perf/README.md), for
paths such as ``bridge/inproc/inproc.c`` or ``py4jni/inproc_mode/callbacks.py`` and
reports those that name no file or folder. A path resolves against the repository root,
the commenting file's folder, or python-binding/ (``py4jni/java_gateway.py``,
``src/module.c``). Exit status 1 when any path is missing. Run by tests/run_all.sh."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A path: one or more folders, then a file name with a source extension.
PATH_RE = re.compile(r"(?<![\w./$-])((?:[\w.-]+/)+[\w.-]+\.(?:c|h|py|java|sh|cmake|md|toml|txt))\b")
C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
HASH_COMMENT = re.compile(r"#[^\n]*")
DOCSTRING = re.compile(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', re.S)
KINDS = {".c": "c", ".h": "c", ".java": "c", ".py": "py", ".sh": "hash", ".cmake": "hash",
         ".txt": "hash"}


def is_doc_page(rel: str) -> bool:
    """True for the Markdown pages written for readers (not the generated reports)."""
    return rel in ("README.md", "perf/README.md") or (rel.startswith("docs/")
                                                      and rel.endswith(".md"))


def comments(path: Path, text: str, rel: str = "") -> list[str]:
    """The comment text of a file, by its kind (all of a documentation page's text)."""
    if is_doc_page(rel):
        return [text]
    kind = KINDS.get(path.suffix)
    if path.name == "CMakeLists.txt":
        kind = "hash"
    elif path.suffix == ".txt":
        return []
    if kind == "c":
        return C_COMMENT.findall(text)
    if kind == "py":
        return HASH_COMMENT.findall(text) + [a or b for a, b in DOCSTRING.findall(text)]
    if kind == "hash":
        return HASH_COMMENT.findall(text)
    return []


def exists(root: Path, name: str, where: Path) -> bool:
    """True when `name` resolves to a file or folder of the repository at `root`."""
    name = name.rstrip(".")
    for base in (root, where, root / "python-binding"):
        if (base / name).exists():
            return True
    return False


def main(root: Path = ROOT) -> int:
    """Checks the repository at `root`; returns the exit status."""
    files = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True,
                           check=True).stdout.split()
    missing = []
    for rel in files:
        path = root / rel
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for comment in comments(path, text, rel):
            for name in PATH_RE.findall(comment):
                if "://" in comment and ("//" + name) in comment:
                    continue  # part of a URL
                if not exists(root, name, path.parent):
                    missing.append(f"{rel}: {name}")
    for line in sorted(set(missing)):
        print(f"comment names a missing path: {line}")
    print(f"check_comment_paths: {len(set(missing))} missing path(s) in {len(files)} files")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT))
