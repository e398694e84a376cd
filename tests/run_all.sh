#!/usr/bin/env bash
# Runs every py4jni test from a fresh machine: sets the machine up (tests/setup_env.sh),
# checks that the paths comments name exist (tests/check_comment_paths.py), type-checks
# the package (mypy --strict, pyproject.toml's [tool.mypy]) and its extension's stubs
# against the built extension (stubtest), then the CMocka suites and the Java self-test (ctest), a short libFuzzer run of the socket
# codec's answer decoder, then the pytest suites in both transports. Exit status is
# non-zero on any failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup_env.sh"
cd "$P4J_ROOT"
status=0
echo "== comments: every repository path named in a comment exists"
"$P4J_VENV/bin/python" tests/check_comment_paths.py || status=1
echo "== types: mypy --strict on python-binding/py4jni, stubtest of _py4jni.pyi"
"$P4J_VENV/bin/python" -m mypy --no-incremental || status=1
(cd "$P4J_BUILD" && PYTHONPATH="$P4J_BUILD/python" "$P4J_VENV/bin/python" -m mypy.stubtest \
    py4jni._py4jni --allowlist "$P4J_ROOT/tests/typing/stubtest-allowlist.txt") || status=1
echo "== ctest (CMocka, Java self-test)"
(cd "$P4J_BUILD" && ctest --output-on-failure -j 1) || status=1
echo "== fuzz: py4j answer decoder (libFuzzer, ASan+UBSan, 20 s)"
bash tests/c/run_fuzz.sh 20 2>&1 | tail -n 3 || status=1
echo "== sanitizers: in-process pytest against an ASan+UBSan build (build-asan/)"
bash tests/run_sanitizers.sh 2>&1 | tail -n 80 || status=1
echo "== pytest"
# The in-process gateway runs with -Xcheck:jni; a JNI misuse it reports fails the test.
P4J_CHECK_JNI=${P4J_CHECK_JNI:-1} "$P4J_VENV/bin/python" -m pytest -p no:faulthandler -q \
    tests/python "$@" || status=1
exit $status
