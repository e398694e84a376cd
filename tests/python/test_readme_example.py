"""The README's first example runs as a script through the venv's python and prints what
its comments say; in the repository's own venv (.venv, as after either README command)
it runs without PYTHONPATH too."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _first_example() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## First example\n", 1)[1]
    m = re.search(r"```python\n(.*?)```", section, re.S)
    assert m, "no python block under '## First example'"
    return m.group(1)


def _expected_lines(code: str) -> list[str]:
    """The comment of each print(...) line: the line it prints ("e.g. ..." for a value
    that differs between runs)."""
    out = []
    for line in code.splitlines():
        if line.startswith("print("):
            assert "#" in line, f"a print of the example without its output: {line}"
            out.append(line.split("#", 1)[1].strip())
    return out


def _check_output(code: str, stdout: str) -> None:
    got = stdout.splitlines()
    want = _expected_lines(code)
    assert want, "the example prints nothing when run as a script"
    assert len(got) == len(want), stdout
    for g, w in zip(got, want):
        if w.startswith("e.g. "):
            assert re.fullmatch(r"\d+", g) and len(g) == len(w[5:]), (g, w)
        else:
            assert g == w, (g, w)


def test_readme_example_prints_its_results(tmp_path: Path) -> None:
    code = _first_example()
    script = tmp_path / "example.py"
    script.write_text(code)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    _check_output(code, r.stdout)


def test_readme_example_runs_with_the_repository_venv_alone(tmp_path: Path) -> None:
    venv_python = ROOT / ".venv" / "bin" / "python"
    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip(f"the tests run in {sys.prefix}, not the repository's .venv "
                    "(P4J_VENV_DIR elsewhere): tests/setup_env.sh leaves such a venv as it is")
    code = _first_example()
    script = tmp_path / "example.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([str(venv_python), str(script)], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    _check_output(code, r.stdout)
