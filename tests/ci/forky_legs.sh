#!/usr/bin/env bash
# tests/ci/forky_legs.sh: the matrix legs whose Python or JDK only Debian's forky suite has
# (tests/ci/run_matrix.sh runs them; each can run alone). One root filesystem for all of
# them: forky minbase plus the packages below (made once by tests/ci/debian_root.sh, cached
# in /var/cache/py4jni-roots/forky-<hash of the list>/). Legs:
#   py3.14   CPython 3.14 with OpenJDK 25, plus mypy --strict and stubtest on 3.14
#   py3.15   CPython 3.15 with OpenJDK 25 (preview; numpy is Debian's python3-numpy, as
#            PyPI has no numpy wheel for 3.15 and building one needs C++)
#   jdk21    OpenJDK 21 with CPython 3.14
#   jdk26    OpenJDK 26 with CPython 3.14 (preview)
#   wheel3.14  the CPython 3.14 release wheel (this machine has no 3.14), built by
#            python-binding/build_wheels.sh in the chroot (Zig targets glibc 2.17
#            whatever the chroot's glibc), written to build/matrix/forky/dist/, then
#            installed into a fresh 3.14 venv there to run tests/typing/user_program.py
# Each builds this working tree (its tracked and untracked, not ignored, files, copied
# into build/matrix/forky/src) from source in the chroot and runs tests/ci/root_leg.sh:
# ctest, then the whole pytest suite in both transports. Builds and venvs stay in
# build/matrix/forky/ on this machine (reruns are incremental); pip's cache is shared
# by all roots.
#
#   bash tests/ci/forky_legs.sh LEG...
#
# Needs root (re-runs itself with sudo when there is one). Exit status: 0 passed, 77
# skipped (root, debootstrap or the archive missing; the reason is printed as
# "SKIPPED: ..."), else failed.
set -euo pipefail
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then
  exec sudo -E bash "$0" "$@"
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$ROOT/tests/ci/debian_root.sh"
(($#)) || { echo "usage: $0 LEG... (py3.14 py3.15 jdk21 jdk26 wheel3.14)" >&2; exit 2; }

# The packages a leg needs: the build (what tests/setup_env.sh installs, less clang,
# which only the fuzzing and sanitizer runs of the default leg use; make for the wheel's
# libffi; libssl-dev, openssl and binutils for the TLS tests) and the runtimes.
PACKAGES=(gcc libc6-dev make cmake ninja-build pkg-config libffi-dev libcmocka-dev git
          libssl-dev openssl binutils
          python3.14-dev python3.14-venv python3.15-dev python3.15-venv
          python3-numpy openjdk-21-jdk-headless openjdk-25-jdk-headless openjdk-26-jdk-headless)
JVM=/usr/lib/jvm

for leg in "$@"; do
  case "$leg" in py3.14|py3.15|jdk21|jdk26|wheel3.14) ;; *) echo "unknown leg $leg" >&2; exit 2 ;; esac
done
droot_prepare forky "${PACKAGES[@]}"

WORK="$ROOT/build/matrix/forky"
mkdir -p "$WORK"
# The working tree as git sees it (so the layout tests read the same file list);
# mtimes are kept, so the incremental builds only rebuild what changed.
rm -rf "$WORK/src"; mkdir -p "$WORK/src"
(cd "$ROOT" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) \
  | tar -xf - -C "$WORK/src"
# What the legs' venvs need: the test suites' imports (pins of tests/requirements.txt).
grep -E '^(pytest|py4j|numpy|mypy)==' "$ROOT/tests/requirements.txt" > "$WORK/requirements-leg.txt"
grep -E '^(pytest|py4j)==' "$ROOT/tests/requirements.txt" > "$WORK/requirements-leg-3.15.txt"

droot_mount "$WORK"
droot_run "cd /work/src && git init -q && git add -A"
status=0
for leg in "$@"; do
  case "$leg" in
    py3.14) args="py3.14 python3.14 $JVM/java-25-openjdk-amd64 --types" ;;
    py3.15) args="py3.15 python3.15 $JVM/java-25-openjdk-amd64 --system-site" ;;
    jdk21)  args="jdk21 python3.14 $JVM/java-21-openjdk-amd64" ;;
    jdk26)  args="jdk26 python3.14 $JVM/java-26-openjdk-amd64" ;;
    wheel3.14)
      echo "-- forky: the CPython 3.14 wheel"
      rm -rf "$WORK/dist"
      jdk=$JVM/java-25-openjdk-amd64
      # Debian's python3.14 has no pip: the wheel is built by a venv's (first on PATH).
      droot_run "set -e; [ -x /work/venv-wheel-3.14/bin/pip ] || python3.14 -m venv /work/venv-wheel-3.14
                 export JAVA_HOME=$jdk PATH=/work/venv-wheel-3.14/bin:$jdk/bin:\$PATH \
                   P4J_TOOLS_PYTHON=python3.14 P4J_WHEELS_WORK=/work/wheels
                 bash /work/src/python-binding/build_wheels.sh --pythons 3.14 --no-sdist \
                   --out /work/dist
                 rm -rf /tmp/wheel-venv && python3.14 -m venv /tmp/wheel-venv
                 /tmp/wheel-venv/bin/pip install -q --disable-pip-version-check --no-index /work/dist/*.whl
                 cd /tmp && /tmp/wheel-venv/bin/python /work/src/tests/typing/user_program.py" \
        || status=1
      continue ;;
  esac
  read -r -a a <<<"$args"
  reqs=/work/requirements-leg.txt
  [ "$leg" = py3.15 ] && reqs=/work/requirements-leg-3.15.txt
  echo "-- forky leg $leg: ${a[1]}, JDK $(basename "${a[2]}")"
  droot_run "bash /work/src/tests/ci/root_leg.sh ${a[0]} ${a[1]} ${a[2]} $reqs ${a[*]:3}" \
    || status=1
done
exit $status
