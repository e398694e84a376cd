#!/usr/bin/env bash
# tests/ci/arm64_wheels.sh: the aarch64 release wheels run on aarch64, emulated. The
# manylinux aarch64 wheel for CPython 3.11 in DIST (python-binding/build_wheels.sh
# --arch aarch64) is installed, with pip and no index, into a fresh venv in a Debian 12
# arm64 root filesystem (python3 3.11, OpenJDK 17's JRE), which runs on this x86_64
# machine through qemu-user (binfmt_misc); there it runs the smoke program
# tests/typing/user_program.py and a register_natives call (the aarch64 libffi linked
# into the wheel). The other versions' aarch64 wheels are built and checked by
# auditwheel, not run: Debian 12 has no other CPython, and building one under emulation
# would take too long. The root is made once (debootstrap's second stage runs
# emulated) and cached like the others (tests/ci/debian_root.sh).
#
#   bash tests/ci/arm64_wheels.sh DIST
#
# Needs root (re-runs itself with sudo when there is one). Exit status: 0 passed, 77
# skipped (no root, debootstrap, archive, or qemu-user/binfmt_misc; the reason printed as
# "SKIPPED: ..."), else failed.
set -euo pipefail
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then
  exec sudo -E bash "$0" "$@"
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$ROOT/tests/ci/debian_root.sh"
source "$ROOT/tests/ci/wheel_natives.sh"
(($# == 1)) || { echo "usage: $0 DIST" >&2; exit 2; }
DIST=$(cd "$1" && pwd)

whl=$(ls "$DIST"/py4jni-*-cp311-*manylinux*_aarch64.whl 2>/dev/null | head -n 1 || true)
[ -n "$whl" ] || { echo "no CPython 3.11 manylinux aarch64 wheel in $DIST" >&2; exit 1; }
droot_foreign arm64 qemu-aarch64
DROOT_ARCH=arm64
droot_prepare bookworm python3 python3-venv openjdk-17-jre-headless

WORK="$ROOT/build/matrix/arm64"
rm -rf "$WORK"; mkdir -p "$WORK"
cp "$whl" "$ROOT/tests/typing/user_program.py" "$WORK/"
wheel_natives_prepare "$WORK"
droot_mount "$WORK"
name=$(basename "$whl")
echo "   $name on arm64 (qemu-user):"
start=$SECONDS
droot_run "set -e; rm -rf /tmp/venv; python3 -m venv /tmp/venv
  /tmp/venv/bin/pip install -q --disable-pip-version-check --no-index /work/$name
  cd /tmp && /tmp/venv/bin/python -c 'import platform, sys; print(\"   \", platform.machine(), sys.version.split()[0], platform.libc_ver())'
  java -version 2>&1 | head -n 1 | sed 's/^/    /'
  /tmp/venv/bin/python /work/user_program.py
  if [ -e /work/fixtures.jar ]; then /tmp/venv/bin/python -c '$NATIVES'; fi" \
  || { echo "   FAILED: $name"; exit 1; }
echo "   arm64 smoke test: $((SECONDS - start)) s"
