#!/usr/bin/env bash
# tests/ci/root_leg.sh: one matrix leg, run inside a root filesystem of tests/ci/debian_root.sh
# (tests/ci/forky_legs.sh runs it in the chroot). Builds the source tree in /work/src from
# scratch or incrementally (CMake/Ninja, build dir /work/build-<NAME>), with the JDK of
# JAVA_HOME as build JDK and embedded JVM, then runs ctest (CMocka suites, Java
# self-test) and the whole pytest suite in both transports (the differential suites
# included) with -Xcheck:jni. With --types it also checks the typing a user sees on this
# Python: stubtest of the _py4jni stubs against the built extension, and mypy --strict on
# tests/typing/user_program.py against the built package (the package's own mypy run,
# which needs PySpark installed, is tests/run_all.sh's).
#
#   bash tests/ci/root_leg.sh NAME PYTHON JAVA_HOME REQUIREMENTS [--types] [--system-site]
#
# The venv /work/venv-<python version> is shared by the legs of one Python and reused
# by later runs (REQUIREMENTS is installed again only when it changes); --system-site
# makes it see the root's Debian packages (numpy for a CPython PyPI has no numpy for).
set -euo pipefail
name=$1 py=$2 jdk=$3 reqs=$4; shift 4
types="" site=""
for opt in "$@"; do
  case "$opt" in --types) types=1 ;; --system-site) site=1 ;; *) echo "bad option $opt" >&2; exit 2 ;; esac
done
src=/work/src
ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
venv=/work/venv-$ver${site:+-system-site} build=/work/build-$name
export JAVA_HOME=$jdk PATH="$jdk/bin:$PATH"

if [ ! -x "$venv/bin/python" ]; then "$py" -m venv ${site:+--system-site-packages} "$venv"; fi
want=$(sha256sum "$reqs" | cut -d' ' -f1)
if [ "$(cat "$venv/.requirements.sha" 2>/dev/null)" != "$want" ]; then
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$reqs"
  echo "$want" > "$venv/.requirements.sha"
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DPython_EXECUTABLE="$venv/bin/python" >/dev/null
fi
ninja -C "$build" -j 2 >/dev/null || ninja -C "$build" -j 1
echo "   $("$venv/bin/python" -V), $(java -version 2>&1 | head -n 1), $(ldd --version | head -n 1)"

export P4J_FIXTURES_JAR="$build/tests/py4jni-test-fixtures.jar" PYTHONPATH="$build/python"
cd "$src"
status=0
if [ -n "$types" ]; then
  echo -n "   stubtest of _py4jni.pyi: "
  (cd "$build" && "$venv/bin/python" -m mypy.stubtest py4jni._py4jni \
      --allowlist "$src/tests/typing/stubtest-allowlist.txt") || status=1
  echo -n "   mypy --strict tests/typing/user_program.py: "
  MYPYPATH="$build/python" "$venv/bin/python" -m mypy --strict --no-incremental \
      tests/typing/user_program.py || status=1
fi
(cd "$build" && ctest --output-on-failure -j 1) || status=1
# test_perf_harness drives perf/bench.py, whose backends (JPype, matplotlib) are
# installed only in the default leg; PySpark is not installed here (its module skips).
P4J_CHECK_JNI=1 "$venv/bin/python" -m pytest -p no:faulthandler -p no:cacheprovider -q \
    --ignore=tests/python/perf_harness/test_perf_harness.py tests/python || status=1
exit $status
