#!/usr/bin/env bash
# perf/run.sh: the main job. From a fresh machine: create .venv at the repo root if
# missing, install what perf needs (perf/requirements.txt) and py4jni itself
# (`pip install .` of the repo root), then run the benchmark suite:
#
#   perf/run.sh [--quick] [--scenarios ...] [--backends ...] [--out DIR]
#   perf/run.sh --spark [--quick] [--rounds N] [--cold-reps N] [--out DIR]
#       (optional group, not in the default run: stock PySpark vs PySpark on py4jni;
#       about 22 minutes on 2 cores, --quick about 5; exits 1 when a figure is missing)
#   perf/run.sh --flink [--quick] [--rounds N] [--cold-reps N] [--out DIR]
#       (optional group: stock PyFlink vs PyFlink on py4jni, in .venv-pyflink)
#
# Environment: PYTHON (interpreter that creates the venv, default python3), P4J_VENV
# (venv path, default <repo>/.venv), P4J_SKIP_INSTALL=1 (measure py4jni as installed,
# without rebuilding it). A set-up step that fails (a Debian package, pip, py4jni's build)
# does not stop the run: the backends that can run are measured, the others' cells say
# why, and the run exits 1. So does a run in which a cell failed (perf/bench.py).
# Output: one line per set-up step with its elapsed time (their whole output in
# perf/.build/run.log), then bench.py's progress (its lasting lines, failures included,
# also go to that log); the last line names the log, the line before it the report. A full run takes 10-15 minutes on 2 cores, --quick 2-4 (the first run adds set-up).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
VENV="${P4J_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"
LOG_DIR="$HERE/.build"
source "$ROOT/tests/ci/steps.sh"
p4j_log_open "$LOG_DIR/run.log"
T0=$SECONDS
setup_failed=()

say() { echo "run.sh: $*" >&2; }

# Debian packages the suite needs: a JDK (GatewayServers, JPype, the floor's jni.h), gcc
# (the floor), venv support, and what `pip install .` of py4jni builds with (CMake,
# pkg-config, libffi, Python's headers).
need=()
command -v javac >/dev/null 2>&1 || [ -x "${JAVA_HOME:-/nonexistent}/bin/javac" ] \
  || need+=(openjdk-17-jdk-headless)
command -v gcc >/dev/null 2>&1 || need+=(gcc)
# libc6-dev (C headers and crt files) is only a Recommends of gcc.
dpkg -s libc6-dev >/dev/null 2>&1 || need+=(libc6-dev)
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
pkg-config --exists libffi 2>/dev/null || need+=(libffi-dev)
[ -x "$VENV/bin/python" ] || "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
# Python.h: the py4jni extension compiles against the venv's Python (Debian's python3).
"$PYTHON" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(
    os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null || need+=(python3-dev)
if [ ${#need[@]} -gt 0 ]; then
  p4j_step "run.sh: Debian packages (${need[*]})" p4j_apt_install "${need[@]}" || {
    say "continuing without ${need[*]}: what needs them will report why it cannot run"
    setup_failed+=("Debian packages")
  }
fi

if [ ! -x "$VENV/bin/python" ]; then
  p4j_step "run.sh: creating $VENV" "$PYTHON" -m venv "$VENV" || exit 1
fi
PY="$VENV/bin/python"

if ! command -v java >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
  say "no java on PATH and no JAVA_HOME: every backend needs a JVM, so they will all report"
  say "why they could not start"
fi

if ! p4j_step "run.sh: perf requirements (perf/requirements.txt: py4j, JPype, numpy, matplotlib)" \
    "$PY" -m pip install --disable-pip-version-check -r "$HERE/requirements.txt"; then
  say "continuing: backends whose package is missing show as 'not installed'"
  setup_failed+=("perf/requirements.txt")
fi

if [ "${P4J_SKIP_INSTALL:-0}" = 1 ]; then
  say "P4J_SKIP_INSTALL=1: measuring py4jni as installed"
elif [ -f "$ROOT/pyproject.toml" ]; then
  if ! p4j_step "run.sh: building and installing py4jni (pip install .; a few minutes)" \
      "$PY" -m pip install --disable-pip-version-check "$ROOT"; then
    # A py4jni left over from an earlier build would be measured as if it were this one.
    "$PY" -m pip uninstall --quiet --yes py4jni >/dev/null 2>&1 || true
    say "continuing without an installed py4jni: its columns measure build/python when" \
        "there is one (tests/run_all.sh builds it), else say why"
    setup_failed+=("pip install . (py4jni)")
  fi
else
  say "no pyproject.toml at $ROOT yet: py4jni cannot be installed; its columns will say 'not installed'"
  setup_failed+=("py4jni (no pyproject.toml)")
fi

export P4J_PERF_LAUNCHER="bash perf/run.sh"  # the command line the report shows
if [ "${1:-}" = "--flink" ]; then
  # Optional group: stock PyFlink against PyFlink on py4jni in-process (perf/flink_bench.py).
  # PyFlink pins py4j 0.10.9.7: it gets a venv of its own (the one tests/setup_env.sh
  # makes), made with the same Python so that the py4jni installed above imports there
  # (only that package is put on its path).
  shift
  FLINK_VENV="${P4J_PYFLINK_VENV_DIR:-$ROOT/.venv-pyflink}"
  [ -x "$FLINK_VENV/bin/python" ] || "$PYTHON" -m venv "$FLINK_VENV"
  say "installing PyFlink into $FLINK_VENV (tests/requirements-pyflink.txt; ~850 MB the first time)"
  "$FLINK_VENV/bin/pip" install --quiet --disable-pip-version-check -r "$ROOT/tests/requirements-pyflink.txt" \
    >"$LOG_DIR/pip-pyflink.log" 2>&1 || { tail -n 15 "$LOG_DIR/pip-pyflink.log" >&2; exit 1; }
  pkg=$("$PY" -c 'import os, py4jni; print(os.path.dirname(py4jni.__file__))') \
    || { say "py4jni is not installed in $VENV: nothing to compare"; exit 1; }
  mkdir -p "$LOG_DIR/flink-path"
  ln -sfn "$pkg" "$LOG_DIR/flink-path/py4jni"
  export PYTHONPATH="$LOG_DIR/flink-path"
  export P4J_PERF_LAUNCHER="bash perf/run.sh --flink"
  exec "$PY" "$HERE/flink_bench.py" --python "$FLINK_VENV/bin/python" "$@"
fi
if [ "${1:-}" = "--spark" ]; then
  # Optional group: stock PySpark against PySpark on py4jni in-process (perf/spark_bench.py).
  shift
  p4j_step "run.sh: PySpark (tests/requirements-pyspark.txt; ~500 MB the first time)" \
    "$PY" -m pip install --disable-pip-version-check -r "$ROOT/tests/requirements-pyspark.txt" \
    || exit 1
  export P4J_PERF_LAUNCHER="bash perf/run.sh --spark"
  exec "$PY" "$HERE/spark_bench.py" "$@"
fi
case " $* " in
  *" --list "*|*" -h "*|*" --help "*) took="" ;;
  *" --scenarios"*|*" --backends"*|*" --rounds"*) took="set-up done" ;;
  *" --quick "*) took="set-up done; the quick run takes 2-4 minutes" ;;
  *) took="set-up done; the full run takes 10-15 minutes" ;;
esac
[ -z "$took" ] || say "${took/set-up done/set-up done ($(p4j_elapsed $((SECONDS - T0))))}"
status=0
printf '\n==== bench.py %s\n' "$*" >>"$P4J_LOG"
P4J_PERF_LOG="$P4J_LOG" "$PY" "$HERE/bench.py" "$@" || status=$?
if ((${#setup_failed[@]})) && [ "$status" -eq 0 ]; then
  status=1
fi
if ((${#setup_failed[@]})); then
  say "set-up steps that failed: ${setup_failed[*]}"
fi
say "$( ((status == 0)) && echo done || echo "FAILED (exit status $status)") in" \
    "$(p4j_elapsed $((SECONDS - T0))); log: $P4J_LOG"
exit "$status"
