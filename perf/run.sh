#!/usr/bin/env bash
# perf/run.sh: the main job. From a fresh machine: create .venv at the repo root if
# missing, install what perf needs (perf/requirements.txt) and py4jni itself
# (`pip install .` of the repo root), then run the benchmark suite:
#
#   perf/run.sh [--quick] [--scenarios ...] [--backends ...] [--out DIR]
#   perf/run.sh --spark [--quick] [--rounds N] [--cold-reps N] [--out DIR]
#       (optional group, not in the default run: stock PySpark vs PySpark on py4jni)
#   perf/run.sh --flink [--quick] [--rounds N] [--cold-reps N] [--out DIR]
#       (optional group: stock PyFlink vs PyFlink on py4jni, in .venv-pyflink)
#
# Environment: PYTHON (interpreter that creates the venv, default python3), P4J_VENV
# (venv path, default <repo>/.venv), P4J_SKIP_INSTALL=1 (measure py4jni as installed,
# without rebuilding it). A py4jni that fails to build does not stop the run: the other
# backends are measured and py4jni's columns say "not installed" with the reason.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
VENV="${P4J_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"
LOG_DIR="$HERE/.build"
mkdir -p "$LOG_DIR"

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
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  if command -v apt-get >/dev/null 2>&1 && { [ -z "$SUDO" ] || command -v sudo >/dev/null 2>&1; }; then
    say "installing Debian packages: ${need[*]}"
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" \
      || say "apt-get failed; continuing (what needs ${need[*]} will report why it cannot run)"
  else
    say "missing ${need[*]} and no apt-get/sudo to install them; continuing"
  fi
fi

if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
PY="$VENV/bin/python"

if ! command -v java >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
  say "no java on PATH and no JAVA_HOME: every backend needs a JVM, so they will all report"
  say "why they could not start"
fi

say "installing perf requirements"
if ! "$PY" -m pip install --quiet --disable-pip-version-check -r "$HERE/requirements.txt" \
    >"$LOG_DIR/pip-requirements.log" 2>&1; then
  say "pip install -r perf/requirements.txt failed (log: $LOG_DIR/pip-requirements.log):"
  tail -n 15 "$LOG_DIR/pip-requirements.log" >&2
  say "continuing: backends whose package is missing show as 'not installed'"
fi

if [ "${P4J_SKIP_INSTALL:-0}" = 1 ]; then
  say "P4J_SKIP_INSTALL=1: measuring py4jni as installed"
elif [ -f "$ROOT/pyproject.toml" ]; then
  say "building and installing py4jni (pip install .; log: $LOG_DIR/pip-py4jni.log)"
  if ! "$PY" -m pip install --quiet --disable-pip-version-check "$ROOT" \
      >"$LOG_DIR/pip-py4jni.log" 2>&1; then
    say "py4jni did not build or install; last lines of the log:"
    tail -n 25 "$LOG_DIR/pip-py4jni.log" >&2
    # A py4jni left over from an earlier build would be measured as if it were this one.
    "$PY" -m pip uninstall --quiet --yes py4jni >/dev/null 2>&1 || true
    say "continuing without py4jni: its columns will say 'not installed' and why"
  fi
else
  say "no pyproject.toml at $ROOT yet: py4jni cannot be installed; its columns will say 'not installed'"
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
  say "installing PySpark (tests/requirements-pyspark.txt; ~500 MB the first time)"
  "$PY" -m pip install --quiet --disable-pip-version-check -r "$ROOT/tests/requirements-pyspark.txt" \
    >"$LOG_DIR/pip-pyspark.log" 2>&1 || { tail -n 15 "$LOG_DIR/pip-pyspark.log" >&2; exit 1; }
  export P4J_PERF_LAUNCHER="bash perf/run.sh --spark"
  exec "$PY" "$HERE/spark_bench.py" "$@"
fi
exec "$PY" "$HERE/bench.py" "$@"
