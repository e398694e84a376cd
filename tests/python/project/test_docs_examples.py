"""The documentation's code: every ``python`` block of README.md and docs/ runs as a
script in a fresh process against the embedded JVM and prints what its comments say, and
the pages build strictly (a broken link, heading anchor or file reference fails).

A block that cannot run on its own is marked on the line before it with
``<!-- example: not run (reason) -->``; it is compiled, then skipped with that reason.
A ``print(...)`` line with a comment must print the comment's text; ``# e.g. 1796150400000``
stands for any value of that shape (digits for digits)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
NOT_RUN = re.compile(r"<!-- example: not run \((.+)\) -->")


@dataclass
class Example:
    page: str    # path relative to the repository root
    line: int    # line of the opening fence
    code: str
    not_run: str | None  # the reason, for a block marked as not runnable


def pages() -> list[Path]:
    """README.md and every page of docs/."""
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("**/*.md"))


def examples_of(path: Path, rel: str) -> list[Example]:
    """The ``python`` fenced blocks of a Markdown file, with their not-run markers."""
    lines = path.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            start = i
            body = []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            prev = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
            m = NOT_RUN.fullmatch(prev.strip())
            found.append(Example(rel, start + 1, "\n".join(body) + "\n",
                                 m.group(1) if m else None))
        i += 1
    return found


def all_examples() -> list[Example]:
    return [e for p in pages() for e in examples_of(p, str(p.relative_to(ROOT)))]


def expected_lines(code: str) -> list[str]:
    """The comment of each top-level print(...) line: the line it prints."""
    return [line.split("#", 1)[1].strip() for line in code.splitlines()
            if line.startswith("print(") and "#" in line]


def check_output(code: str, stdout: str) -> None:
    """Fails unless ``stdout`` is what the print comments of ``code`` say."""
    want = expected_lines(code)
    got = stdout.splitlines()
    if not want:
        return
    assert len(got) == len(want), f"printed {got}, the comments say {want}"
    for g, w in zip(got, want):
        if w.startswith("e.g. "):
            shape = re.sub(r"\d", r"\\d", re.escape(w[5:]))
            assert re.fullmatch(shape, g), f"{g!r} is not of the shape of {w[5:]!r}"
        else:
            assert g == w, f"printed {g!r}, the comment says {w!r}"


def run_example(code: str, cwd: Path, python: str = sys.executable,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    script = cwd / "example.py"
    script.write_text(code)
    return subprocess.run([python, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=env)


EXAMPLES = all_examples()


@pytest.mark.parametrize("ex", EXAMPLES, ids=[f"{e.page}:{e.line}" for e in EXAMPLES])
def test_example_runs_and_prints_what_it_says(ex: Example, tmp_path: Path) -> None:
    compile(ex.code, f"{ex.page}:{ex.line}", "exec")
    if ex.not_run:
        pytest.skip(f"documentation example marked not run: {ex.not_run}")
    r = run_example(ex.code, tmp_path)
    assert r.returncode == 0, f"{ex.page}:{ex.line} exited {r.returncode}\n{r.stdout}{r.stderr}"
    check_output(ex.code, r.stdout)


def test_the_readme_has_a_first_example_that_runs() -> None:
    first = [e for e in EXAMPLES if e.page == "README.md"]
    assert first and not first[0].not_run and expected_lines(first[0].code)


def test_the_readme_example_runs_with_the_repository_venv_alone(tmp_path: Path) -> None:
    # As after either README command: .venv's python imports py4jni without PYTHONPATH.
    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip(f"the tests run in {sys.prefix}, not the repository's .venv "
                    "(P4J_VENV_DIR elsewhere): tests/setup_env.sh leaves such a venv as it is")
    code = [e for e in EXAMPLES if e.page == "README.md"][0].code
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = run_example(code, tmp_path, str(ROOT / ".venv" / "bin" / "python"), env)
    assert r.returncode == 0, r.stdout + r.stderr
    check_output(code, r.stdout)


def test_output_check_catches_a_wrong_comment() -> None:
    code = 'print(1)  # 1\nprint(12345)  # e.g. 99999\n'
    check_output(code, "1\n54321\n")
    for wrong in ("2\n54321\n", "1\n5432\n", "1\n"):
        with pytest.raises(AssertionError):
            check_output(code, wrong)


def test_a_marker_is_read_from_the_line_before_the_block(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("text\n\n<!-- example: not run (needs X) -->\n```python\nx = 1\n```\n"
                    "\n```python\ny = 2\n```\n")
    a, b = examples_of(page, "p.md")
    assert (a.not_run, a.line, a.code) == ("needs X", 4, "x = 1\n")
    assert (b.not_run, b.line) == (None, 8)


def _sphinx(src: Path, out: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("sphinx", reason="Sphinx is not installed in this venv (the matrix "
                        "legs' venvs hold the suites' imports only; tests/run_all.sh's "
                        "venv builds the pages)")
    pytest.importorskip("myst_parser", reason="MyST is not installed in this venv")
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q",
                           "-b", "html", str(src), str(out)],
                          capture_output=True, text=True, timeout=300)


def test_the_pages_build_strictly(tmp_path: Path) -> None:
    r = _sphinx(ROOT / "docs", tmp_path / "html")
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("link, builds", [
    ("[a heading](other.md#a-heading), [a file](../tests/real.dat)", True),
    ("[a page that is not there](nowhere.md)", False),
    ("[a heading that is not there](other.md#no-such-heading)", False),
    ("[a file that is not there](../tests/no_such_file.dat)", False),
])
def test_a_broken_reference_fails_the_build(link: str, builds: bool, tmp_path: Path) -> None:
    # The pages' own configuration, on two small pages: one link each time.
    src = tmp_path / "docs"
    src.mkdir()
    shutil.copy(ROOT / "docs" / "conf.py", src)
    (src / "other.md").write_text("# Other\n\n## A heading\n\ntext\n")
    (src / "index.md").write_text(f"# t\n\n```{{toctree}}\nother\n```\n\n{link}\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "real.dat").write_text("x = 1\n")
    r = _sphinx(src, tmp_path / "html")
    assert (r.returncode == 0) == builds, r.stdout + r.stderr
