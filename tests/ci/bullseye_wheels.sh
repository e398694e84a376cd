#!/usr/bin/env bash
# tests/ci/bullseye_wheels.sh: the release wheels on a Linux older than the build host. Each
# manylinux wheel in DIST (python-binding/build_wheels.sh's output) is installed, with
# pip and no index, into a fresh venv in a Debian 11 (bullseye: glibc 2.31) root
# filesystem whose only JVM is bullseye's OpenJDK 11 JRE (the oldest supported), and runs
# the smoke program tests/typing/user_program.py there (a gateway, calls, collections, a
# callback), from a directory outside the source tree.
# Bullseye's python3.9 is older than the supported range, so the CPythons are built in
# the root from the upstream tarballs of Debian's own source packages (3.11 from bookworm,
# 3.13 from trixie, 3.14 from forky; fetched by python-binding/debian_source.sh), once:
# they are kept in /var/cache/py4jni-roots/bullseye-cpython/ and reused. A wheel for a
# CPython with no source package in those suites (3.10, 3.12), or whose source the
# archive does not serve (this project's mirror lists forky's python3.14 source but
# answers 404 for its files), is reported SKIPPED.
#
#   bash tests/ci/bullseye_wheels.sh DIST
#
# Needs root (re-runs itself with sudo when there is one). Exit status: 0 passed, 77
# skipped (no root, debootstrap or archive; the reason printed as "SKIPPED: ..."), else
# failed (a wheel that does not install or whose smoke program fails).
set -euo pipefail
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then
  exec sudo -E bash "$0" "$@"
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$ROOT/tests/ci/debian_root.sh"
source "$ROOT/tests/ci/wheel_natives.sh"
source "$ROOT/python-binding/debian_source.sh"
(($# == 1)) || { echo "usage: $0 DIST" >&2; exit 2; }
DIST=$(cd "$1" && pwd)

# To build CPython (zlib for ensurepip's wheels, xz for the tarballs) and the JRE.
PACKAGES=(gcc make libc6-dev zlib1g-dev xz-utils openjdk-11-jre-headless)
declare -A SOURCE=([3.11]=bookworm [3.13]=trixie [3.14]=forky)

wheels=("$DIST"/py4jni-*-cp3*-manylinux*_x86_64.whl)
[ -e "${wheels[0]}" ] || { echo "no manylinux x86_64 wheel in $DIST" >&2; exit 1; }
droot_prepare bullseye "${PACKAGES[@]}"

CPY="$P4J_ROOTS/bullseye-cpython"
WORK="$ROOT/build/matrix/bullseye"
rm -rf "$WORK"; mkdir -p "$WORK/wheels" "$CPY/src"
cp "${wheels[@]}" "$WORK/wheels/"
cp "$ROOT/tests/typing/user_program.py" "$WORK/"
wheel_natives_prepare "$WORK"
droot_mount "$WORK"
droot_bind "$CPY" /opt/cpython --bind

status=0
for whl in "${wheels[@]}"; do
  name=$(basename "$whl")
  tag=${name#*-*-cp3}; v="3.${tag%%-*}"
  if [[ $name == *-cp3*t-manylinux* ]]; then
    echo "   SKIPPED $name: a free-threaded wheel (bullseye gets no free-threaded CPython here)"
    continue
  fi
  if [ -z "${SOURCE[$v]:-}" ]; then
    echo "   SKIPPED $name: no CPython $v source package in Debian's bookworm, trixie or forky"
    continue
  fi
  if [ ! -e "$CPY/$v/.complete" ]; then
    tarball=$(debian_orig "${SOURCE[$v]}" "python$v" "$CPY/src") \
      || { echo "   SKIPPED $name: the archive does not serve Debian's python$v source (${SOURCE[$v]})"
           continue; }
    echo "   building CPython $v from $(basename "$tarball") in bullseye (once; kept in $CPY/$v)"
    start=$SECONDS
    droot_run "set -e; rm -rf /tmp/cpython /opt/cpython/$v && mkdir /tmp/cpython && cd /tmp/cpython
      tar -xf /opt/cpython/src/$(basename "$tarball") --strip-components=1
      ./configure -q --prefix=/opt/cpython/$v >/dev/null
      nice make -j2 -s >/tmp/cpython-build.log 2>&1 || { tail -n 30 /tmp/cpython-build.log; exit 1; }
      make -s altinstall >/dev/null 2>&1
      rm -rf /tmp/cpython && touch /opt/cpython/$v/.complete" \
      || { echo "   FAILED: CPython $v did not build"; status=1; continue; }
    echo "   CPython $v built in $((SECONDS - start)) s"
  fi
  echo "   $name on bullseye:"
  droot_run "set -e; rm -rf /tmp/venv; /opt/cpython/$v/bin/python$v -m venv /tmp/venv
    /tmp/venv/bin/pip install -q --disable-pip-version-check --no-index /work/wheels/$name
    cd /tmp && /tmp/venv/bin/python -c 'import platform, sys; print(\"   \", sys.version.split()[0], platform.libc_ver())'
    java -version 2>&1 | head -n 1 | sed 's/^/    /'
    /tmp/venv/bin/python /work/user_program.py
    if [ -e /work/fixtures.jar ]; then /tmp/venv/bin/python -c '$NATIVES'; fi" \
    || { echo "   FAILED: $name"; status=1; }
done
exit $status
