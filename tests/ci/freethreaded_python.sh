#!/usr/bin/env bash
# tests/ci/freethreaded_python.sh: a free-threaded CPython (./configure --disable-gil) for
# the matrix's py-ft leg (tests/ci/run_matrix.sh), built once from the newest Debian
# python3.X source package (3.14, 3.15, then 3.13) whose files the archive actually serves
# (its Sources index may name a version its pool no longer holds: each listed version is
# tried), fetched with `apt-get source` through a private apt configuration (this
# machine's own sources are left alone). Debian has no free-threaded CPython package.
# The build is kept in $P4J_ROOTS/cpython-<version>t/ (P4J_ROOTS default
# /var/cache/py4jni-roots, as the chroots' roots); a second run reuses the newest one there.
#
#   bash tests/ci/freethreaded_python.sh      prints the interpreter's path on stdout
#
# Exit status: 0, or 77 with "SKIPPED: reason" on stdout (no apt, no source served, the
# build failed), which the matrix reports as a skipped leg. Build log beside the cache.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$ROOT/tests/ci/debian_root.sh"   # droot_mirror, droot_skip, P4J_ROOTS
say() { echo "freethreaded_python: $*" >&2; }

# The newest complete build, in version order (3.14.7t over 3.13.15t, which a plain
# glob lists first; an unfinished build has no .complete and is passed over).
newest=$(printf '%s\n' "$P4J_ROOTS"/cpython-*t/.complete | sort -V | tail -n 1)
if [ -e "$newest" ]; then
  ls "$(dirname "$newest")"/bin/python3.*t | head -n 1
  exit 0
fi
command -v apt-get >/dev/null || droot_skip "no apt-get to fetch Debian's CPython source"
# What the build needs (--no-install-recommends, as setup_env.sh): a compiler, zlib for
# ensurepip's wheels, OpenSSL for pip, libffi for ctypes.
source "$ROOT/tests/ci/steps.sh"
need=()
for pkg in gcc make libc6-dev pkg-config zlib1g-dev libssl-dev libffi-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if ((${#need[@]})); then
  p4j_apt_install "${need[@]}" >&2 || droot_skip "cannot install ${need[*]} to build CPython"
fi
mirror=$(droot_mirror)
work=$(mktemp -d /tmp/py4jni-ftsrc.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
printf 'deb-src %s %s main\n' "$mirror" forky "$mirror" sid "$mirror" experimental \
  > "$work/sources.list"
APT=(-o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
     -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache"
     -o Acquire::Check-Valid-Until=false -o APT::Sandbox::User=root)
apt-get "${APT[@]}" update -qq >/dev/null 2>&1 || droot_skip "apt could not read $mirror's source indexes"
got=""
for pkg in python3.14 python3.15 python3.13; do
  for v in $(apt-cache "${APT[@]}" showsrc "$pkg" 2>/dev/null | awk '/^Version:/ {print $2}' | sort -rV -u); do
    if (cd "$work/src" && apt-get "${APT[@]}" source --download-only -qq "$pkg=$v" >/dev/null 2>&1); then
      got="$pkg $v"; break 2
    fi
    say "$pkg $v: listed, but the archive does not serve its files"
    rm -f "$work/src"/*
  done
done
[ -n "$got" ] || droot_skip "Debian's archive serves no python3.13/3.14/3.15 source (listed versions 404)"
read -r pkg v <<<"$got"
upstream=${v%%-*}
say "building CPython $upstream (Debian's $pkg $v) with --disable-gil (a few minutes)"
prefix="$P4J_ROOTS/cpython-${upstream}t"
log="$P4J_ROOTS/cpython-${upstream}t.log"
mkdir -p "$P4J_ROOTS"
rm -rf "$prefix"
tar -xf "$work/src/${pkg}_${upstream}.orig.tar."* -C "$work/src"
(cd "$work/src/Python-$upstream" \
   && ./configure --disable-gil --prefix="$prefix" --with-ensurepip=install \
   && make -j2 && make install) >"$log" 2>&1 \
  || droot_skip "the free-threaded CPython $upstream did not build (see $log)"
touch "$prefix/.complete"
ls "$prefix"/bin/python3.*t | head -n 1
