# tests/ci/debian_root.sh: cached Debian root filesystems for the matrix legs that need a
# Python, JDK or glibc this machine lacks (sourced by tests/ci/forky_legs.sh and
# tests/ci/bullseye_wheels.sh; not run on its own).
#
#   droot_prepare SUITE PACKAGE...   sets DROOT: a root filesystem of SUITE (debootstrap
#                                    minbase plus exactly PACKAGE...) for this machine's
#                                    architecture, or DROOT_ARCH's (e.g. arm64: then run
#                                    through qemu-user, see droot_foreign), made once and
#                                    kept in $P4J_ROOTS/SUITE[-ARCH]-<hash of suite,
#                                    architecture and package list>/
#                                    (P4J_ROOTS default /var/cache/py4jni-roots); a second
#                                    run with the same list reuses it, a changed list makes
#                                    a new one (older ones are deleted)
#   droot_mount WORKDIR              mounts proc, sys, dev, WORKDIR on /work and the shared
#                                    pip cache ($P4J_ROOTS/pip-cache) on /root/.cache/pip;
#                                    an EXIT trap unmounts them, also on failure or Ctrl-C
#   droot_bind DIR TARGET --bind     bind-mounts DIR on TARGET in the root (unmounted
#                                    with the others)
#   droot_run COMMAND                runs COMMAND with bash in the chroot (clean environment
#                                    plus this network's pip and proxy settings)
#   droot_skip REASON                prints "SKIPPED: REASON" and exits 77 (the matrix's
#                                    "skipped" status)
#   droot_foreign ARCH QEMU          lets this machine run ARCH's binaries: installs
#                                    qemu-user-static and binfmt-support when missing,
#                                    mounts binfmt_misc and enables QEMU's handler (e.g.
#                                    qemu-aarch64), or skips when the kernel refuses
#
# Needs root (the caller re-runs itself with sudo) and debootstrap (installed with apt
# when missing). The mirror is the first Debian one in this machine's apt sources
# (override: P4J_MIRROR); it is probed first, and an unreachable archive, a missing
# debootstrap or no root make the leg SKIPPED with the reason, never failed. A mirror that
# serves an expired Release file (a frozen snapshot or caching proxy) is accepted: the
# roots are test machines, not installations.

P4J_ROOTS=${P4J_ROOTS:-/var/cache/py4jni-roots}
DROOT=""
DROOT_ARCH=${DROOT_ARCH:-}
_droot_mounts=()

droot_say() { echo "debian_root: $*" >&2; }

droot_skip() {
  echo "SKIPPED: $*"
  exit 77
}

# The Debian mirror this machine uses (apt sources), else deb.debian.org.
droot_mirror() {
  if [ -z "${P4J_MIRROR:-}" ]; then
    P4J_MIRROR=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
                     /etc/apt/sources.list.d/*.sources 2>/dev/null \
                 | awk '/^URIs:/ {print $2} /^deb / {print ($2 ~ /^\[/) ? $3 : $2}' \
                 | grep -m1 -E '/debian/?$' || true)
    P4J_MIRROR=${P4J_MIRROR:-http://deb.debian.org/debian}
  fi
  echo "${P4J_MIRROR%/}"
}

# droot_check SUITE: skips (exit 77) when this machine cannot make a root of SUITE.
droot_check() {
  local suite=$1 mirror
  [ "$(id -u)" -eq 0 ] || droot_skip "not root (a chroot needs root; no sudo here)"
  mirror=$(droot_mirror)
  if ! command -v debootstrap >/dev/null; then
    droot_say "installing debootstrap"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; } 2>&1 \
      || droot_skip "debootstrap is not installed and apt could not install it"
  fi
  if command -v curl >/dev/null; then
    curl -fs --max-time 30 -o /dev/null "$mirror/dists/$suite/Release" 2>/dev/null \
      || droot_skip "the Debian archive $mirror has no reachable $suite suite"
  elif command -v python3 >/dev/null; then
    python3 - "$mirror/dists/$suite/Release" <<'EOF' \
      || droot_skip "the Debian archive $mirror has no reachable $suite suite"
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=30).read(1)
EOF
  fi
}

# The debootstrap script for SUITE: suites newer than this debootstrap knows use sid's.
_droot_script() {
  if [ -e "/usr/share/debootstrap/scripts/$1" ]; then echo "/usr/share/debootstrap/scripts/$1"
  else echo /usr/share/debootstrap/scripts/sid; fi
}

# Writes into root filesystem $1 what Debian's installer would and debootstrap does not,
# and this network's settings (resolv.conf, the extra CA certificates of an egress proxy).
_droot_configure() {
  local r=$1
  printf '#!/bin/sh\nexit 101\n' > "$r/usr/sbin/policy-rc.d"   # no daemons start
  chmod +x "$r/usr/sbin/policy-rc.d"
  printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
    "$(hostname)" > "$r/etc/hosts"
  cp -L /etc/resolv.conf "$r/etc/resolv.conf"
  printf 'Acquire::Check-Valid-Until "false";\nAPT::Install-Recommends "false";\n' \
    > "$r/etc/apt/apt.conf.d/90py4jni"
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    mkdir -p "$r/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$r/usr/local/share/ca-certificates/"
  fi
}

droot_foreign() {
  local arch=$1 qemu=$2
  [ "$(id -u)" -eq 0 ] || droot_skip "not root (a chroot needs root; no sudo here)"
  if ! command -v update-binfmts >/dev/null || [ ! -x "/usr/bin/$qemu-static" ]; then
    droot_say "installing qemu-user-static and binfmt-support"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends qemu-user-static binfmt-support >/dev/null; } 2>&1 \
      || droot_skip "qemu-user-static could not be installed"
  fi
  if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null \
      || droot_skip "binfmt_misc cannot be mounted (the kernel has no binfmt_misc)"
  fi
  update-binfmts --enable "$qemu" >/dev/null 2>&1 || true
  grep -q '^enabled' "/proc/sys/fs/binfmt_misc/$qemu" 2>/dev/null \
    || droot_skip "the kernel did not take QEMU's $arch handler ($qemu)"
}

droot_prepare() {
  local suite=$1; shift
  local mirror key tarball tmp name=$suite arch_opt=()
  droot_check "$suite"
  mirror=$(droot_mirror)
  if [ -n "$DROOT_ARCH" ]; then name="$suite-$DROOT_ARCH"; arch_opt=(--arch="$DROOT_ARCH"); fi
  key=$(printf '%s\n' "$suite" ${DROOT_ARCH:+"$DROOT_ARCH"} "$@" | sort | sha256sum | cut -c1-12)
  DROOT="$P4J_ROOTS/$name-$key"
  mkdir -p "$P4J_ROOTS"
  if [ -e "$DROOT/.complete" ]; then
    _droot_configure "$DROOT"   # the network's settings may have changed since
    droot_say "reusing $DROOT"
    return 0
  fi
  tarball="$P4J_ROOTS/$name-minbase.tgz"
  if [ ! -s "$tarball" ]; then
    droot_say "downloading $suite (minbase) from $mirror into $tarball"
    tmp=$(mktemp -d "$P4J_ROOTS/mk.XXXXXX")
    debootstrap "${arch_opt[@]}" --variant=minbase --include=ca-certificates \
        --make-tarball="$tarball.part" "$suite" "$tmp" "$mirror" "$(_droot_script "$suite")" \
        >"$P4J_ROOTS/$name-debootstrap.log" 2>&1 \
      || { rm -rf "$tmp"; droot_skip "debootstrap could not fetch $suite from $mirror (see $P4J_ROOTS/$name-debootstrap.log)"; }
    mv "$tarball.part" "$tarball"
    rm -rf "$tmp"
  fi
  droot_say "making $DROOT: $suite${DROOT_ARCH:+ ($DROOT_ARCH)} minbase + $*"
  rm -rf "$DROOT.part"
  debootstrap "${arch_opt[@]}" --variant=minbase --include=ca-certificates \
      --unpack-tarball="$tarball" "$suite" "$DROOT.part" "$mirror" "$(_droot_script "$suite")" \
      >/dev/null
  _droot_configure "$DROOT.part"
  echo "deb $mirror $suite main" > "$DROOT.part/etc/apt/sources.list"
  DROOT="$DROOT.part"
  droot_mount ""
  droot_run "update-ca-certificates >/dev/null 2>&1; apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $* >/dev/null \
    && apt-get clean"
  droot_umount
  DROOT="${DROOT%.part}"
  # Older roots of this suite (another package list) are replaced.
  local old
  for old in "$P4J_ROOTS/$name"-????????????; do
    [ -d "$old" ] && [ "$old" != "$DROOT" ] && ! findmnt -rn -o TARGET | grep -q "^$old/" \
      && rm -rf "$old"
  done
  mv "$DROOT.part" "$DROOT"
  touch "$DROOT/.complete"
}

droot_umount() {
  local i
  for ((i = ${#_droot_mounts[@]} - 1; i >= 0; i--)); do
    umount -R "${_droot_mounts[i]}" 2>/dev/null || umount -R -l "${_droot_mounts[i]}" 2>/dev/null || true
  done
  _droot_mounts=()
}

droot_bind() {
  local src=$1 dst="$DROOT$2"; shift 2
  mkdir -p "$dst"
  mount "$@" "$src" "$dst"
  _droot_mounts+=("$dst")
}

droot_mount() {
  local work=$1
  trap droot_umount EXIT
  trap 'exit 130' INT TERM
  mount -t proc proc "$DROOT/proc"; _droot_mounts+=("$DROOT/proc")
  mount -t sysfs sysfs "$DROOT/sys"; _droot_mounts+=("$DROOT/sys")
  mount --rbind /dev "$DROOT/dev"; _droot_mounts+=("$DROOT/dev")
  mount --make-rslave "$DROOT/dev"
  mkdir -p "$P4J_ROOTS/pip-cache"
  droot_bind "$P4J_ROOTS/pip-cache" /root/.cache/pip --bind
  [ -n "$work" ] && droot_bind "$work" /work --bind
  return 0
}

droot_run() {
  local pass_env=() v
  [ -e "$DROOT/usr/local/share/ca-certificates" ] \
    && compgen -G "$DROOT/usr/local/share/ca-certificates/*.crt" >/dev/null \
    && pass_env+=(PIP_CERT=/etc/ssl/certs/ca-certificates.crt)
  for v in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_DEFAULT_TIMEOUT http_proxy https_proxy no_proxy; do
    [ -n "${!v:-}" ] && pass_env+=("$v=${!v}")
  done
  chroot "$DROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${pass_env[@]}" \
      bash -c "$1"
}
