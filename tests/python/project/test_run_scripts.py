"""The helpers of the two commands (tests/ci/steps.sh, sourced by tests/setup_env.sh,
tests/run_all.sh, tests/ci/run_sanitizers.sh and perf/run.sh): one line per step with its
elapsed time and the whole output in the log, and a message naming what to install when
packages are missing and neither root nor sudo can install them."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
STEPS = ROOT / "tests" / "ci" / "steps.sh"


def _bash(script: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("P4J_LOG")}
    if path is not None:
        env["PATH"] = path
    bash = shutil.which("bash")
    assert bash
    return subprocess.run([bash, "-c", f"set -euo pipefail; source {STEPS}; {script}"],
                          capture_output=True, text=True, timeout=60, env=env)


def test_steps_print_one_line_each_and_log_everything(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "run.log"
    r = _bash(f"p4j_log_open {log}; "
              "p4j_step 'first step' bash -c 'echo out-1; echo err-1 >&2'; "
              "p4j_step 'second step' bash -c 'echo out-2; exit 7' || echo status=$?; "
              "p4j_step_shown 'shown step' bash -c 'echo closing line'")
    assert r.returncode == 0, r.stderr
    # elapsed times are whole seconds: 0, or 1 across a second's boundary
    lines = [re.sub(r"\b[01] s\)", "N s)", line) for line in r.stdout.splitlines()]
    assert lines[0] == "first step ... ok (N s)", r.stdout
    assert lines[1].startswith("second step ... FAILED (exit status 7, N s); its last lines"), \
        r.stdout
    assert str(log) in lines[1]
    assert lines[2] == "  | out-2", r.stdout  # this step's lines only
    assert lines[3] == "status=7"
    assert lines[4:] == ["== shown step", "closing line", "== shown step: ok (N s)"], r.stdout
    text = log.read_text()
    for word in ("out-1", "err-1", "out-2", "closing line", "==== first step"):
        assert word in text, text


def test_missing_packages_without_root_or_sudo_say_what_to_run(tmp_path: Path) -> None:
    # A minimal Debian: apt-get and dpkg, no sudo; this user is not root (`id -u` 1000).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "id").write_text("#!/bin/sh\necho 1000\n")
    (bin_dir / "apt-get").write_text("#!/bin/sh\necho apt-get must not run >&2\nexit 9\n")
    for tool in ("id", "apt-get"):
        (bin_dir / tool).chmod(0o755)
    for tool in ("cat", "dirname", "mkdir", "sh"):
        found = shutil.which(tool)
        assert found
        (bin_dir / tool).symlink_to(found)
    r = _bash("p4j_apt_install gcc libffi-dev", path=str(bin_dir))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "missing Debian packages: gcc libffi-dev" in r.stderr
    assert "there is no sudo" in r.stderr and "run the\nscript as root" in r.stderr
    assert "apt-get install --no-install-recommends gcc libffi-dev" in r.stderr
    assert "must not run" not in r.stderr


def test_an_install_step_says_first_install_only_the_first_time(tmp_path: Path) -> None:
    stamp = tmp_path / ".requirements.sha"
    first = _bash(f"p4j_first_time {stamp} 'a minute or two'")
    stamp.write_text("sha")
    again = _bash(f"p4j_first_time {stamp} 'a minute or two'")
    assert (first.stdout, again.stdout) == ("first install: a minute or two\n",
                                            "what changed\n")
