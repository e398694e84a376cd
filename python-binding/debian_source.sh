# python-binding/debian_source.sh: sourced by build_wheels.sh and tests/ci/bullseye_wheels.sh.
# debian_orig SUITE PACKAGE DIR: downloads the upstream tarball of Debian's source package
# PACKAGE in SUITE into DIR (once; later calls reuse it) and prints its path. apt-get
# fetches it with a private state directory (DIR/.apt), so the machine's apt sources are
# not touched and no root is needed; apt checks the files against the archive's signed
# index. The mirror is the first Debian one in the machine's apt sources (override:
# P4J_MIRROR). Exit status non-zero, with apt's message, when it cannot be fetched.
debian_orig() {
  local suite=$1 pkg=$2 dir=$3 mirror st found
  mkdir -p "$dir"
  found=$(ls "$dir/${pkg}_"*.orig.tar.* 2>/dev/null | grep -v '\.asc$' | head -n 1 || true)
  if [ -n "$found" ]; then echo "$found"; return 0; fi
  mirror=${P4J_MIRROR:-$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
                             /etc/apt/sources.list.d/*.sources 2>/dev/null \
                         | awk '/^URIs:/ {print $2} /^deb / {print ($2 ~ /^\[/) ? $3 : $2}' \
                         | grep -m1 -E '/debian/?$' || true)}
  mirror=${mirror:-http://deb.debian.org/debian}
  st="$dir/.apt/$suite"
  mkdir -p "$st/lists/partial" "$st/cache/archives/partial"
  echo "deb-src ${mirror%/} $suite main" > "$st/sources.list"
  local opts=(-o "Dir::Etc::SourceList=$st/sources.list" -o Dir::Etc::SourceParts=/nonexistent
              -o "Dir::State::Lists=$st/lists" -o "Dir::Cache=$st/cache"
              -o Debug::NoLocking=1 -o Acquire::Check-Valid-Until=false
              -o APT::Sandbox::User="$(id -un)")
  apt-get "${opts[@]}" update -qq >&2 || return 1
  (cd "$dir" && apt-get "${opts[@]}" source --download-only "$pkg" >/dev/null) || return 1
  rm -f "$dir/${pkg}_"*.dsc "$dir/${pkg}_"*.debian.tar.*
  ls "$dir/${pkg}_"*.orig.tar.* | grep -v '\.asc$' | head -n 1
}

# debian_dev SUITE ARCH DIR PACKAGE...: downloads Debian's binary packages PACKAGE... of
# ARCH (e.g. arm64) from SUITE and unpacks them all into DIR (once: DIR/.complete marks a
# finished unpack), the same private apt state as debian_orig; for the headers a cross
# build needs (libpython3.X-dev). Exit status non-zero when one cannot be fetched.
debian_dev() {
  local suite=$1 arch=$2 dir=$3 deb; shift 3
  [ -e "$dir/.complete" ] && return 0
  local mirror st
  mirror=${P4J_MIRROR:-$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
                             /etc/apt/sources.list.d/*.sources 2>/dev/null \
                         | awk '/^URIs:/ {print $2} /^deb / {print ($2 ~ /^\[/) ? $3 : $2}' \
                         | grep -m1 -E '/debian/?$' || true)}
  mirror=${mirror:-http://deb.debian.org/debian}
  st="$dir.apt"
  rm -rf "$dir" "$st"
  mkdir -p "$st/lists/partial" "$st/cache/archives/partial" "$st/debs" "$dir"
  echo "deb [arch=$arch] ${mirror%/} $suite main" > "$st/sources.list"
  local opts=(-o "APT::Architecture=$arch" -o "APT::Architectures=$arch"
              -o "Dir::Etc::SourceList=$st/sources.list" -o Dir::Etc::SourceParts=/nonexistent
              -o "Dir::State::Lists=$st/lists" -o "Dir::Cache=$st/cache"
              -o Dir::State::status=/dev/null -o Debug::NoLocking=1
              -o Acquire::Check-Valid-Until=false -o APT::Sandbox::User="$(id -un)")
  apt-get "${opts[@]}" update -qq >&2 || return 1
  (cd "$st/debs" && apt-get "${opts[@]}" download "$@" >/dev/null) || return 1
  for deb in "$st/debs"/*.deb; do dpkg-deb -x "$deb" "$dir" || return 1; done
  rm -rf "$st"
  touch "$dir/.complete"
}
