#!/usr/bin/env bash
# Prepares a machine for building and testing py4jni, idempotently:
#   - Debian packages: gcc and libc6-dev (only a Recommends of gcc), clang (libFuzzer) and its sanitizer runtimes, CMake, Ninja, pkg-config, JDK 17, libffi, CMocka,
#     python3-venv and python3-dev (Python.h for the extension), git (the layout test reads
#     the repository's index: tests/check_comment_paths.py), make (the release wheels'
#     libffi build: python-binding/build_wheels.sh)
#   - .venv at the repository root with tests/requirements.txt (and tests/requirements-pyspark.txt)
#   - a CMake build in build/ (C library, helper jar, extension, test fixtures)
# Source it or run it; afterwards build/python holds the importable py4jni package.
# Environment: PYTHON (interpreter that creates the venv, default python3), P4J_VENV_DIR
# and P4J_BUILD_DIR (default .venv and build/), P4J_REQUIREMENTS (default
# tests/requirements.txt), JAVA_HOME (the JDK CMake builds with): tests/run_matrix.sh
# sets them for its per-Python and per-JDK legs.
set -euo pipefail
P4J_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export P4J_ROOT

need=()
for pkg in gcc libc6-dev clang cmake ninja-build pkg-config libffi-dev libcmocka-dev openjdk-17-jdk-headless python3-venv python3-dev git make; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
apt_install() {
  echo "setup: installing $*" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
if ((${#need[@]})); then
  apt_install "${need[@]}"
fi
# clang's sanitizer runtimes (libFuzzer's ASan/UBSan) live in a package of their own,
# named after clang's major version (libclang-rt-14-dev on Debian 12); with
# --no-install-recommends it never comes along with clang.
clang_major=$(clang -dumpversion | cut -d. -f1)
if [ ! -e "$(clang -print-file-name=libclang_rt.asan-x86_64.a)" ] \
   && [ ! -e "$(clang --print-runtime-dir)/libclang_rt.asan-x86_64.a" ]; then
  apt_install "libclang-rt-${clang_major}-dev"
fi

PY=${PYTHON:-python3}
VENV="${P4J_VENV_DIR:-$P4J_ROOT/.venv}"
REQS="${P4J_REQUIREMENTS:-$P4J_ROOT/tests/requirements.txt}"
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV" >&2
  "$PY" -m venv "$VENV"
fi
stamp="$VENV/.requirements.sha"
want=$(sha256sum "$REQS" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing Python packages" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQS"
  echo "$want" > "$stamp"
fi
# PySpark (tests/python/test_pyspark.py, perf/run.sh --spark): ~500 MB, P4J_NO_PYSPARK=1 skips it.
if [ -z "${P4J_NO_PYSPARK:-}" ]; then
  want=$(sha256sum "$P4J_ROOT/tests/requirements-pyspark.txt" | cut -d' ' -f1)
  if [ "$(cat "$VENV/.requirements-pyspark.sha" 2>/dev/null)" != "$want" ]; then
    echo "setup: installing PySpark" >&2
    "$VENV/bin/pip" install -q --disable-pip-version-check -r "$P4J_ROOT/tests/requirements-pyspark.txt"
    echo "$want" > "$VENV/.requirements-pyspark.sha"
  fi
fi

BUILD="${P4J_BUILD_DIR:-$P4J_ROOT/build}"
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$P4J_ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DPython_EXECUTABLE="$VENV/bin/python" >/dev/null
fi
ninja -C "$BUILD" -j 2 >/dev/null || ninja -C "$BUILD" -j 1
export P4J_BUILD="$BUILD" P4J_VENV="$VENV"
export P4J_FIXTURES_JAR="$BUILD/tests/py4jni-test-fixtures.jar"
export PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
