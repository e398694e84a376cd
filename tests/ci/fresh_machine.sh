#!/usr/bin/env bash
# tests/ci/fresh_machine.sh: the release check "both README commands pass on a fresh Debian 12".
# Builds a throwaway Debian 12 (bookworm) root filesystem with debootstrap (minbase: no
# compiler, no Python, no JDK), copies a clean clone of this repository's HEAD into it,
# and runs, as root in a chroot, exactly the README's commands:
#     bash perf/run.sh --quick      then      bash tests/run_all.sh
# Every package they need must therefore be installed by the scripts themselves.
#
#   bash tests/ci/fresh_machine.sh [--keep] [--only perf|tests]
#
# Needs root (re-runs itself with sudo) and network access to a Debian mirror and PyPI.
# The mirror is the first Debian one in this machine's apt sources (override: P4J_MIRROR).
# The packages debootstrap fetches are cached in /var/cache/py4jni-fresh/ so that reruns
# only unpack them. The machine's own network settings are carried in, as a fresh machine
# on the same network would have them: resolv.conf, extra CA certificates from
# /usr/local/share/ca-certificates (an egress proxy's), and PIP_CERT/PIP_INDEX_URL/proxies.
# The chroot's mounts (proc, sys, dev) are removed on exit, also on failure or Ctrl-C,
# and the root filesystem deleted unless --keep. Exit status: non-zero if a command failed.
set -euo pipefail

keep=0; only=""
while (($#)); do
  case "$1" in
    --keep) keep=1 ;;
    --only) only=$2; shift ;;
    *) echo "usage: $0 [--keep] [--only perf|tests]" >&2; exit 2 ;;
  esac
  shift
done
if [ "$(id -u)" -ne 0 ]; then
  exec sudo -E bash "$0" "$@"
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
REV=$(git -C "$ROOT" rev-parse HEAD)
SUITE=bookworm
CACHE=/var/cache/py4jni-fresh
TARBALL="$CACHE/$SUITE-minbase.tgz"
say() { echo "fresh_machine: $*" >&2; }

if [ -z "${P4J_MIRROR:-}" ]; then
  P4J_MIRROR=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
                   /etc/apt/sources.list.d/*.sources 2>/dev/null \
               | awk '/^URIs:/ {print $2} /^deb / {print ($2 ~ /^\[/) ? $3 : $2}' \
               | grep -m1 -E '/debian/?$' || true)
  P4J_MIRROR=${P4J_MIRROR:-http://deb.debian.org/debian}
fi

command -v debootstrap >/dev/null || {
  say "installing debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
}

mkdir -p "$CACHE"
# ca-certificates: a Debian 12 machine has it (pip and apt over https need it).
INCLUDE=ca-certificates
if [ ! -s "$TARBALL" ]; then
  say "downloading $SUITE (minbase) from $P4J_MIRROR into $TARBALL"
  tmp=$(mktemp -d "$CACHE/mk.XXXXXX")
  debootstrap --variant=minbase --include="$INCLUDE" --make-tarball="$TARBALL.part" \
      "$SUITE" "$tmp" "$P4J_MIRROR" >/dev/null
  mv "$TARBALL.part" "$TARBALL"
  rm -rf "$tmp"
fi

WORK=$(mktemp -d /var/tmp/py4jni-fresh.XXXXXX)
rootfs="$WORK/rootfs"
mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount -R "${mounts[i]}" 2>/dev/null || umount -R -l "${mounts[i]}" 2>/dev/null || true
  done
  if findmnt -rn -o TARGET | grep -q "^$rootfs/"; then
    say "mounts remain under $rootfs: not deleting it"
  elif ((keep)); then
    say "root filesystem kept in $rootfs"
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "unpacking a fresh $SUITE into $rootfs"
mkdir -p "$rootfs"
debootstrap --variant=minbase --include="$INCLUDE" --unpack-tarball="$TARBALL" \
    "$SUITE" "$rootfs" "$P4J_MIRROR" >/dev/null
printf '#!/bin/sh\nexit 101\n' > "$rootfs/usr/sbin/policy-rc.d"   # no daemons start
chmod +x "$rootfs/usr/sbin/policy-rc.d"

# What Debian's installer writes and debootstrap does not: /etc/hosts (localhost, and the
# machine's own name on 127.0.1.1, which Java's InetAddress.getLocalHost resolves).
printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
  "$(hostname)" > "$rootfs/etc/hosts"
# This network's settings, as a fresh machine on it would have them.
cp -L /etc/resolv.conf "$rootfs/etc/resolv.conf"
pass_env=()
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
  chroot "$rootfs" update-ca-certificates >/dev/null 2>&1
  pass_env+=(PIP_CERT=/etc/ssl/certs/ca-certificates.crt)
fi
for v in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_DEFAULT_TIMEOUT http_proxy https_proxy no_proxy; do
  [ -n "${!v:-}" ] && pass_env+=("$v=${!v}")
done

say "cloning $REV into /root/py4jni"
git clone -q --no-hardlinks "$ROOT" "$rootfs/root/py4jni"
git -C "$rootfs/root/py4jni" checkout -q --detach "$REV"

mount -t proc proc "$rootfs/proc"; mounts+=("$rootfs/proc")
mount -t sysfs sysfs "$rootfs/sys"; mounts+=("$rootfs/sys")
mount --rbind /dev "$rootfs/dev"; mounts+=("$rootfs/dev")
mount --make-rslave "$rootfs/dev"

in_chroot() {
  chroot "$rootfs" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${pass_env[@]}" \
      bash -c "cd /root/py4jni && $1"
}

status=0
declare -A result
for cmd in "bash perf/run.sh --quick" "bash tests/run_all.sh"; do
  case "$only:$cmd" in perf:*tests*|tests:*perf*) continue ;; esac
  say "== $cmd"
  start=$SECONDS
  if in_chroot "$cmd"; then result[$cmd]="passed"; else result[$cmd]="FAILED (exit $?)"; status=1; fi
  # perf/run.sh carries on without py4jni when `pip install .` fails (its columns then
  # say "not installed"): on a fresh machine that is a failure too.
  if [[ $cmd == *perf* && ${result[$cmd]} == passed ]] \
     && ! in_chroot "cd /tmp && /root/py4jni/.venv/bin/python -c 'import py4jni._py4jni'"; then
    result[$cmd]="FAILED (py4jni was not installed: see perf/.build/run.log)"; status=1
  fi
  result[$cmd]+=" in $((SECONDS - start)) s"
done
say "Debian $SUITE minbase, clean clone of $REV:"
for cmd in "${!result[@]}"; do say "  $cmd: ${result[$cmd]}"; done
exit $status
