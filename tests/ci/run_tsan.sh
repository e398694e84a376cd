#!/usr/bin/env bash
# tests/ci/run_tsan.sh - the threaded tests (in-process transport) under ThreadSanitizer,
# on a free-threaded CPython built with TSan, against a build of bridge/, jni/ and the
# _py4jni extension with gcc's -fsanitize=thread in build-tsan/ beside the normal build.
#   usage: tests/ci/run_tsan.sh [pytest args]
# Default selection (about two minutes once built): tests/python/core/test_threads.py,
# test_thread_stress.py, test_call_caches.py and tests/python/callbacks, -k "not socket".
# Pytest arguments replace that selection (e.g. "tests/python -k 'not socket'").
#
# The interpreter: CPython 3.13 or later configured with --disable-gil
# --with-thread-sanitizer (TSan needs the interpreter instrumented too: an uninstrumented
# one's own locking makes every object handed between threads look like a race), built
# once from the source named by P4J_TSAN_CPYTHON_SRC (a .zip or .tar.* of a CPython
# release's source tree, or its directory) into $P4J_ROOTS/cpython-<version>t-tsan/
# (P4J_ROOTS default /var/cache/py4jni-roots; about 20 minutes on two cores, most of it
# make install's byte-compiling under TSan). A later run reuses it. With no such build
# and no source, or when the build fails or TSan cannot run a thread in it, the script
# prints "SKIPPED: reason" and exits 77.
#
# HotSpot runs under TSan as it is: no JVM option is needed. TSan intercepts the
# sigaction calls HotSpot makes and calls HotSpot's handler for SIGSEGV/SIGBUS/SIGILL/
# SIGFPE synchronously with the signal's context, so implicit null checks and safepoint
# polls work; HotSpot's reservations (heap, code cache, class space) land in the
# application ranges of TSan's layout. The JVM's libraries are not instrumented; what
# they report through intercepted libc calls is suppressed (tests/ci/tsan_suppressions.txt
# says why), their locks and threads still count for happens-before.
#
# Left out of the default selection: the callback nesting-depth tests (TSan's larger
# frames use up the native stack sooner, as under ASan: tests/ci/run_sanitizers.sh).
# TSAN_OPTIONS: history_size=7 keeps enough history to show the earlier access's stack
# (the default often prints "failed to restore the stack"); every report goes to a file
# under build-tsan/reports/, which must stay empty (a report fails the run, also one in
# a child process the tests start). JAVA_HOME default: /usr/lib/jvm/java-17-openjdk-amd64.
# The build's output goes to build-tsan/logs/build.log.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$root/tests/ci/steps.sh"
P4J_ROOTS=${P4J_ROOTS:-/var/cache/py4jni-roots}
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
export PATH="$JAVA_HOME/bin:$PATH"
build="$root/build-tsan"
reports="$build/reports"
skip() { echo "SKIPPED: $*"; exit 77; }
p4j_log_open "$build/logs/build.log"

[ -x "$JAVA_HOME/bin/javac" ] || skip "no JDK at $JAVA_HOME (set JAVA_HOME)"
[ -e "$(gcc -print-file-name=libtsan.so)" ] \
  && [ "$(gcc -print-file-name=libtsan.so)" != libtsan.so ] || skip "gcc has no libtsan"

# The TSan interpreter: a finished build in $P4J_ROOTS, or one built now from the source.
find_python() {
  local mark
  for mark in "$P4J_ROOTS"/cpython-*t-tsan/.complete; do
    [ -e "$mark" ] && { ls "$(dirname "$mark")"/bin/python3.*t | head -n 1; return 0; }
  done
  return 1
}
build_python() (  # a subshell: its EXIT trap removes the unpacked source
  src=$1
  work=$(mktemp -d /tmp/py4jni-tsan-src.XXXXXX)
  trap 'rm -rf "$work"' EXIT
  case "$src" in
    *.zip) unzip -q "$src" -d "$work" ;;
    *.tar*|*.tgz) tar -xf "$src" -C "$work" ;;
    *) cp -a "$src" "$work/" ;;
  esac
  tree=$(dirname "$(find "$work" -maxdepth 6 -path '*/Include/patchlevel.h' | head -n 1)")
  tree=$(dirname "$tree")
  [ -x "$tree/configure" ] || chmod +x "$tree/configure" 2>/dev/null \
    || { echo "no CPython source tree in $src"; return 1; }
  version=$(sed -n 's/^#define PY_VERSION[[:space:]]*"\([0-9.]*\).*/\1/p' "$tree/Include/patchlevel.h")
  grep -q -- '--disable-gil' "$tree/configure" \
    || { echo "CPython $version has no free-threaded build (3.13 or later needed)"; return 1; }
  # A zip does not keep the executable bits configure's helper scripts need.
  grep -rlI -m1 '^#!' "$tree" | xargs -r -d '\n' chmod +x
  prefix="$P4J_ROOTS/cpython-${version}t-tsan"
  rm -rf "$prefix"
  (cd "$tree" && ./configure --disable-gil --with-thread-sanitizer --prefix="$prefix" \
     && make -j2 && make install) || return 1
  # CPython's suppressions of its own known races, kept beside the interpreter.
  mkdir -p "$prefix/share/tsan"
  cp "$tree/Tools/tsan/suppressions_free_threading.txt" "$prefix/share/tsan/"
  touch "$prefix/.complete"
)
if ! py=$(find_python); then
  src=${P4J_TSAN_CPYTHON_SRC:-}
  [ -n "$src" ] && [ -e "$src" ] \
    || skip "no TSan CPython in $P4J_ROOTS and no source to build one (set P4J_TSAN_CPYTHON_SRC to a CPython 3.13+ source zip or tarball)"
  p4j_step "run_tsan.sh: building a free-threaded CPython with TSan from $(basename "$src") (about 20 minutes)" \
    build_python "$src" || skip "the TSan CPython did not build from $src (see $P4J_LOG)"
  py=$(find_python) || skip "the TSan CPython build left no interpreter"
fi
prefix=$(dirname "$(dirname "$py")")
cpython_supp="$prefix/share/tsan/suppressions_free_threading.txt"
echo "run_tsan.sh: $("$py" -VV 2>&1 | head -n 1)"

# The suppressions of this run: the project's, the JDK's libraries (see
# tests/ci/tsan_suppressions.txt) and CPython's.
mkdir -p "$build"
supp="$build/tsan_suppressions.txt"
{
  cat "$root/tests/ci/tsan_suppressions.txt"
  echo "# the libraries of the JDK at $JAVA_HOME (not instrumented; see above)"
  find -L "$JAVA_HOME/lib" -name '*.so' -printf 'called_from_lib:%f\n' | sort -u
  echo "# CPython's: $cpython_supp"
  cat "$cpython_supp"
} >"$supp"
base_opts="suppressions=$supp history_size=7"

# TSan must run a plain threaded program in this interpreter without a report (it cannot
# on some kernels: e.g. "FATAL: ThreadSanitizer: unexpected memory mapping" with a high
# mmap randomization; the run is then skipped with TSan's message).
check=$(TSAN_OPTIONS="$base_opts" "$py" -c '
import sys, threading
assert not sys._is_gil_enabled(), "the GIL is on"
out = []
def work(i): out.append(sum(len(str(j)) for j in range(5000)))
ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
print("ok", len(out))' 2>&1) || skip "TSan cannot run this interpreter: $(echo "$check" | grep -m1 -v '^=*$')"
[ "$check" = "ok 4" ] || { echo "run_tsan.sh: TSan reported on a plain threaded program:" >&2; echo "$check" >&2; exit 1; }

# A venv of the TSan interpreter with pytest (the only package the selected tests use);
# TSan reports inside pip are not this run's business.
venv="$build/venv"
pytest_pin=$(grep -m1 '^pytest==' "$root/tests/requirements.txt" | cut -d' ' -f1)
if [ ! -x "$venv/bin/pytest" ]; then
  p4j_step "run_tsan.sh: venv with $pytest_pin (pip under TSan: a few minutes)" \
    env TSAN_OPTIONS="$base_opts report_bugs=0" \
      bash -c '"$1" -m venv "$2" && "$2/bin/pip" install --disable-pip-version-check "$3"' \
      _ "$py" "$venv" "$pytest_pin" || exit 1
fi

p4j_sanitizer_build run_tsan.sh "$root" "$build" \
  "-fsanitize=thread -fno-omit-frame-pointer" "$venv/bin/python" || exit 1

rm -rf "$reports"
mkdir -p "$reports"
if [ $# -eq 0 ]; then
  set -- -k "not socket" tests/python/core/test_threads.py tests/python/core/test_thread_stress.py \
         tests/python/core/test_call_caches.py tests/python/callbacks
fi
status=0
cd "$root"
env TSAN_OPTIONS="$base_opts log_path=$reports/tsan" \
    PYTHONPATH="$build/python" P4J_FIXTURES_JAR="$build/tests/py4jni-test-fixtures.jar" \
    "$venv/bin/python" -m pytest -p no:faulthandler -q \
    --deselect "tests/python/callbacks/test_callbacks.py::test_reentrancy_120_levels" \
    --deselect "tests/python/callbacks/test_callbacks.py::test_reentrancy_on_java_thread" \
    --deselect "tests/python/callbacks/test_callbacks.py::test_reentrancy_1000_levels_with_bigger_stack" \
    --ignore "tests/python/callbacks/test_callback_depth.py" \
    "$@" || status=1
if compgen -G "$reports/*" >/dev/null; then
  echo "run_tsan.sh: ThreadSanitizer reports ($(cat "$reports"/* | grep -c '^WARNING: ThreadSanitizer')):" >&2
  grep -h '^SUMMARY: ThreadSanitizer' "$reports"/* | sort | uniq -c >&2
  echo "(in full: $reports/)" >&2
  status=1
fi
exit $status
