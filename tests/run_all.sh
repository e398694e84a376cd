#!/usr/bin/env bash
# Runs every py4jni test from a fresh machine: sets the machine up (tests/setup_env.sh),
# checks that the paths comments name exist (tests/ci/check_comment_paths.py), type-checks
# the package (mypy --strict, pyproject.toml's [tool.mypy]) and its extension's stubs
# against the built extension (stubtest), builds the documentation (docs/, Sphinx with
# warnings as errors, into build/docs), then the CMocka suites and the Java self-test
# (ctest), the instruction-count gate (perf/instruction_gate.py: instructions per call
# under callgrind against perf/instructions.txt), a short libFuzzer run of the socket
# codec's answer decoder, the in-process pytest suite under ASan+UBSan
# (tests/ci/run_sanitizers.sh), then the pytest suites in both transports. Arguments go
# to the last pytest.
# Output: one line per step with its result and elapsed time; ctest's and the pytest
# runs' own output as it comes; the whole output of every step in build/logs/run_all.log,
# which the last line names. Exit status is non-zero on any failure.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/tests/ci/steps.sh"
p4j_log_open "${P4J_BUILD_DIR:-$root/build}/logs/run_all.log"
P4J_LOG_KEEP=1
t0=$SECONDS
echo "run_all.sh: every test; about 14-16 minutes on 2 cores once set up (the first set-up"
echo "adds Debian packages, ~2 GB of Python packages with PySpark and PyFlink, and two builds)"
source "$root/tests/setup_env.sh"
cd "$P4J_ROOT"
failed=()
p4j_step "comments: every repository path named in a comment exists" \
  "$P4J_VENV/bin/python" tests/ci/check_comment_paths.py || failed+=(comments)
p4j_step "types: mypy --strict on python-binding/py4jni" \
  "$P4J_VENV/bin/python" -m mypy --no-incremental || failed+=(mypy)
stubtest() (
  cd "$P4J_BUILD" && PYTHONPATH="$P4J_BUILD/python" "$P4J_VENV/bin/python" -m mypy.stubtest \
    py4jni._py4jni --allowlist "$P4J_ROOT/tests/typing/stubtest-allowlist.txt"
)
p4j_step "types: stubtest of _py4jni.pyi against the built extension" stubtest \
  || failed+=(stubtest)
p4j_step "docs: docs/ built into build/docs (warnings are errors: a broken link fails)" \
  "$P4J_VENV/bin/python" -m sphinx -W --keep-going -n -q -b html docs "$P4J_BUILD/docs" \
  || failed+=(docs)
ctest_run() ( cd "$P4J_BUILD" && ctest --output-on-failure -j 1 )
p4j_step_shown "ctest (CMocka, Java self-test)" ctest_run || failed+=(ctest)
p4j_step "perf gate: instructions per call (callgrind) within 3% of perf/instructions.txt" \
  "$P4J_VENV/bin/python" perf/instruction_gate.py || failed+=(instruction-gate)
p4j_step "fuzz: py4j answer decoder (libFuzzer, ASan+UBSan, 20 s)" \
  bash tests/c/run_fuzz.sh 20 || failed+=(fuzz)
p4j_step_shown "sanitizers: in-process pytest against an ASan+UBSan build (build-asan/)" \
  env P4J_LOG="$P4J_LOG" P4J_LOG_KEEP=1 bash tests/ci/run_sanitizers.sh || failed+=(sanitizers)
# The in-process gateway runs with -Xcheck:jni; a JNI misuse it reports fails the test.
p4j_step_shown "pytest (both transports)" env P4J_CHECK_JNI="${P4J_CHECK_JNI:-1}" \
  "$P4J_VENV/bin/python" -m pytest -p no:faulthandler -q tests/python "$@" || failed+=(pytest)
if ((${#failed[@]})); then
  echo "run_all.sh: FAILED: ${failed[*]} ($(p4j_elapsed $((SECONDS - t0)))); full log: $P4J_LOG"
  exit 1
fi
echo "run_all.sh: all passed ($(p4j_elapsed $((SECONDS - t0)))); full log: $P4J_LOG"
