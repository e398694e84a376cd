#!/usr/bin/env bash
# tests/ci/run_sanitizers.sh - the pytest suite (in-process transport) against a build of
# bridge/, jni/ and the _py4jni extension with gcc's AddressSanitizer and
# UndefinedBehaviorSanitizer, in build-asan/ beside the normal build.
#   usage: tests/ci/run_sanitizers.sh [pytest args]   (after tests/setup_env.sh set up)
# By default the in-process tests run (-k "not socket"; about two minutes): they cover
# bridge/inproc/, jni/ and the extension; the socket codec has its own fuzzer
# (tests/c/run_fuzz.sh).
# Pytest arguments replace that selection (e.g. no argument filter: "-k ''").
# Left out always: the callback nesting-depth tests (ASan's larger frames use up the
# native stack sooner: they measure the normal build; the 1000-level one sat at ASan's
# limit, passing here and failing in tests/ci/fresh_machine.sh's chroot) and the perf harness smoke test
# (it runs other projects' libraries, e.g. JPype's C++, which libasan does not support
# when preloaded into python), and the PySpark module (pyarrow's and pandas' C++ under
# the preloaded libasan, Spark's Python workers inheriting it, and minutes of run time;
# the bridge code it drives is the code the other tests cover).
# HotSpot owns SIGSEGV (handle_segv=0, allow_user_segv_handler=1); libasan is preloaded
# because python itself is not instrumented; PYTHONMALLOC=malloc lets ASan see Python's
# allocations; leaks are not checked (the JVM and the interpreter keep memory at exit).
# Any sanitizer report fails the run: UBSan halts on the first (-fno-sanitize-recover),
# ASan always does, and every report is also written under build-asan/reports/, which
# must stay empty (a report in a child process the tests start counts too).
# test_perf_harness.py, test_framework_bench.py and test_instruction_gate.py test perf/'s
# harness, not the bridge (the first two load matplotlib, whose C++ exceptions the
# preloaded ASan runtime cannot intercept; the last runs valgrind, which ASan excludes).
# test_pyspark.py, test_pyspark_dataplane.py, test_pyspark_packages.py, test_delta.py,
# test_pyflink.py, test_pyflink_cluster.py and test_spark_cluster.py are left out: their
# drivers (Spark's or Flink's JVM, Python workers; the clusters' executors) inherit the
# preloaded ASan runtime and outlast the module's 600 s timeout on this machine.
# The three tests whose child forks after the JVM started are left out too: GCC 12's
# libsanitizer does not lock its stack depot around fork(), so when a JVM thread is
# storing a malloc's stack at that instant the child's first malloc spins forever on
# the depot's lock (__sanitizer::StackDepotNode::store, seen in 3 of 20 runs of
# test_fork_child_gets_a_clear_error); any program that mallocs in a fork child of a
# threaded parent does that under this runtime. They run in the plain pytest run.
# The build's output goes to build-asan/logs/build.log, or with P4J_LOG_KEEP=1 to $P4J_LOG
# (tests/run_all.sh's log).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$root/tests/ci/steps.sh"
: "${P4J_VENV:=$root/.venv}"
build="$root/build-asan"
reports="$build/reports"
[ -n "${P4J_LOG_KEEP:-}" ] || p4j_log_open "$build/logs/build.log"
p4j_sanitizer_build run_sanitizers.sh "$root" "$build" \
  "-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
  "$P4J_VENV/bin/python" || exit 1
rm -rf "$reports"
mkdir -p "$reports"
libasan=$(gcc -print-file-name=libasan.so)
if [ $# -eq 0 ]; then
  set -- -k "not socket"
fi
status=0
cd "$root"
env LD_PRELOAD="$libasan" PYTHONMALLOC=malloc P4J_EXIT_STRESS_RUNS="${P4J_EXIT_STRESS_RUNS:-2}" \
    ASAN_OPTIONS="handle_segv=0:allow_user_segv_handler=1:detect_leaks=0:halt_on_error=1:log_path=$reports/asan" \
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$reports/ubsan" \
    PYTHONPATH="$build/python" P4J_FIXTURES_JAR="$build/tests/py4jni-test-fixtures.jar" \
    "$P4J_VENV/bin/python" -m pytest -p no:faulthandler -q tests/python \
    --deselect "tests/python/callbacks/test_callbacks.py::test_reentrancy_120_levels" \
    --deselect "tests/python/callbacks/test_callbacks.py::test_reentrancy_on_java_thread" \
    --deselect "tests/python/callbacks/test_callbacks.py::test_reentrancy_1000_levels_with_bigger_stack" \
    --ignore "tests/python/callbacks/test_callback_depth.py" \
    --deselect "tests/python/process/test_process.py::test_fork_child_gets_a_clear_error" \
    --deselect "tests/python/process/test_exit_race.py::test_forked_child_exits_while_parent_threads_were_entering" \
    --deselect "tests/python/process/test_interrupts.py::test_sigterm_to_a_forked_child_does_not_reach_the_parents_jvm" \
    --ignore "tests/python/perf_harness/test_perf_harness.py" \
    --ignore "tests/python/perf_harness/test_framework_bench.py" \
    --ignore "tests/python/perf_harness/test_instruction_gate.py" \
    --ignore "tests/python/frameworks/test_pyspark.py" --ignore "tests/python/frameworks/test_pyflink.py" \
    --ignore "tests/python/frameworks/test_pyspark_dataplane.py" \
    --ignore "tests/python/frameworks/test_pyspark_packages.py" --ignore "tests/python/frameworks/test_delta.py" \
    --ignore "tests/python/frameworks/test_spark_cluster.py" \
    --ignore "tests/python/frameworks/test_pyflink_cluster.py" \
    "$@" || status=1
if compgen -G "$reports/*" >/dev/null; then
  echo "run_sanitizers.sh: sanitizer reports:" >&2
  for f in "$reports"/*; do echo "== $f" >&2; head -n 60 "$f" >&2; done
  status=1
fi
exit $status
